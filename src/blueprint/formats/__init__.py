"""The format registry: every codec Blueprint knows, in one explicit table.

Adding a format means one module, one line in ``REGISTRY`` and one test module. The format of
a file comes from ``--from``/``--to`` or its extension; content is consulted only when several
formats share an extension, and only when it makes one of them certain.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Final

from blueprint.errors import AmbiguousFormatError, ParseError, UnknownFormatError, UsageError
from blueprint.formats._io import BOM
from blueprint.formats.apollia import ApolliaCodec
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
from blueprint.formats.huggingface import HuggingfaceCodec
from blueprint.formats.inspect import InspectCodec
from blueprint.formats.langsmith import LangsmithCodec
from blueprint.formats.ome import OmeCodec
from blueprint.formats.omk import OmkCodec
from blueprint.formats.openai_evals import OpenaiEvalsCodec
from blueprint.formats.promptfoo import PromptfooCodec
from blueprint.formats.setfile import set_file_for
from blueprint.formats.sniffing import first_record_complete

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
        InspectCodec(),
        OpenaiEvalsCodec(),
        HuggingfaceCodec(),
        OmkCodec(),
        ApolliaCodec(),
        OmeCodec(),
    )
}

#: the "extension" of a format that reads and writes folders (a Hugging Face dataset)
FOLDER: Final = ""

_SNIFF_BYTES: Final = 64 * 1024
#: how far sniffing reads to see a whole first record (a golden with a long input)
_SNIFF_MAX_BYTES: Final = 16 * 1024 * 1024


def get_codec(name: str) -> Codec:
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(REGISTRY)
        raise UnknownFormatError(f"unknown format {name!r}; known formats: {known}") from None


def _extension(path: Path) -> str:
    return path.suffix.lower()


def codecs_reading(path: Path) -> list[Codec]:
    # a folder is read by the formats that read folders, whatever its name says
    suffix = FOLDER if path.is_dir() else _extension(path)
    if suffix == FOLDER and not path.is_dir():
        return []
    return [
        codec for codec in REGISTRY.values() if codec.can_read and suffix in codec.read_extensions
    ]


def codecs_writing(path: Path) -> list[Codec]:
    """The codecs a file's extension may mean when writing. A folder format, or a codec
    written only when named (omk, whose .json and .yaml mean other formats too), is never
    among them: a path without an extension is more often a mistake than a request for a
    dataset folder."""
    suffix = _extension(path)
    if suffix == FOLDER:
        return []
    return [
        codec
        for codec in REGISTRY.values()
        if codec.can_write
        and suffix in codec.write_forms
        and not getattr(codec, "named_only", False)
    ]


def resolve_codec(path: Path, name: str | None, *, reading: bool) -> Codec:
    """The codec for a file: the one named, else the one its extension and content decide.

    Reading, a file whose extension several formats share is read by the one its content
    fits; none fitting, or several, is an error that says what each one looked for.
    Writing, a shared extension means the lossless canonical format; a vendor format is
    written only when named, and refuses an extension whose form it cannot write faithfully.
    """
    if reading:
        refuse_special_file(path)
        refuse_empty_file(path)
    if name is not None:
        codec = get_codec(name)
        if reading and not codec.can_read:
            raise UnknownFormatError(f"the format {codec.name!r} can be written but not read")
        if not reading and not codec.can_write:
            raise UnknownFormatError(f"the format {codec.name!r} can be read but not written")
        if not reading and _extension(path) in codec.refused_forms:
            raise UsageError(
                f"{path}: {codec.name} is not written as {_extension(path)}:"
                f" {codec.refused_forms[_extension(path)]}"
            )
        return codec
    candidates = codecs_reading(path) if reading else codecs_writing(path)
    if not candidates:
        known = sorted(
            {
                ext
                for codec in REGISTRY.values()
                for ext in (codec.read_extensions if reading else tuple(codec.write_forms))
                if ext != FOLDER
            }
        )
        extension = _extension(path) or "(none)"
        raise UnknownFormatError(
            f"{path}: cannot tell the format from the extension {extension!r}"
            f" (known: {', '.join(known)}); name it with --from/--to"
        )
    if reading:
        return _sniff(path, candidates)  # even one candidate must fit: not every .yaml is promptfoo
    if len(candidates) == 1:
        return candidates[0]
    # writing to a shared extension means the lossless canonical format; a vendor format is
    # only ever written when named with --to
    lossless = [codec for codec in candidates if codec.lossless]
    if len(lossless) == 1:
        return lossless[0]
    raise AmbiguousFormatError(path, [c.name for c in candidates])


def refuse_special_file(path: Path) -> None:
    """Refuse a pipe, a device or a socket before anything opens it: reading a FIFO waits
    for a writer that may never come, and /dev/zero never ends."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing or unreadable: the reader says so, naming the file
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ParseError(
            path, "not a regular file (a pipe, a device or a socket); Blueprint reads files"
        )


def refuse_empty_file(path: Path) -> None:
    """One rule for every format: a file that holds nothing, or only whitespace, is not a set.

    The one exception is a canonical data file with its set file beside it: the set file
    says what the set is, and the empty data file that it has no rows.
    """
    if not path.is_file() or set_file_for(path).is_file():
        return  # missing, unreadable or a folder: the reader says so, naming the file
    try:
        with path.open("rb") as handle:
            chunk = handle.read(_SNIFF_BYTES).removeprefix(BOM)
            while chunk:
                if chunk.strip():
                    return
                chunk = handle.read(_SNIFF_BYTES)
    except OSError:
        return
    raise ParseError(path, "the file is empty (or holds only whitespace), so it holds no set")


def _sniff(path: Path, candidates: list[Codec]) -> Codec:
    """The one candidate the content fits; an error listing what was tried otherwise."""
    # a folder format looks at the folder, not at bytes
    head = b"" if path.is_dir() else _head(path)
    if head is None:
        # unreadable: the canonical reader will say why, with the file name
        return next((codec for codec in candidates if codec.lossless), candidates[0])
    fits = {codec.name: codec.sniff(path, head) for codec in candidates}
    matches = [codec for codec in candidates if fits[codec.name].ok]
    if len(matches) > 1 and set_file_for(path).is_file():
        # a set file beside the data is Blueprint's own mark
        matches = [codec for codec in matches if codec.lossless] or matches
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousFormatError(path, [codec.name for codec in matches])
    tried = "; ".join(f"{name}: {fit.why}" for name, fit in fits.items())
    what = "folders" if path.is_dir() else f"{_extension(path)} files"
    raise UnknownFormatError(
        f"{path}: the content fits none of the formats that read {what}"
        f" ({tried}); name one with --from if you know it"
    )


def _head(path: Path) -> bytes | None:
    """The first bytes of a file, enough to hold its first record; None when unreadable."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
            while len(head) < _SNIFF_MAX_BYTES and not first_record_complete(head):
                more = handle.read(len(head))
                if not more:
                    break
                head += more
    except OSError:
        return None
    return head


__all__ = [
    "FOLDER",
    "REGISTRY",
    "Codec",
    "ExportResult",
    "LossyField",
    "SetSource",
    "SourceRow",
    "StrPath",
    "UnreadableRow",
    "WriteOptions",
    "codecs_reading",
    "codecs_writing",
    "get_codec",
    "resolve_codec",
]
