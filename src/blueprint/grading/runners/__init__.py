"""Each runner's own results file, read as recorded results (``{id, output, toolCalls,
finalState, judge}``): one module a runner, each asked in turn whether a file is its own.

A reader gives the items of a file it recognises and None for one it does not; the first
that recognises a file reads it. ``judge`` holds the judge's verdict where a model graded
the row (``pass``, ``score``, ``reason``) and the judge's identity where the file says it
(``model``, and ``template``: the Blueprint judge template its prompt was rendered from).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from blueprint.grading.runners import (
    braintrust,
    deepeval,
    inspect,
    langsmith,
    openai_evals,
    promptfoo,
)

#: items of a recognised JSON document, else None
DocumentReader = Callable[[Path, Any], Iterator[dict[str, Any]] | None]
#: items of a recognised file that is not JSON text (an archive), else None
ArchiveReader = Callable[[Path], Iterator[dict[str, Any]] | None]
#: (line, item) of a CSV file a runner recognises by its header, else None
CsvReader = Callable[
    [Path, list[str], Iterable[tuple[int, dict[str, str]]]],
    Iterator[tuple[int | None, dict[str, Any]]] | None,
]

DOCUMENT_READERS: Final[tuple[DocumentReader, ...]] = (
    promptfoo.items,
    inspect.items,
    deepeval.items,
    langsmith.items,
    braintrust.items,
)
ARCHIVE_READERS: Final[tuple[ArchiveReader, ...]] = (
    inspect.archive_items,
    openai_evals.archive_items,
)
CSV_READERS: Final[tuple[CsvReader, ...]] = (langsmith.csv_items, braintrust.csv_items)


def runner_document(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The items of a runner's JSON results document, or None when no runner wrote it."""
    for reader in DOCUMENT_READERS:
        found = reader(path, document)
        if found is not None:
            return found
    return None


def runner_archive(path: Path) -> Iterator[dict[str, Any]] | None:
    """The items of a runner's results archive (an Inspect ``.eval`` log), or None."""
    for reader in ARCHIVE_READERS:
        found = reader(path)
        if found is not None:
            return found
    return None


def runner_csv(
    path: Path, header: list[str], records: Iterable[tuple[int, dict[str, str]]]
) -> Iterator[tuple[int | None, dict[str, Any]]] | None:
    """The (line, item) pairs of a runner's CSV results (a LangSmith experiment's flat rows,
    a Braintrust export), known by the header; None when no runner wrote it."""
    for reader in CSV_READERS:
        found = reader(path, header, records)
        if found is not None:
            return found
    return None
