"""A promptfoo config written back where it was read: its ``tests: file://...`` references kept,
and the tests files they name edited in place when their tests were edited."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blueprint.core.errors import ParseError
from blueprint.formats import native
from blueprint.formats._io import read_text
from blueprint.formats.promptfoo.config import References, tests_and_origins
from blueprint.formats.promptfoo.prompts import maybe_file
from blueprint.formats.yaml12 import date_paths


@dataclass(frozen=True)
class Unkept:
    """Why a config cannot keep its ``tests: file://...`` references: its tests go inline."""

    reason: str


def references_kept(
    text: str,
    head: dict[str, Any],
    pairs: list[tuple[dict[str, Any], dict[str, Any]]],
    path: Path,
    *,
    elsewhere: bool = False,
) -> str | Unkept:
    """The config's text, its ``tests: file://...`` references kept, when the files they
    name beside ``path`` hold the tests to write, unedited: only the config is written.
    ``elsewhere``: the config is written in another folder than ``path``'s, where promptfoo
    reads the ``file://`` names of those files' tests from (so none may have one)."""
    from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

    document = yamlkeep.document_of(text)
    if not isinstance(document, dict):
        return Unkept("the config's kept text no longer reads as a config")
    tests = document.get("tests")
    named = tests if isinstance(tests, list) else [tests]
    if not any(isinstance(entry, str) for entry in named):
        return Unkept("the config names no tests file")
    # an export to another folder leaves the files the config names as they are: the
    # config read where it was still names them
    left = (
        "; written in another folder, the config leaves the files it names as they are"
        " (written back where it was read, with --force, it edits them)"
        if elsewhere
        else ""
    )
    edited = [number for number, pair in enumerate(pairs, 1) if not native.same(*pair)]
    if edited:
        # a test carries Blueprint's bookkeeping: the files would not say it
        return Unkept(
            f"{_tests(edited)} carry Blueprint's own key (their rows were edited), which the"
            f" files it names do not hold{left}"
        )
    try:
        there, origins = tests_and_origins(path, document)
    except ParseError as error:
        where = ", where the set says it was read" if elsewhere else ""
        return Unkept(f"the files it names cannot be read beside {path}{where}: {error}")
    records = [plain for plain, _ in pairs]
    if len(there) != len(records):
        return Unkept(
            f"the set has {len(records)} tests where the config and the files it names"
            f" hold {len(there)}: tests were added or removed{left}"
        )
    differ = [
        number
        for number, (test, record) in enumerate(zip(there, records, strict=True), 1)
        if not native.same(test, record) or date_paths(test) != date_paths(record)
    ]
    if differ:
        return Unkept(f"{_tests(differ)} no longer read as the files beside {path} hold them{left}")
    loaded: dict[str, str] = {}
    for index, origin in origins.items() if elsewhere else ():
        for name in file_names(there[index])[:1]:
            loaded.setdefault(os.path.relpath(origin, path.parent), name)
    if loaded:
        listed = ", ".join(f"{file} ({name})" for file, name in sorted(loaded.items()))
        return Unkept(
            f"tests in {listed} name files by file:// names, which promptfoo reads from the"
            " config's folder: written in another folder, the config holds those tests"
            " itself, with the names rewritten"
        )
    kept = yamlkeep.with_head(text, "tests", head)
    if kept is None:
        return Unkept("the config's keys around its tests could not be edited in place")
    return kept


def _tests(numbers: list[int]) -> str:
    shown = ", ".join(str(number) for number in numbers[:5])
    more = f" and {len(numbers) - 5} more" if len(numbers) > 5 else ""
    return f"test{'s' if len(numbers) > 1 else ''} {shown}{more}"


def file_names(value: Any) -> list[str]:
    """The relative ``file://`` names anywhere in a value (which promptfoo reads from the
    config's folder, whichever file the value is written in)."""
    if isinstance(value, dict):
        return [name for item in value.values() for name in file_names(item)]
    if isinstance(value, list):
        return [name for item in value for name in file_names(item)]
    if isinstance(value, str) and value.startswith("file://"):
        name = value.removeprefix("file://")
        return [value] if name and not _absolute(name) else []
    return []


def references_written(
    text: str, head: dict[str, Any], pairs: list[tuple[dict[str, Any], dict[str, Any]]], path: Path
) -> dict[Path, str] | Unkept:
    """The config's text and the text of each YAML tests file it names whose tests were
    edited, each edited in place, so the config keeps its ``tests: file://...`` references.
    Why not, when that cannot be done: the tests no longer line up with what the config's
    entries read there (a test added or removed), an edited test is in a file that is not
    a YAML list of tests, or is a link, or names var files from its own folder."""
    from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

    document = yamlkeep.document_of(text)
    if not isinstance(document, dict):
        return Unkept("the config's kept text no longer reads as a config")
    tests = document.get("tests")
    entries = tests if isinstance(tests, list) else [tests]
    if not any(isinstance(entry, str) for entry in entries):
        return Unkept("the config names no tests file")
    try:
        there, origins = tests_and_origins(path, document)
    except ParseError as error:
        return Unkept(f"the files it names cannot be read beside {path}: {error}")
    added = Unkept(
        f"the set has {len(pairs)} tests where the config and the files it names hold"
        f" {len(there)}: tests were added or removed"
    )
    if len(there) != len(pairs):
        return added
    inline = iter(index for index in range(len(pairs)) if index not in origins)
    own: list[tuple[Any, Any]] = []
    for entry in entries:
        if isinstance(entry, str):
            own.append((entry, entry))
            continue
        index = next(inline, None)
        if index is None:
            return added
        own.append(pairs[index])
    if next(inline, None) is not None:
        return added
    by_file: dict[Path, list[int]] = {}
    for index, origin in origins.items():
        by_file.setdefault(origin, []).append(index)
    written: dict[Path, str] = {}
    for origin, indexes in by_file.items():
        if all(
            native.same(there[index], pairs[index][0])
            and native.same(*pairs[index])
            and date_paths(there[index]) == date_paths(pairs[index][0])
            for index in indexes
        ):
            continue  # its tests as the file holds them
        edited = _file_written(origin, [pairs[index] for index in indexes], path.parent)
        if edited is None:
            name = os.path.relpath(origin, path.parent)
            return Unkept(
                f"an edited test is in {name}, which cannot be edited in place (a JSON, JSON"
                " Lines or CSV tests file, a link, a file the config names twice, or one that"
                " names var files from its own folder)"
            )
        written[origin] = edited
    config = yamlkeep.rewrite(text, "tests", own, head, as_read)
    if config is None:
        return Unkept("the config's own tests could not be edited in place")
    return {path: config, **written}


def read_from(header: dict[str, Any], path: Path) -> Path | None:
    """Where the config a set keeps was read, when that is another folder than ``path``'s
    (the file being written): the set names it (``extensions.promptfoo.source.file``)
    relative to the file it is in, and a conversion names it so from the file it writes."""
    extensions = header.get("extensions")
    kept = extensions.get("promptfoo") if isinstance(extensions, dict) else None
    source = kept.get("source") if isinstance(kept, dict) else None
    name = source.get("file") if isinstance(source, dict) else None
    if not isinstance(name, str) or not name or "\x00" in name:
        return None
    folder = path.parent.absolute()
    origin = Path(os.path.normpath(folder / name))
    return None if origin.parent == Path(os.path.normpath(folder)) else origin


def moved(text: str, there: Path, here: Path) -> tuple[str, list[tuple[str, str]]] | None:
    """A config's text read in the folder ``there``, for the folder ``here``: every relative
    file name it holds (``file://`` anywhere, and the plain names of its tests entries,
    prompts and test vars) rewritten to name the same file from ``here``, each in its own
    place, the rest of the text kept. With the names rewritten, each as it was and as it is;
    None when one could not be rewritten in place."""
    from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

    renamed: dict[str, str] = {}

    def rebase(name: str) -> str | None:
        if not name or _absolute(name):
            return None
        return Path(os.path.relpath(there / name, here)).as_posix()

    def replacement(at: yamlkeep.YamlPath, value: str) -> str | None:
        new = None
        if value.startswith("file://"):
            name = rebase(value.removeprefix("file://"))
            new = None if name is None else "file://" + name
        elif _URL.match(value):
            new = None
        elif _named_file(at, value):
            new = rebase(value)
        if new is not None and new != value:
            renamed.setdefault(value, new)
        return new

    edited = yamlkeep.scalars_replaced(text, replacement)
    return None if edited is None else (edited, list(renamed.items()))


def _named_file(at: tuple[Any, ...], value: str) -> bool:
    """Whether a plain string at ``at`` in a config is a file name promptfoo reads from the
    config's folder: a tests entry, a prompt promptfoo takes for a file, a test's vars."""
    match at:
        case ("tests",) | ("tests", int()):
            return True
        case ("prompts",) | ("prompts", int()):
            return maybe_file(value)
        case ("defaultTest", "vars") | ("defaultTest", "vars", int()):
            return True
        case ("tests", int(), "vars") | ("tests", int(), "vars", int()):
            return True
    return False


def _absolute(name: str) -> bool:
    return name.startswith(("/", "\\", "~")) or bool(re.match(r"[A-Za-z]:[\\/]", name))


#: a reference promptfoo fetches, not a file (https://, huggingface://, ...)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def names_test_files(text: str) -> bool:
    """Whether a config's text names tests files (``tests: file://...``)."""
    from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

    document = yamlkeep.document_of(text)
    tests = document.get("tests") if isinstance(document, dict) else None
    return any(isinstance(entry, str) for entry in (tests if isinstance(tests, list) else [tests]))


def _file_written(
    origin: Path, records: list[tuple[dict[str, Any], dict[str, Any]]], base: Path
) -> str | None:
    """A YAML tests file a config names, edited to hold ``records`` (None when it cannot
    be)."""
    from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

    if origin.suffix.lower() not in (".yaml", ".yml") or origin.is_symlink():
        return None
    if origin.parent.resolve() != base.resolve() and any(
        not isinstance(plain.get("vars", {}), dict) for plain, _ in records
    ):
        return None  # var files named from the config's folder, not the file's
    try:
        text = read_text(origin)
    except ParseError:
        return None
    held = yamlkeep.document_of(text)
    if not isinstance(held, list) or len(held) != len(records):
        return None
    return yamlkeep.rewrite(text, None, records, None, as_read)


def as_read(item: Any, document: Any) -> Any:
    """A test of a config as reading takes it: its ``$ref`` objects resolved."""
    return References(document, Path("<kept YAML>")).resolve(item)
