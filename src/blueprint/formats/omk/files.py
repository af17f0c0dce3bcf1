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
from blueprint.formats.yaml12 import Yaml12Loader, read_yaml
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
    if path.suffix.lower() == ".json":
        return read_json_document(path)
    return read_yaml(path)


def check_file(path: Path, document: Any = ABSENT) -> list[Problem]:
    """Every way an omk file breaks omk's rules, each with the line it starts on where known
    (``document``: the file's parsed document, when it has been read already)."""
    if document is ABSENT:
        document = read_document(path)
    found = [problem for problem in [ambiguity(path)] if problem]
    found += check_document(document)
    lines = _lines(path)
    return [
        Problem(problem.rule, problem.path, problem.message, lines(problem.path))
        for problem in found
    ]


def _lines(path: Path) -> Any:
    """A function giving the line a JSON path starts on in the file (None where unknown)."""
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
        node = yamlload.compose(text, path, loader=Yaml12Loader)
    except ParseError:
        return lambda where: None
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


def _yaml_sample_lines(path: Path, count: int) -> list[int | None]:
    """The line each sample starts on, for a YAML file (JSON lines are found when asked)."""
    if path.suffix.lower() == ".json":
        return [None] * count
    try:
        node = yamlload.compose(read_text(path), path, loader=Yaml12Loader)
    except ParseError:
        return [None] * count
    samples: Any = None
    if isinstance(node, yaml.SequenceNode):
        samples = node
    elif isinstance(node, yaml.MappingNode):
        samples = next((v for k, v in node.value if k.value == "samples"), None)
    items = samples.value if isinstance(samples, yaml.SequenceNode) else []
    lines: list[int | None] = [item.start_mark.line + 1 for item in items]
    return (lines + [None] * count)[:count]
