"""An OpenAI Evals record log (``oaieval ... --record_path LOG.jsonl``): one result a sample
Blueprint's eval class graded.

The log is JSON Lines: the run's ``{"spec": ...}`` first, then events ``{run_id, event_id,
sample_id, type, data, ...}`` and the ``{"final_report": ...}``. Blueprint's ``OracleEval``
(blueprint.integrations.openai_evals) records each sample's verdict as a ``match`` event, or
a ``blueprint_verdict`` event for a row with no verdict that counts; either event's data
names the row (``id``), holds the completion (``picked``) and, for a row a judge graded, the
judge's verdict (``judge``: pass, score, reason, model, template). Other events (sampling,
metrics) are let be.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats import refuse_special_file
from blueprint.formats._io import require_within_size
from blueprint.grading.records import recorded_output
from blueprint.grading.runners._fields import item_of
from blueprint.io import jsonvalues

#: the events Blueprint's eval class records a verdict in
VERDICT_EVENTS: Final = ("match", "blueprint_verdict")
#: the most of a file's first line read to see whether it is a record log
_FIRST_LINE_BYTES: Final = 1 << 20


def archive_items(path: Path) -> Iterator[dict[str, Any]] | None:
    """The results of an OpenAI Evals record log, or None for another file."""
    if path.suffix.lower() not in (".jsonl", ".log") or not _record_log(path):
        return None
    return _items(path)


def _record_log(path: Path) -> bool:
    """Whether the file starts as a record log does: a line ``{"spec": {...}}``."""
    if not path.is_file():
        return False  # missing, a folder or a pipe: the results reader says what it is
    try:
        with path.open("rb") as handle:
            first = handle.readline(_FIRST_LINE_BYTES)
    except OSError:
        return False
    try:
        head = jsonvalues.loads(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, jsonvalues.JSONError):
        return False
    return isinstance(head, dict) and isinstance(head.get("spec"), dict)


def _items(path: Path) -> Iterator[dict[str, Any]]:
    refuse_special_file(path)
    require_within_size(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise ParseError(path, f"not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise ParseError(path, error.strerror or str(error)) from None
    loads = jsonvalues.reader()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = loads(line)
        except jsonvalues.JSONError as error:
            raise ParseError(path, error.reason, line=number, column=error.column) from None
        if not isinstance(event, dict) or event.get("type") not in VERDICT_EVENTS:
            continue
        data = event.get("data")
        row_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(row_id, str) or not row_id:
            # a match recorded by another eval class names no Blueprint row
            continue
        item: dict[str, Any] = {"id": row_id}
        if "picked" in data:
            item = item_of(recorded_output(row_id, data["picked"]), None)
        if data.get("judge") is not None:
            item["judge"] = data["judge"]
        yield item
