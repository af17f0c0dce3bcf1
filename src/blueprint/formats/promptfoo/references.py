"""A promptfoo config written back where it was read: its ``tests: file://...`` references kept,
and the tests files they name edited in place when their tests were edited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from blueprint.core.errors import ParseError
from blueprint.formats import native
from blueprint.formats._io import read_text
from blueprint.formats.promptfoo.config import References, tests_and_origins, tests_at
from blueprint.formats.yaml12 import date_paths


def references_kept(
    text: str, head: dict[str, Any], pairs: list[tuple[dict[str, Any], dict[str, Any]]], path: Path
) -> str | None:
    """The config's text, its ``tests: file://...`` references kept, when the files they
    name beside ``path`` hold the tests to write, unedited: only the config is written.
    None when its tests are its own, or the files there hold other tests."""
    from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

    document = yamlkeep.document_of(text)
    if not isinstance(document, dict):
        return None
    tests = document.get("tests")
    named = tests if isinstance(tests, list) else [tests]
    if not any(isinstance(entry, str) for entry in named):
        return None
    if not all(native.same(plain, full) for plain, full in pairs):
        return None  # a test carries Blueprint's bookkeeping: the files would not say it
    try:
        there = tests_at(path, document)
    except ParseError:
        return None
    records = [plain for plain, _ in pairs]
    if len(there) != len(records) or not all(
        native.same(test, record) and date_paths(test) == date_paths(record)
        for test, record in zip(there, records, strict=True)
    ):
        return None
    return yamlkeep.with_head(text, "tests", head)


def references_written(
    text: str, head: dict[str, Any], pairs: list[tuple[dict[str, Any], dict[str, Any]]], path: Path
) -> dict[Path, str]:
    """The config's text and the text of each YAML tests file it names whose tests were
    edited, each edited in place, so the config keeps its ``tests: file://...`` references.
    Empty when that cannot be done: the tests no longer line up with what the config's
    entries read there (a test added or removed), an edited test is in a file that is not
    a YAML list of tests, or is a link, or names var files from its own folder."""
    from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

    document = yamlkeep.document_of(text)
    if not isinstance(document, dict):
        return {}
    tests = document.get("tests")
    entries = tests if isinstance(tests, list) else [tests]
    if not any(isinstance(entry, str) for entry in entries):
        return {}
    try:
        there, origins = tests_and_origins(path, document)
    except ParseError:
        return {}
    if len(there) != len(pairs):
        return {}
    inline = iter(index for index in range(len(pairs)) if index not in origins)
    own: list[tuple[Any, Any]] = []
    for entry in entries:
        if isinstance(entry, str):
            own.append((entry, entry))
            continue
        index = next(inline, None)
        if index is None:
            return {}
        own.append(pairs[index])
    if next(inline, None) is not None:
        return {}
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
            return {}
        written[origin] = edited
    config = yamlkeep.rewrite(text, "tests", own, head, as_read)
    if config is None:
        return {}
    return {path: config, **written}


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
