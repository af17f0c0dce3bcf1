"""The format registry: every codec Blueprint knows, in one explicit table.

Adding a format means one module, one line in ``REGISTRY`` and one test module. The format of
a file comes from ``--from``/``--to`` or its extension; content is consulted only when several
formats share an extension, and only when it makes one of them certain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from blueprint.errors import AmbiguousFormatError, UnknownFormatError
from blueprint.formats.base import (
    Codec,
    ExportResult,
    LossyField,
    SetSource,
    SourceRow,
    StrPath,
    UnreadableRow,
    WriteOptions,
)
from blueprint.formats.braintrust import BraintrustCodec
from blueprint.formats.canonical_csv import CsvCodec
from blueprint.formats.canonical_json import JsonCodec
from blueprint.formats.canonical_jsonl import JsonlCodec
from blueprint.formats.deepeval import DeepevalCodec
from blueprint.formats.langsmith import LangsmithCodec
from blueprint.formats.promptfoo import PromptfooCodec

REGISTRY: Final[dict[str, Codec]] = {
    codec.name: codec
    for codec in (
        JsonCodec(),
        JsonlCodec(),
        CsvCodec(),
        PromptfooCodec(),
        DeepevalCodec(),
        LangsmithCodec(),
        BraintrustCodec(),
    )
}

_SNIFF_BYTES: Final = 64 * 1024


def get_codec(name: str) -> Codec:
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(REGISTRY)
        raise UnknownFormatError(f"unknown format {name!r}; known formats: {known}") from None


def _extension(path: Path) -> str:
    return path.suffix.lower()


def codecs_for_extension(path: Path) -> list[Codec]:
    suffix = _extension(path)
    return [codec for codec in REGISTRY.values() if suffix in codec.extensions]


def resolve_codec(path: Path, name: str | None, *, reading: bool) -> Codec:
    """The codec for a file: the one named, else the one its extension (and content) decide."""
    if name is not None:
        codec = get_codec(name)
    else:
        candidates = [
            codec
            for codec in codecs_for_extension(path)
            if (codec.can_read if reading else codec.can_write)
        ]
        if not candidates:
            known = ", ".join(sorted({ext for c in REGISTRY.values() for ext in c.extensions}))
            extension = _extension(path) or "(none)"
            raise UnknownFormatError(
                f"{path}: cannot tell the format from the extension {extension!r}"
                f" (known: {known}); name it with --from/--to"
            )
        decided = candidates[0] if len(candidates) == 1 else None
        if decided is None and reading:
            decided, candidates = _sniff(path, candidates)
        if decided is None and not reading:
            # writing to a shared extension means the lossless canonical format; a vendor
            # format is only ever written when named with --to
            lossless = [codec for codec in candidates if codec.lossless]
            decided = lossless[0] if len(lossless) == 1 else None
        if decided is None:
            raise AmbiguousFormatError(path, [c.name for c in candidates])
        codec = decided
    if reading and not codec.can_read:
        raise UnknownFormatError(f"the format {codec.name!r} can be written but not read")
    if not reading and not codec.can_write:
        raise UnknownFormatError(f"the format {codec.name!r} can be read but not written")
    return codec


def _sniff(path: Path, candidates: list[Codec]) -> tuple[Codec | None, list[Codec]]:
    """The one candidate the content fits; failing that, the canonical format when every
    vendor format's own test has ruled itself out. Also returns the candidates still open."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        head = b""  # unreadable: the canonical reader will say why, with the file name
    matches = [codec for codec in candidates if codec.sniff(head)]
    if len(matches) == 1:
        return matches[0], matches
    lossless = [codec for codec in candidates if codec.lossless]
    if not matches and len(lossless) == 1:
        return lossless[0], lossless
    return None, matches or candidates


__all__ = [
    "REGISTRY",
    "Codec",
    "ExportResult",
    "LossyField",
    "SetSource",
    "SourceRow",
    "StrPath",
    "UnreadableRow",
    "WriteOptions",
    "codecs_for_extension",
    "get_codec",
    "resolve_codec",
]
