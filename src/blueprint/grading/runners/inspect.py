"""An Inspect log: JSON (``--log-format json``), one result a sample."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from blueprint.core.errors import ParseError


def items(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The results of an Inspect log in JSON, or None for another document."""
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        return None
    return _samples(path, document["samples"])


def archive_items(path: Path) -> Iterator[dict[str, Any]] | None:
    """The results of an Inspect ``.eval`` log, or None for another file."""
    if path.suffix.lower() != ".eval":
        return None
    raise ParseError(
        path,
        "an Inspect .eval log is a compressed archive Blueprint does not open; convert it"
        " with: inspect log convert LOG.eval --to json --output-dir DIR",
    )


def _samples(path: Path, samples: list[Any]) -> Iterator[dict[str, Any]]:
    """One result a sample of an Inspect log (JSON): its id, the completion, and the tool
    calls of its assistant messages."""
    for sample in samples:
        if not isinstance(sample, dict):
            raise ParseError(path, "an Inspect log's samples are objects")
        output = sample.get("output")
        completion = output.get("completion") if isinstance(output, dict) else None
        calls = []
        for message in sample.get("messages") or []:
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    calls.append({"name": call.get("function"), "arguments": call.get("arguments")})
        item: dict[str, Any] = {"id": str(sample.get("id")), "toolCalls": calls}
        if completion is not None:
            item["output"] = completion
        yield item
