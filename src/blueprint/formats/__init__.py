"""The format registry: every codec Blueprint knows, in one explicit table.

Adding a format means one module, one line in ``REGISTRY`` and one test module. The format of
a file comes from ``--from``/``--to`` or its extension; content is consulted only when several
formats share an extension, and only when it makes one of them certain.
"""

from __future__ import annotations

import importlib
import stat
from collections.abc import Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from blueprint.core.errors import AmbiguousFormatError, ParseError, UnknownFormatError, UsageError
from blueprint.formats._io import BOM
from blueprint.formats.base import (
    Codec,
    ExportResult,
    LossyField,
    MergedRecord,
    RecordCount,
    SetSource,
    SourceRow,
    StrPath,
    UnreadableRow,
    WriteOptions,
)
from blueprint.formats.setfile import set_file_for
from blueprint.formats.sniffing import Fit, first_record_complete


@dataclass(frozen=True)
class FormatFacts:
    """What the registry knows of a format without importing its module: enough to list it,
    to tell which formats an extension may mean, and to import it when it is used. The
    attributes are the codec's own, by the same names (a test holds them equal)."""

    name: str
    title: str
    module: str
    codec_class: str
    lossless: bool
    #: extensions of files it reads ("" for a folder)
    read_extensions: tuple[str, ...]
    #: extensions it writes, the default first
    extensions: tuple[str, ...]
    can_read: bool = True
    can_write: bool = True
    #: written only when named with --to (its extensions mean other formats too)
    named_only: bool = False


#: the "extension" of a format that reads and writes folders (a Hugging Face dataset)
FOLDER: Final = ""

#: every format, in the order ``blueprint formats`` lists them; a codec's module is imported
#: the first time the codec is used
FORMATS: Final = (
    FormatFacts(
        name="json",
        title="Blueprint JSON document",
        module="canonical_json",
        codec_class="JsonCodec",
        lossless=True,
        read_extensions=(".json",),
        extensions=(".json",),
    ),
    FormatFacts(
        name="jsonl",
        title="Blueprint JSON Lines (+ set file)",
        module="canonical_jsonl",
        codec_class="JsonlCodec",
        lossless=True,
        read_extensions=(".jsonl", ".ndjson"),
        extensions=(".jsonl", ".ndjson"),
    ),
    FormatFacts(
        name="csv",
        title="Blueprint CSV (+ set file)",
        module="canonical_csv",
        codec_class="CsvCodec",
        lossless=True,
        read_extensions=(".csv",),
        extensions=(".csv",),
    ),
    FormatFacts(
        name="promptfoo",
        title="promptfoo tests or config (YAML, JSON, JSONL; reads CSV tests)",
        module="promptfoo.codec",
        codec_class="PromptfooCodec",
        lossless=False,
        read_extensions=(".yaml", ".yml", ".json", ".jsonl", ".csv"),
        extensions=(".yaml", ".yml", ".json", ".jsonl"),
    ),
    FormatFacts(
        name="deepeval",
        title="DeepEval goldens (JSON, JSONL; reads CSV)",
        module="deepeval",
        codec_class="DeepevalCodec",
        lossless=False,
        read_extensions=(".json", ".jsonl", ".csv"),
        extensions=(".json", ".jsonl"),
    ),
    FormatFacts(
        name="langsmith",
        title="LangSmith examples (JSONL, or a JSON array)",
        module="langsmith",
        codec_class="LangsmithCodec",
        lossless=False,
        read_extensions=(".jsonl", ".json"),
        extensions=(".jsonl", ".json"),
    ),
    FormatFacts(
        name="braintrust",
        title="Braintrust dataset records (JSONL, or a JSON array)",
        module="braintrust",
        codec_class="BraintrustCodec",
        lossless=False,
        read_extensions=(".jsonl", ".json"),
        extensions=(".jsonl", ".json"),
    ),
    FormatFacts(
        name="inspect",
        title="Inspect AI samples (JSONL, a JSON array, or CSV)",
        module="inspect",
        codec_class="InspectCodec",
        lossless=False,
        read_extensions=(".jsonl", ".json", ".csv"),
        extensions=(".jsonl", ".json", ".csv"),
    ),
    FormatFacts(
        name="openai-evals",
        title="OpenAI Evals registry samples (JSONL)",
        module="openai_evals",
        codec_class="OpenaiEvalsCodec",
        lossless=False,
        read_extensions=(".jsonl",),
        extensions=(".jsonl",),
    ),
    FormatFacts(
        name="huggingface",
        title="Hugging Face dataset folder (JSON Lines or Parquet, with a dataset card)",
        module="huggingface.codec",
        codec_class="HuggingfaceCodec",
        lossless=False,
        read_extensions=(FOLDER,),
        extensions=(FOLDER,),
    ),
    FormatFacts(
        name="omk",
        title="omk eval-sample set v2 (JSON or YAML)",
        module="omk.codec",
        codec_class="OmkCodec",
        lossless=False,
        read_extensions=(".json", ".yaml", ".yml"),
        extensions=(".json", ".yaml", ".yml"),
        named_only=True,
    ),
    FormatFacts(
        name="apollia",
        title="apollia-os eval suite (TOML)",
        module="apollia",
        codec_class="ApolliaCodec",
        lossless=False,
        read_extensions=(".toml",),
        extensions=(".toml",),
    ),
    FormatFacts(
        name="ome",
        title="ome recall-evaluation suite (JSON)",
        module="ome",
        codec_class="OmeCodec",
        lossless=False,
        read_extensions=(".json",),
        extensions=(".json",),
    ),
    FormatFacts(
        name="shards",
        title="a set in shards: a folder or glob of JSON Lines and Parquet files (read only)",
        module="shards",
        codec_class="ShardsCodec",
        lossless=True,
        read_extensions=(),
        extensions=(),
        can_write=False,
    ),
)


class Registry(MutableMapping[str, Codec]):
    """Format name -> codec, importing a codec's module on first use. Listing the names or
    the facts (``facts``, ``described``) imports nothing."""

    def __init__(self, formats: Iterable[FormatFacts]) -> None:
        self._facts = {facts.name: facts for facts in formats}
        self._codecs: dict[str, Codec] = {}
        self._order = list(self._facts)

    def __getitem__(self, name: str) -> Codec:
        codec = self._codecs.get(name)
        if codec is None:
            facts = self._facts[name]
            module = importlib.import_module(f"blueprint.formats.{facts.module}")
            codec = self._codecs[name] = getattr(module, facts.codec_class)()
        return codec

    def __setitem__(self, name: str, codec: Codec) -> None:
        # a codec registered at run time (a test's) is its own facts
        if name not in self._order:
            self._order.append(name)
        self._codecs[name] = codec

    def __delitem__(self, name: str) -> None:
        if name not in self._order:
            raise KeyError(name)
        self._codecs.pop(name, None)
        if name in self._facts:
            self._facts.pop(name)
        self._order.remove(name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._order

    def facts(self, name: str) -> FormatFacts | Codec:
        """A format's name, title, extensions and kind, from its codec if it is loaded."""
        return self._codecs.get(name) or self._facts[name]

    def described(self) -> list[FormatFacts | Codec]:
        return [self.facts(name) for name in self._order]


REGISTRY: Final = Registry(FORMATS)

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
    return [REGISTRY[facts.name] for facts in _facts_reading(path)]


def _facts_reading(path: Path) -> list[FormatFacts | Codec]:
    # a folder is read by the formats that read folders, whatever its name says
    suffix = FOLDER if path.is_dir() else _extension(path)
    if suffix == FOLDER and not path.is_dir():
        return []
    return [
        facts
        for facts in REGISTRY.described()
        if facts.can_read and suffix in facts.read_extensions
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
        REGISTRY[facts.name]
        for facts in REGISTRY.described()
        if facts.can_write
        and suffix in facts.extensions
        and not getattr(facts, "named_only", False)
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
        if reading:
            _refuse_unfit(path, codec)
        if not reading and not codec.can_write:
            raise UnknownFormatError(f"the format {codec.name!r} can be read but not written")
        if not reading and _extension(path) in codec.refused_forms:
            raise UsageError(
                f"{path}: {codec.name} is not written as {_extension(path)}:"
                f" {codec.refused_forms[_extension(path)]}"
            )
        return codec
    if reading:
        marked = _canonical_if_marked(path, _facts_reading(path))
        if marked is not None:
            return marked
    candidates = codecs_reading(path) if reading else codecs_writing(path)
    if not candidates and reading and not path.exists():
        # a missing folder has no extension to tell a format by, and a missing file with an
        # unknown one none either: what is wrong is that it is not there
        raise ParseError(path, "no such file or folder")
    if not candidates:
        known = sorted(
            {
                ext
                for facts in REGISTRY.described()
                for ext in (facts.read_extensions if reading else facts.extensions)
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
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return  # missing or unreadable: the reader says so, naming the file
    except OSError as error:  # a name too long, a loop of links: nothing can read it
        raise ParseError(path, f"cannot read: {error.strerror}") from None
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


def _refuse_unfit(path: Path, codec: Codec) -> None:
    """Refuse a file that the named vendor format's own sniffing says it does not fit: read
    anyway, an OpenAI Evals file named as promptfoo imports every line as an empty row, and
    one named as DeepEval hides its ideal answers in the extension.

    Only a certain "no" refuses, so a codec opts in with ``sniff_named``, which judges a
    named file more loosely than detection does: a file it reads only when told to (DeepEval
    goldens under custom key names, a promptfoo vars file) is not refused, but a record that
    holds its answer under another format's key and not under this one's is (see
    :func:`~blueprint.formats.sniffing.foreign_marks`). A broken file of the format is left
    to its reader, which names the line and field. A canonical format's reader names every
    broken field itself, and a head that is unreadable or stops before its first record ends
    leaves it open.
    """
    sniff = getattr(codec, "sniff_named", None)
    if codec.lossless or sniff is None:
        return
    head = b"" if path.is_dir() else _head(path)
    if head is None or (head and not first_record_complete(head)):
        return
    fit: Fit = sniff(path, head)
    if fit.ok:
        return
    others = [
        other.name
        for other in (REGISTRY[facts.name] for facts in _facts_reading(path))
        if other.name != codec.name and other.sniff(path, head).ok
    ]
    what = "folders" if path.is_dir() else f"{_extension(path) or 'such'} files"
    fitting = (
        f"it fits {', '.join(others)}: name that with --from, or leave --from out"
        if others
        else f"it fits none of the formats that read {what}"
    )
    raise UnknownFormatError(
        f"{path}: the content does not fit --from {codec.name} ({fit.why}); {fitting}"
    )


def _canonical_if_marked(path: Path, candidates: list[FormatFacts | Codec]) -> Codec | None:
    """The canonical codec among ``candidates`` when a set file lies beside the file and the
    canonical reader agrees: that mark settles a tie between formats anyway (see ``_sniff``),
    so settling it first gives the same answer without importing every vendor codec to ask.
    A canonical document's schema version is no such mark: content that another format fits
    too stays ambiguous."""
    lossless = [facts for facts in candidates if facts.lossless]
    if len(lossless) != 1 or len(candidates) == 1 or path.is_dir():
        return None
    if not set_file_for(path).is_file():
        return None
    head = _head(path)
    if head is None:
        return None
    codec = REGISTRY[lossless[0].name]
    return codec if codec.sniff(path, head).ok else None


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
    "FORMATS",
    "REGISTRY",
    "Codec",
    "ExportResult",
    "FormatFacts",
    "LossyField",
    "MergedRecord",
    "RecordCount",
    "Registry",
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
