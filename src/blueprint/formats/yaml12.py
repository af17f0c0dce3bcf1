"""YAML as js-yaml reads and writes it (the YAML 1.2 core schema), for promptfoo and omk files."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any, Final

import yaml

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_text
from blueprint.formats.cells import FloatText, IntText
from blueprint.formats.yamlblock import block_yaml, literal, quoted_in_both
from blueprint.io import yamlload
from blueprint.io.yamlload import BoundedLoader

# --- YAML that js-yaml and PyYAML read alike -------------------------------------------------

# Most YAML is written by yamlblock, which writes what LibYAML writes for these nodes; the
# dumper below writes the rest (dates, keys that need the complex form). LibYAML's emitter
# (PyYAML's C binding) writes the same YAML some hundred times faster than the pure-Python
# one; the pure one stands in only where PyYAML was built without LibYAML
_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_SafeDumper):  # type: ignore[valid-type,misc]
    def ignore_aliases(self, data: Any) -> bool:
        return True

    # the emitter asks for every node where it is in the document, for path resolvers; YAML
    # written here has none, so the answers cost nothing
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # asked twice for every scalar: the tag it would have quoted (always str) and plain,
        # which depends on the text alone; the keys and short values that recur are answered
        # from memory
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)
        if not implicit[0]:
            return self.DEFAULT_SCALAR_TAG
        if len(value) > _REMEMBERED_LENGTH:
            return super().resolve(kind, value, implicit)
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_PLAIN_TAGS) >= _REMEMBERED_TEXTS:
                _PLAIN_TAGS.clear()
            _PLAIN_TAGS[value] = tag
        return tag


#: what the plain scalars written lately resolve to, by text: at most this many texts of at
#: most this length, so memory stays flat however many rows are written
_PLAIN_TAGS: dict[str, str] = {}
_REMEMBERED_TEXTS: Final = 4096
_REMEMBERED_LENGTH: Final = 40


def _style(text: str) -> str | None:
    """The style the writers ask LibYAML for (None: LibYAML chooses)."""
    if literal(text):
        return "|"
    return '"' if quoted_in_both(text) else None


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=_style(data))


_Dumper.add_representer(str, _represent_str)
# numbers a CSV cell was read with (their text kept for the CSV) are plain numbers in YAML
_Dumper.add_representer(IntText, yaml.SafeDumper.represent_int)
_Dumper.add_representer(FloatText, yaml.SafeDumper.represent_float)


def dump_yaml(data: Any) -> bytes:
    """``data`` as block YAML that js-yaml and PyYAML read alike."""
    text = block_yaml(data)
    return (_libyaml_text(data) if text is None else text).encode("utf-8")


def _libyaml_text(data: Any) -> str:
    stream = io.StringIO()
    dumper = _Dumper(
        stream, allow_unicode=True, sort_keys=False, width=100, default_flow_style=False
    )
    try:
        dumper.open()
        # the nodes are built here rather than by the dumper's representer, whose generic
        # dispatch (and bookkeeping for aliases, which are never written) cost more than the
        # C emitter; they are the nodes the representer builds
        dumper.serialize(_node(data, dumper))
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue()


_STR: Final = "tag:yaml.org,2002:str"
_MAP: Final = "tag:yaml.org,2002:map"
_SEQ: Final = "tag:yaml.org,2002:seq"


def _node(value: Any, dumper: yaml.SafeDumper) -> yaml.Node:
    """The node ``_Dumper``'s representers make for a JSON-like value."""
    kind = type(value)
    if kind is str:
        return yaml.ScalarNode(_STR, value, style=_style(value))
    if kind is dict:
        pairs = [(_node(key, dumper), _node(item, dumper)) for key, item in value.items()]
        return yaml.MappingNode(_MAP, pairs, flow_style=False)
    if kind is list:
        return yaml.SequenceNode(_SEQ, [_node(item, dumper) for item in value], flow_style=False)
    if kind is bool:
        return yaml.ScalarNode("tag:yaml.org,2002:bool", "true" if value else "false")
    if kind is int:
        return yaml.ScalarNode("tag:yaml.org,2002:int", str(value))
    if value is None:
        return yaml.ScalarNode("tag:yaml.org,2002:null", "null")
    return dumper.represent_data(value)  # floats, dates: the representer's own rules


# --- reading YAML as js-yaml reads it -------------------------------------------------------

#: tags YAML 1.1 gives plain scalars that YAML 1.2's core schema reads otherwise
_YAML11_ONLY: Final = frozenset(
    {
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
    }
)


class Yaml12Loader(BoundedLoader):
    """PyYAML's safe loader with YAML 1.2 core scalars, as js-yaml (and so promptfoo) reads:
    only true/false are booleans, 0o17 is octal, and no dates or base-60 numbers."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML11_ONLY]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = loader.construct_scalar(node)  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 0) if text.startswith("0x") else int(text)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class YamlDate(str):
    """Text that promptfoo's YAML reader takes for a date (an unquoted 2024-01-01): kept as
    text here, and written unquoted again so that promptfoo still reads a date."""


def _construct_date(loader: yaml.SafeLoader, node: yaml.Node) -> YamlDate:
    return YamlDate(loader.construct_scalar(node))  # type: ignore[arg-type]


#: text promptfoo's js-yaml schema reads as a timestamp when it is unquoted
TIMESTAMP: Final = re.compile(
    r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
    r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
    r"(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"
)
# promptfoo's js-yaml schema reads timestamps (and YAML 1.2 core scalars otherwise)
Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:timestamp", TIMESTAMP, list("0123456789"))
Yaml12Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_date)


def date_paths(value: Any, at: tuple[Any, ...] = ()) -> list[list[Any]]:
    """Where a value read from YAML holds dates."""
    if isinstance(value, YamlDate):
        return [list(at)]
    if isinstance(value, dict):
        return [path for key, item in value.items() for path in date_paths(item, (*at, key))]
    if isinstance(value, list):
        return [path for n, item in enumerate(value) for path in date_paths(item, (*at, n))]
    return []


def mark_dates(record: dict[str, Any], paths: Any) -> None:
    """Turn the texts at ``paths`` back into dates for the YAML writer."""
    for path in paths if isinstance(paths, list) else []:
        if not isinstance(path, list) or not path:
            continue
        holder: Any = record
        for part in path[:-1]:
            holder = _child(holder, part)
        last = path[-1]
        value = _child(holder, last)
        # a value edited into text that is no date stays text (written as a date, it would
        # carry a tag no reader resolves)
        if isinstance(value, str) and TIMESTAMP.match(value):
            holder[last] = YamlDate(value)


def _child(holder: Any, part: Any) -> Any:
    if isinstance(holder, dict):
        return holder.get(part)
    if isinstance(holder, list) and isinstance(part, int) and 0 <= part < len(holder):
        return holder[part]
    return None


def _represent_date(dumper: yaml.SafeDumper, data: YamlDate) -> yaml.Node:
    # tagged as the timestamp a plain scalar reads as, so the writer leaves it unquoted
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", str(data), style=None)


_Dumper.add_representer(YamlDate, _represent_date)


def _not_json(value: Any) -> str | None:
    """Why a YAML value cannot be JSON (a key that is not text, a date, binary data), or None.

    The loader has bounded what aliases expand to, so the walk is bounded too."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key in current:
                if not isinstance(key, str):
                    return f"the key {key!r} is not text, which JSON (and Blueprint) needs"
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
        elif current is not None and not isinstance(current, str | int | float | bool):
            kind = type(current).__name__
            return f"holds a YAML {kind} value, which JSON has no place for"
    return None


def read_yaml(path: Path) -> Any:
    return read_yaml_nodes(path)[0]


def read_yaml_nodes(path: Path) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree, composed once: the tree's marks give the line each
    record starts on (:func:`item_lines`)."""
    data, node = yamlload.load_with_nodes(read_text(path), path, loader=Yaml12Loader)
    problem = _not_json(data)
    if problem:
        raise ParseError(path, problem)
    return data, node


def item_lines(node: yaml.Node | None, count: int, key: str | None = None) -> list[int | None]:
    """The 1-based line each of the ``count`` items of a YAML sequence starts on: the
    document's own, or the one under its top-level ``key``; None for each where the
    document has no such sequence of that length."""
    if key is not None and isinstance(node, yaml.MappingNode):
        node = next(
            (value for name, value in node.value if name.tag == _STR and name.value == key),
            None,
        )
    items = node.value if isinstance(node, yaml.SequenceNode) else []
    if len(items) != count:
        return [None] * count
    return [item.start_mark.line + 1 for item in items]
