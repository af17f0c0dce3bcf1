"""The one way Blueprint reads YAML: safe, bounded, and strict about what JSON cannot hold.

Every YAML reader (promptfoo and omk files, dataset cards, packs, mapping files) loads through
:func:`load` or :func:`compose`. Both refuse, naming the file and line:

- a document whose aliases expand past ``max_alias_nodes`` values (a few hundred bytes of
  nested aliases can stand for billions); the count is kept while composing, so the
  expansion is never built;
- an alias used inside the node it names (a loop JSON cannot hold);
- nesting deeper than ``max_depth``, counted through aliases too;
- a key written twice in one mapping (PyYAML would keep the last one silently);
- a number of more than ``max_number_digits`` digits, and ``.nan``, ``.inf`` or a float too
  large to represent (JSON has no place for them, and a writer would turn them into null);
- a lone surrogate written as an escape (``"\\ud800"``), which is not text.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any, Final

import yaml
from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode

from blueprint.core.errors import ParseError
from blueprint.io import limits

_INT: Final = "tag:yaml.org,2002:int"
_FLOAT: Final = "tag:yaml.org,2002:float"
_MERGE: Final = "tag:yaml.org,2002:merge"
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _past(limit: int, value: int) -> bool:
    # limits.exceeded reads the environment each time; a loader reads it once, when it starts
    return limit != 0 and value > limit


class Refused(yaml.MarkedYAMLError):
    """A document that is valid YAML but that Blueprint will not read, with where it is."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader (YAML 1.1 scalars) with the bounds of this module."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._limits = limits.current()
        #: nodes composed so far, counting each alias as the whole node it names
        self._nodes = 0
        #: nodes reached through aliases only; this is what an alias bomb inflates
        self._aliased = 0
        #: containers enclosing the node being composed, and the deepest reached in it
        self._depth = 0
        self._deepest = 0
        #: for each anchored node (by identity): its expanded size and its height
        self._expansion: dict[int, tuple[int, int]] = {}

    # --- composing: aliases, depth, keys, scalars --------------------------------------------

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event: Any = self.peek_event()
        if isinstance(event, AliasEvent):
            node: Any = super().compose_node(parent, index)  # an undefined alias fails here
            expansion = self._expansion.get(id(node))
            if expansion is None:
                raise Refused(
                    f"the alias *{event.anchor} is used inside the node it names"
                    " (a loop, which JSON cannot hold)",
                    event.start_mark,
                )
            size, height = expansion
            self._nodes += size
            self._aliased += size
            if _past(self._limits.max_alias_nodes, self._aliased):
                raise Refused(
                    f"the alias *{event.anchor} makes the document expand past"
                    f" {self._limits.max_alias_nodes:,} values once its aliases are followed"
                    f" (max_alias_nodes; {limits.hint('max_alias_nodes')})",
                    event.start_mark,
                )
            self._reach(self._depth + height, event)
            return node
        container = isinstance(event, SequenceStartEvent | MappingStartEvent)
        outer_depth, outer_deepest, before = self._depth, self._deepest, self._nodes
        self._nodes += 1
        self._deepest = outer_depth
        if container:
            self._depth += 1
            self._reach(self._depth, event)
        node = super().compose_node(parent, index)
        if event.anchor is not None:
            self._expansion[id(node)] = (self._nodes - before, self._deepest - outer_depth)
        self._depth = outer_depth
        self._deepest = max(outer_deepest, self._deepest)
        return node

    def _reach(self, depth: int, event: Any) -> None:
        self._deepest = max(self._deepest, depth)
        if _past(self._limits.max_depth, depth):
            raise Refused(
                f"values nested deeper than {self._limits.max_depth} levels"
                f" (max_depth; {limits.hint('max_depth')})",
                event.start_mark,
            )

    def compose_mapping_node(self, anchor: Any) -> MappingNode:
        node: MappingNode = super().compose_mapping_node(anchor)
        first_seen: dict[tuple[str, str], int] = {}
        for key, _ in node.value:
            if not isinstance(key, ScalarNode) or key.tag == _MERGE:
                continue  # a merge (<<) may be overridden by the mapping's own keys
            earlier = first_seen.get((key.tag, key.value))
            if earlier is not None:
                raise Refused(
                    f"the key {key.value!r} appears twice in one mapping (first on line"
                    f" {earlier}); YAML readers keep only one of them",
                    key.start_mark,
                )
            first_seen[(key.tag, key.value)] = key.start_mark.line + 1
        return node

    def compose_scalar_node(self, anchor: Any) -> ScalarNode:
        node: ScalarNode = super().compose_scalar_node(anchor)
        value = node.value
        if node.tag in (_INT, _FLOAT):
            self._check_digits(node)
        elif node.style == '"' and _SURROGATE.search(value):
            # only an escape can write one: the text itself was decoded from UTF-8
            raise Refused(
                "a string holds a lone surrogate (\\ud800-\\udfff), which is not text",
                node.start_mark,
            )
        return node

    def _check_digits(self, node: ScalarNode) -> None:
        digits = sum(char.isdigit() for char in node.value)
        limit = self._limits.max_number_digits
        if _past(limit, digits):
            raise Refused(
                f"a number of {digits:,} digits, more than {limit:,}"
                f" (max_number_digits; {limits.hint('max_number_digits')})",
                node.start_mark,
            )
        python_limit = sys.get_int_max_str_digits()
        if node.tag == _INT and python_limit and digits > python_limit:
            raise Refused(
                f"a whole number of {digits:,} digits, more than the {python_limit:,}"
                " Python reads (raise it with PYTHONINTMAXSTRDIGITS)",
                node.start_mark,
            )


def _construct_finite_float(loader: yaml.SafeLoader, node: ScalarNode) -> float:
    value: float = yaml.SafeLoader.construct_yaml_float(loader, node)
    if not math.isfinite(value):
        what = "not a number" if math.isnan(value) else "infinite"
        raise Refused(
            f"the number {node.value} is {what}, which JSON has no place for"
            " (quote it to keep it as text)",
            node.start_mark,
        )
    return value


BoundedLoader.add_constructor(_FLOAT, _construct_finite_float)


def _parse_error(path: Path, error: yaml.YAMLError, line_offset: int) -> ParseError:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or "not valid YAML"
    line = mark.line + 1 + line_offset if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    if isinstance(error, yaml.reader.ReaderError):
        # a character YAML does not allow (a control character, a NUL): the reader gives
        # only its position in the text
        problem = f"character {error.character!r} is not allowed in YAML"
        if isinstance(error.character, int):
            problem = f"character U+{error.character:04X} is not allowed in YAML"
        line, column = _line_and_column(error.position, error.name, line_offset)
    valid = isinstance(error, Refused)
    reason = problem if valid else f"not valid YAML: {problem}"
    return ParseError(path, reason, line=line, column=column)


def _line_and_column(
    position: int, text: object, line_offset: int
) -> tuple[int | None, int | None]:
    if not isinstance(text, str):
        return None, None
    before = text[:position]
    return before.count("\n") + 1 + line_offset, position - (before.rfind("\n") + 1) + 1


def _open(text: str, path: Path, loader: type[BoundedLoader], line_offset: int) -> BoundedLoader:
    """A loader over ``text``; PyYAML checks the characters as it starts."""
    try:
        return loader(text)
    except yaml.reader.ReaderError as error:
        error.name = text  # so the position can be turned into a line
        raise _parse_error(path, error, line_offset) from None


def load(
    text: str,
    path: Path,
    *,
    loader: type[BoundedLoader] = BoundedLoader,
    line_offset: int = 0,
) -> Any:
    """The one document ``text`` holds (None for an empty one), read safely and within the
    limits; raises ParseError naming ``path`` and the line (``line_offset`` added: the text
    starts that many lines into the file)."""
    data, _ = load_with_nodes(text, path, loader=loader, line_offset=line_offset)
    return data


def load_with_nodes(
    text: str,
    path: Path,
    *,
    loader: type[BoundedLoader] = BoundedLoader,
    line_offset: int = 0,
) -> tuple[Any, Node | None]:
    """The document and its node tree, whose marks give the line of any value."""
    reader = _open(text, path, loader, line_offset)
    try:
        node = reader.get_single_node()
        data = reader.construct_document(node) if node is not None else None
    except yaml.YAMLError as error:
        raise _parse_error(path, error, line_offset) from None
    except RecursionError:
        raise ParseError(path, "YAML nested too deeply to read") from None
    finally:
        reader.dispose()
    return data, node


def compose(
    text: str,
    path: Path,
    *,
    loader: type[BoundedLoader] = BoundedLoader,
    line_offset: int = 0,
) -> Node | None:
    """The node tree of the one document ``text`` holds, within the same limits as
    :func:`load` (for finding the line of a value)."""
    reader = _open(text, path, loader, line_offset)
    try:
        return reader.get_single_node()
    except yaml.YAMLError as error:
        raise _parse_error(path, error, line_offset) from None
    except RecursionError:
        raise ParseError(path, "YAML nested too deeply to read") from None
    finally:
        reader.dispose()
