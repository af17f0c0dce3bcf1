"""omk files: the document read as omk reads it, its problems, and the lines they are on."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_text
from blueprint.formats.canonical_json import row_start_lines
from blueprint.formats.native import ABSENT
from blueprint.formats.omk.rules import Problem, _key_path, check_document
from blueprint.formats.vendor import read_json_document
from blueprint.formats.yaml12 import Yaml12Loader, item_lines, read_yaml_nodes
from blueprint.io import yamlload

#: the file names omk discovers by itself; both in one folder is an error
CANONICAL_NAMES: Final = ("eval-samples.json", "eval-samples.yaml")


def ambiguity(path: Path) -> Problem | None:
    """omk's rule for its canonical names: eval-samples.json beside eval-samples.yaml is an
    error, since omk would not know which one to read."""
    if path.name not in CANONICAL_NAMES:
        return None
    other = path.with_name(
        CANONICAL_NAMES[1] if path.name == CANONICAL_NAMES[0] else CANONICAL_NAMES[0]
    )
    if not other.is_file():
        return None
    return Problem(
        "ambiguous-samples",
        "$",
        f"{path.name} and {other.name} are both in {path.parent}; omk refuses to choose between"
        " them (keep one)",
    )


def read_document(path: Path) -> Any:
    """The parsed document of an omk file: JSON for .json, YAML (1.2, as omk reads it) else."""
    return read_document_nodes(path)[0]


def read_document_nodes(path: Path) -> tuple[Any, yaml.Node | None]:
    """The parsed document and, for YAML, the node tree it was built from, whose marks give
    the lines of its samples and problems without parsing the file again (None for JSON)."""
    if path.suffix.lower() == ".json":
        return read_json_document(path), None
    return read_yaml_nodes(path)


def check_file(path: Path, document: Any = ABSENT, node: yaml.Node | None = None) -> list[Problem]:
    """Every way an omk file breaks omk's rules, each with the line it starts on where known
    (``document``: the file's parsed document, when it has been read already; ``node``: its
    YAML node tree, likewise)."""
    if document is ABSENT:
        document, node = read_document_nodes(path)
    found = [problem for problem in [ambiguity(path)] if problem]
    found += check_document(document)
    if not found:
        return []
    lines = _lines(path, node)
    return [
        Problem(problem.rule, problem.path, problem.message, lines(problem.path))
        for problem in found
    ]


def _lines(path: Path, node: yaml.Node | None = None) -> Any:
    """A function giving the line a JSON path starts on in the file (None where unknown);
    a YAML file's node tree, when given, is not composed again."""
    if node is not None:
        return _yaml_lines(node)
    try:
        text = read_text(path)
    except ParseError:
        return lambda where: None
    if path.suffix.lower() == ".json":
        starts = row_start_lines(text, "samples")

        def of_json(where: str) -> int | None:
            found = re.match(r"\$\.samples\[(\d+)\]", where)
            if found and int(found.group(1)) < len(starts):
                return starts[int(found.group(1))]
            return 1 if where == "$" else None

        return of_json
    try:
        composed = yamlload.compose(text, path, loader=Yaml12Loader)
    except ParseError:
        return lambda where: None
    return _yaml_lines(composed)


def _yaml_lines(node: yaml.Node | None) -> Any:
    """The line function of a YAML file's node tree: where each key and value starts."""
    marks: dict[str, int] = {}

    def walk(current: Any, at: str) -> None:
        marks[at] = current.start_mark.line + 1
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                name = str(key.value)
                child = _key_path(at, name)
                walk(value, child)
                marks[child] = key.start_mark.line + 1
        elif isinstance(current, yaml.SequenceNode):
            for index, value in enumerate(current.value):
                walk(value, f"{at}[{index}]")

    if node is not None:
        try:
            walk(node, "$")
        except RecursionError:  # nested too deeply to locate: lines stay unknown
            marks.clear()

    def of_yaml(where: str) -> int | None:
        while where:
            if where in marks:
                return marks[where]
            where = re.sub(r"(\.[^.\[]+|\[[^\]]*\])$", "", where) if where != "$" else ""
        return None

    return of_yaml


@cache
def _cached_lines(path: str, stamp: float) -> tuple[int, ...]:
    try:
        return tuple(row_start_lines(read_text(Path(path)), "samples"))
    except (ParseError, OSError):
        return ()


def _sample_lines(path: Path) -> tuple[int, ...]:
    try:
        return _cached_lines(str(path), path.stat().st_mtime)
    except OSError:
        return ()


def _yaml_sample_lines(node: yaml.Node | None, count: int) -> list[int | None]:
    """The line each sample starts on, from a YAML file's node tree (a JSON file has none:
    its lines are found when asked)."""
    return item_lines(node, count, None if isinstance(node, yaml.SequenceNode) else "samples")
