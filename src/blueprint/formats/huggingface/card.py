"""The dataset card, README.md: its YAML front matter read, and YAML dumped to read back."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_text
from blueprint.formats.mapping import NAMESPACE
from blueprint.io import yamlload

CARD: Final = "README.md"
#: card keys Blueprint writes itself
_CARD_KEYS: Final = frozenset({"configs", "dataset_info", NAMESPACE})
#: what the card says this folder is, so a reader knows the columns are Blueprint's
CARD_FORMAT: Final = "blueprint.huggingface/v1"

_FRONT_MATTER: Final = re.compile(r"^(\s*---[\r\n]+)([\S\s]*?)([\r\n]+---(\r\n|\n|$))")


class _CardDumper(yaml.SafeDumper):
    """Writes strings so that any text reads back the same: in double quotes, escaped, when
    a plain scalar could be read as something else or hold a line break."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    plain = value.isascii() and value.isprintable() and value.strip() == value and value != ""
    style = None if plain else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_CardDumper.add_representer(str, _represent_text)


def dump_front_matter(data: dict[str, Any]) -> str:
    return yaml.dump(
        data,
        Dumper=_CardDumper,
        sort_keys=False,
        allow_unicode=False,
        default_flow_style=False,
        width=2**30,
    )


@dataclass
class Card:
    """A dataset card: its YAML front matter and its Markdown body."""

    meta: dict[str, Any]
    body: str
    #: whether the file had a front matter block at all
    has_front_matter: bool = True


def read_card(folder: Path) -> Card | None:
    path = folder / CARD
    if not path.is_file():
        return None
    text = read_text(path)
    match = _FRONT_MATTER.match(text)
    if match is None:
        return Card({}, text, has_front_matter=False)
    start_line = match.group(1).count("\n") + 1
    try:
        meta = yamlload.load(match.group(2), path, line_offset=start_line - 1)
    except ParseError as error:
        raise ParseError(
            path, f"the card's YAML front matter: {error.reason}", line=error.line
        ) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ParseError(path, "the card's YAML front matter is not a mapping", line=start_line)
    return Card(meta, text[match.end() :])
