"""A dataset folder's splits and their data files, found as ``datasets`` finds them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats.huggingface.card import CARD, Card, read_card
from blueprint.formats.mapping import NAMESPACE

#: the split a row without one goes to
DEFAULT_SPLIT: Final = "test"
DATA_FOLDER: Final = "data"
#: the split names ``datasets`` accepts
SPLIT_NAME: Final = re.compile(r"^\w+(\.\w+)*$")
#: what a folder's data files may be, by suffix
_JSON_SUFFIXES: Final = (".jsonl", ".json", ".ndjson")
_PARQUET_SUFFIXES: Final = (".parquet",)
#: the names ``datasets`` recognises a split by in a file's path, when no card declares them
SPLIT_KEYWORDS: Final = {
    "train": ("train", "training"),
    "validation": ("validation", "valid", "dev", "val"),
    "test": ("test", "testing", "eval", "evaluation"),
}


#: the config of a folder whose card declares none, as ``datasets`` names it
DEFAULT_CONFIG: Final = "default"


@dataclass
class Layout:
    """What a folder holds: its configs (subsets), each with its splits and their files, and
    what the card says of them."""

    #: every config the card declares, in its order, each with its splits and their files;
    #: one config, ``default``, for a folder whose card declares none
    configs: dict[str, dict[str, list[Path]]]
    card: Card | None
    #: the columns Blueprint wrote as JSON text, by config (see :meth:`json_columns_of`)
    json_columns: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def several(self) -> bool:
        """Whether the card declares more than one config."""
        return len(self.configs) > 1

    @property
    def splits(self) -> dict[str, list[Path]]:
        """The splits of a folder of one config (the first config's, where it has several)."""
        return next(iter(self.configs.values()))

    def files(self) -> list[Path]:
        return [file for splits in self.configs.values() for f in splits.values() for file in f]

    def json_columns_of(self, config: str) -> frozenset[str]:
        return self.json_columns.get(config, self.json_columns.get("", frozenset()))


def _inside(folder: Path, pattern: str, card: Path) -> list[Path]:
    if not isinstance(pattern, str) or not pattern:
        raise ParseError(card, f"a data_files path is not text: {pattern!r}")
    if pattern.startswith(("/", "\\")) or ".." in Path(pattern).parts or "://" in pattern:
        raise ParseError(card, f"the data file {pattern!r} is outside the dataset folder")
    root = folder.resolve()
    found = sorted(
        path
        for path in folder.glob(pattern)
        if path.is_file() and path.resolve().is_relative_to(root)
    )
    if not found:
        raise ParseError(card, f"the data file {pattern!r} the card names is not in the folder")
    return found


def _declared_splits(folder: Path, data_files: Any, card: Path) -> dict[str, list[Path]]:
    splits: dict[str, list[Path]] = {}
    if isinstance(data_files, str | list) and not (
        isinstance(data_files, list) and data_files and isinstance(data_files[0], dict)
    ):
        patterns = [data_files] if isinstance(data_files, str) else data_files
        return {"train": [p for pattern in patterns for p in _inside(folder, pattern, card)]}
    if isinstance(data_files, dict):
        data_files = [{"split": key, "path": value} for key, value in data_files.items()]
    if not isinstance(data_files, list):
        raise ParseError(card, "configs: data_files is neither a path, a list nor a split list")
    for entry in data_files:
        if not isinstance(entry, dict) or "path" not in entry:
            raise ParseError(card, "configs: each data_files entry has a split and a path")
        split = str(entry.get("split", "train"))
        paths = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
        files = splits.setdefault(split, [])
        files += [p for pattern in paths for p in _inside(folder, pattern, card)]
    return splits


def _data_file(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith(_JSON_SUFFIXES + _PARQUET_SUFFIXES)


def _inferred_splits(folder: Path) -> dict[str, list[Path]]:
    """The splits ``datasets`` finds by file name in a folder whose card declares none."""
    files = [
        path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and _data_file(path)
        and not any(part.startswith((".", "_")) for part in path.relative_to(folder).parts)
    ]
    splits: dict[str, list[Path]] = {}
    for path in files:
        words = set(re.split(r"[-._ /0-9]+", path.relative_to(folder).as_posix().lower()))
        split = next((name for name, keys in SPLIT_KEYWORDS.items() if words & set(keys)), None)
        splits.setdefault(split or "", []).append(path)
    if "" in splits and len(splits) > 1:
        # files that name no split: datasets reads only the ones that do
        splits.pop("")
    if "" in splits:
        splits["train"] = splits.pop("")
    # in the order datasets lists them: train, validation, test
    return {name: splits[name] for name in SPLIT_KEYWORDS if name in splits}


def layout_of(folder: Path) -> Layout:
    """The splits and data files of a dataset folder, as ``datasets`` would find them."""
    if not folder.exists():
        raise ParseError(folder, "no such folder")
    if not folder.is_dir():
        raise ParseError(
            folder, "a Hugging Face dataset is a folder (with README.md and data files)"
        )
    card = read_card(folder)
    card_path = folder / CARD
    configs = card.meta.get("configs") if card is not None else None
    layout = Layout({}, card)
    if configs is not None:
        if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
            raise ParseError(card_path, "configs is a list of configurations")
        # every config is read, each a subset of the set's rows: none is skipped unsaid
        for config in configs:
            name = config.get("config_name", DEFAULT_CONFIG)
            if not isinstance(name, str) or not name:
                raise ParseError(card_path, f"a config's config_name is not text: {name!r}")
            if name in layout.configs:
                raise ParseError(card_path, f"the card declares the config {name!r} twice")
            if "data_files" not in config:
                raise ParseError(card_path, f"the config {name!r} names no data_files")
            layout.configs[name] = _declared_splits(folder, config["data_files"], card_path)
    if not layout.configs:
        splits = _inferred_splits(folder)
        if splits:
            layout.configs[DEFAULT_CONFIG] = splits
    if not layout.configs:
        raise ParseError(folder, "the folder holds no data files (JSON Lines or Parquet)")
    ours = card.meta.get(NAMESPACE) if card is not None else None
    written = ours.get("jsonColumns") if isinstance(ours, dict) else None
    if isinstance(written, list):  # one list for every config ("": any config)
        layout.json_columns[""] = frozenset(str(name) for name in written)
    elif isinstance(written, dict):  # a list for each config
        for config, names in written.items():
            if isinstance(names, list):
                layout.json_columns[str(config)] = frozenset(str(name) for name in names)
    return layout


def split_name(value: Any) -> str:
    """The split a row's ``split`` goes to: the name itself when ``datasets`` accepts it, else
    the name with what it refuses replaced; the default split for anything that is not text."""
    if not isinstance(value, str) or not value:
        return DEFAULT_SPLIT
    name = value if SPLIT_NAME.match(value) else re.sub(r"[^\w.]+", "_", value)
    name = re.sub(r"\.{2,}", ".", name).strip(".")
    if not SPLIT_NAME.match(name) or name.lower() == "all":
        return DEFAULT_SPLIT
    return name
