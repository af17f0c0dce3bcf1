"""An Inspect log: the ``.eval`` archive Inspect writes by default, or JSON (``--log-format
json``); one result a sample.

A ``.eval`` log is a zip of JSON entries (``header.json``, ``samples/<id>_epoch_<n>.json``,
...), each compressed with zstandard by recent Inspect versions, a method Python's zipfile
cannot read before 3.14: each entry's compressed bytes are found through the zip's own
directory and decompressed with ``zstandard``, never past ``max_cell_bytes`` an entry (and
``max_file_bytes`` in all, where it is set), so a zip bomb is refused before it is inflated.
Inspect writes ``NaN`` for a score or a metric with no value, which strict JSON has not: a
log reads it as no value.

Each sample gives its output (``output.completion``), the tool calls of its assistant
messages, and the judge's verdict where one is recorded: Blueprint's scorer's where it was
used (the score's ``metadata.judge``, with the model and template it names), else that of
Inspect's own model-graded scorers (``model_graded_qa``, ``model_graded_fact``: ``C``
passes, ``I`` fails, ``P`` is a score of 0.5), the grader named from the log's eval spec
(the scorer's ``model`` option, else the ``grader`` model role, else the model evaluated,
which Inspect grades with when nothing else is said).

In a log run over several epochs (``inspect eval --epochs N``: its spec's ``config.epochs``,
or a sample's epoch past the first) a sample has a result in each: each epoch is a trial
(the result's ``trial`` is the sample's ``epoch``, :mod:`blueprint.grading.trials`). A log
of one epoch names no trial. A ``.eval`` log is read a sample at a time.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats import refuse_special_file
from blueprint.formats._io import BOM, require_file, require_within_size
from blueprint.io import limits

#: the entry of a ``.eval`` log that holds the eval's spec, plan and results
HEADER: Final = "header.json"
#: the folder of a ``.eval`` log that holds one entry a sample and epoch
SAMPLES: Final = "samples/"
#: zstandard, in the zip's numbering of compression methods
ZSTANDARD: Final = 93
#: the methods Python's zipfile reads itself: stored, deflated, bzip2, lzma
_STDLIB_METHODS: Final = frozenset({0, 8, 12, 14})
#: the start of an Inspect log written as JSON (its first keys, in the order Inspect writes)
_JSON_LOG: Final = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"(?:status|eval)"\s*:')
_LOCAL_HEADER: Final = struct.Struct("<4s22xHH")
_LOCAL_SIGNATURE: Final = b"PK\x03\x04"
#: Inspect's own scorers whose value a model gives
MODEL_GRADED: Final = frozenset({"model_graded_qa", "model_graded_fact"})
#: each grade of Inspect's model-graded scorers as a judge's verdict
GRADES: Final[dict[str, dict[str, Any]]] = {
    "C": {"pass": True, "score": 1.0},
    "I": {"pass": False, "score": 0.0},
    "P": {"score": 0.5},
}
_JUDGE_KEYS: Final = ("pass", "score", "reason", "model", "template")
#: bytes read from an entry at a time
_CHUNK: Final = 1 << 20
#: the epoch in the name of a ``.eval`` log's sample entry
_EPOCH_ENTRY: Final = re.compile(r"_epoch_(\d+)\.json$", re.IGNORECASE)


def items(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The results of an Inspect log in JSON, or None for another document."""
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        return None
    spec = document.get("eval")
    spec = spec if isinstance(spec, dict) else {}
    listed = document["samples"]
    samples = ((f"samples[{number}]", sample) for number, sample in enumerate(listed))
    epochs = _several_epochs(spec, (item.get("epoch") for item in listed if isinstance(item, dict)))
    return _log_items(path, spec, samples, epochs)


def archive_items(path: Path) -> Iterator[dict[str, Any]] | None:
    """The results of an Inspect ``.eval`` log, or of an Inspect log in JSON (which may hold
    ``NaN``, so is read here rather than as strict JSON); None for another file."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return _archive_items(path)
    if suffix == ".json" and _json_log(path):
        return _json_log_items(path)
    return None


# --- the samples -------------------------------------------------------------------------------


def _log_items(
    path: Path, spec: dict[str, Any], samples: Iterable[tuple[str, Any]], epochs: bool
) -> Iterator[dict[str, Any]]:
    """One result a sample, (where, sample) pairs: a JSON log's ``samples``, or a ``.eval``
    log's entries; in a log of several ``epochs``, each with its epoch as its trial."""
    graders = _graders(spec)
    for where, sample in samples:
        if not isinstance(sample, dict):
            raise ParseError(path, f"{where}: an Inspect log's sample is an object")
        item = _sample_item(sample, graders)
        if epochs:
            epoch = sample.get("epoch", 1)
            if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
                raise ParseError(path, f"{where}.epoch: a whole number from 1, not {epoch!r}")
            item["trial"] = epoch
        yield item


def _several_epochs(spec: dict[str, Any], epochs: Iterable[Any]) -> bool:
    """Whether a log runs its samples over several epochs: its spec says so
    (``config.epochs``), or a sample's epoch is past the first."""
    config = spec.get("config")
    said = config.get("epochs") if isinstance(config, dict) else None
    if isinstance(said, int) and not isinstance(said, bool) and said > 1:
        return True
    return any(
        isinstance(epoch, int) and not isinstance(epoch, bool) and epoch > 1 for epoch in epochs
    )


def _entry_epoch(name: str) -> int | None:
    """The epoch a ``.eval`` log's entry name gives (``samples/<id>_epoch_<n>.json``)."""
    found = _EPOCH_ENTRY.search(name)
    return int(found.group(1)) if found else None


def _sample_item(sample: dict[str, Any], graders: dict[str, str]) -> dict[str, Any]:
    """A sample's id, completion, tool calls and judge's verdict."""
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
    judge = _judge(sample.get("scores"), graders)
    if judge is not None:
        item["judge"] = judge
    return item


def _judge(scores: Any, graders: dict[str, str]) -> dict[str, Any] | None:
    """Blueprint's scorer's judge verdict where Blueprint's scorer was used, else that of
    Inspect's model-graded scorers together (it passes when each passes; its score is their
    mean)."""
    if not isinstance(scores, dict):
        return None
    for score in scores.values():
        metadata = score.get("metadata") if isinstance(score, dict) else None
        if isinstance(metadata, dict) and "verdict" in metadata:
            # Blueprint's scorer judged the row, or the row needs no judge
            given = metadata.get("judge")
            if not isinstance(given, dict):
                return None
            return {key: given[key] for key in _JUDGE_KEYS if given.get(key) is not None}
    verdicts = []
    for name, score in scores.items():
        if _base_name(name) not in MODEL_GRADED or not isinstance(score, dict):
            continue
        value = score.get("value")
        grade = GRADES.get(value) if isinstance(value, str) else None
        if grade is not None:
            verdicts.append((name, grade, score.get("explanation")))
    if not verdicts:
        return None
    passes = [grade.get("pass") for _, grade, _ in verdicts]
    judge: dict[str, Any] = {
        "score": sum(grade["score"] for _, grade, _ in verdicts) / len(verdicts)
    }
    if False in passes:
        judge["pass"] = False
    elif all(passed is True for passed in passes):
        judge["pass"] = True
    reasons = [reason for _, _, reason in verdicts if isinstance(reason, str) and reason]
    if reasons:
        judge["reason"] = "\n\n".join(reasons)
    models = list(dict.fromkeys(graders[name] for name, _, _ in verdicts if name in graders))
    if models:
        judge["model"] = ", ".join(models)
    return judge


def _base_name(name: str) -> str:
    """A score's scorer: Inspect names a second scorer of one kind ``<name>1``, and so on."""
    return name.rstrip("0123456789") if name[:1].isalpha() else name


def _graders(spec: dict[str, Any]) -> dict[str, str]:
    """The grader model of each model-graded score, by the score's name: the scorer's own
    ``model`` option, else the ``grader`` role's model, else the model evaluated."""
    default = _model_name(spec.get("model"))
    roles = spec.get("model_roles")
    role = roles.get("grader") if isinstance(roles, dict) else None
    default = _model_name(role) or default
    graders: dict[str, str] = {}
    used: list[str] = []
    scorers = spec.get("scorers")
    for scorer in scorers if isinstance(scorers, list) else []:
        if not isinstance(scorer, dict) or not isinstance(scorer.get("name"), str):
            continue
        base = scorer["name"].rsplit("/", 1)[-1]
        name, count = base, 1
        while name in used:  # as Inspect names a scorer used twice
            name, count = f"{base}{count}", count + 1
        used.append(name)
        options = scorer.get("options")
        model = _model_name(options.get("model")) if isinstance(options, dict) else None
        if model or default:
            graders[name] = model or str(default)
    return graders


def _model_name(value: Any) -> str | None:
    """A model as the eval spec writes it: a name, ``{"model": name, ...}``, or a list."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict):
        return _model_name(value.get("model"))
    if isinstance(value, list):
        names = [name for name in map(_model_name, value) if name]
        return ", ".join(names) or None
    return None


# --- a JSON log -------------------------------------------------------------------------------


def _json_log(path: Path) -> bool:
    """Whether a file starts as Inspect writes a JSON log (``{"version": 2, "status": ...``)."""
    refuse_special_file(path)
    if not path.is_file():
        return False  # missing or a folder: the results reader says so
    try:
        with path.open("rb") as handle:
            start = handle.read(512)
    except OSError:
        return False
    return _JSON_LOG.match(start.removeprefix(BOM)) is not None


def _json_log_items(path: Path) -> Iterator[dict[str, Any]]:
    require_within_size(path)
    try:
        data = path.read_bytes().removeprefix(BOM)
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror}") from None
    document = _loads(path, None, data)
    found = items(path, document)
    if found is None:
        raise ParseError(path, "an Inspect log in JSON has a list of samples")
    return found


def _loads(path: Path, entry: str | None, data: bytes) -> Any:
    """JSON as Inspect writes it: ``NaN`` and ``Infinity`` are no value; nesting deeper than
    ``max_depth`` is refused."""
    where = f"{entry}: " if entry else ""
    try:
        value = json.loads(data, parse_constant=lambda _: None)
    except json.JSONDecodeError as error:
        if entry:
            raise ParseError(
                path, f"{where}not JSON ({error.msg}, line {error.lineno} column {error.colno})"
            ) from None
        raise ParseError(
            path, f"not JSON ({error.msg})", line=error.lineno, column=error.colno
        ) from None
    except UnicodeDecodeError as error:
        raise ParseError(path, f"{where}not UTF-8 text ({error.reason})") from None
    except (ValueError, RecursionError) as error:  # a number too long, nesting too deep
        reason = str(error) if isinstance(error, ValueError) else "nested too deeply"
        raise ParseError(path, f"{where}not JSON that Blueprint reads ({reason})") from None
    depth = limits.current().max_depth
    if _deeper_than(value, depth):
        raise ParseError(
            path,
            f"{where}values nested more than {depth} deep ({limits.hint('max_depth')})",
        )
    return value


def _deeper_than(value: Any, depth: int) -> bool:
    stack = [(value, 1)]
    while stack:
        current, level = stack.pop()
        if isinstance(current, dict | list):
            if level > depth:
                return True
            children = current.values() if isinstance(current, dict) else current
            stack.extend((child, level + 1) for child in children)
    return False


# --- a .eval archive ---------------------------------------------------------------------------


def _archive_items(path: Path) -> Iterator[dict[str, Any]]:
    """The samples of a ``.eval`` log, read one entry at a time while the archive is open."""
    refuse_special_file(path)
    require_file(path)
    require_within_size(path)
    try:
        with path.open("rb") as handle:
            try:
                archive = zipfile.ZipFile(handle)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError):
                raise ParseError(path, "not a zip archive (an Inspect .eval log is one)") from None
            with archive:
                yield from _archive_samples(path, archive, handle)
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror or error}") from None


def _archive_samples(
    path: Path, archive: zipfile.ZipFile, handle: IO[bytes]
) -> Iterator[dict[str, Any]]:
    infos = {info.filename: info for info in archive.infolist()}
    if HEADER not in infos:
        raise ParseError(
            path,
            f"{HEADER}: missing from the archive (an Inspect log has one once the eval ends)",
        )
    budget = _Budget(path)
    header = _entry_json(path, archive, handle, infos[HEADER], budget)
    spec = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(spec, dict):
        raise ParseError(path, f"{HEADER}: an Inspect log's header has the eval's spec (eval)")
    names = sorted(
        name for name in infos if name.startswith(SAMPLES) and name.lower().endswith(".json")
    )
    # the directory's sizes checked first, so an archive past a limit is refused before any
    # sample is inflated (each entry is checked again as it is: a directory may lie)
    planned = _Budget(path)
    for name in [HEADER, *names]:
        planned.check(name, infos[name].file_size)
        planned.spend(infos[name].file_size)
    samples = ((name, _entry_json(path, archive, handle, infos[name], budget)) for name in names)
    return _log_items(path, spec, samples, _several_epochs(spec, map(_entry_epoch, names)))


class _Budget:
    """The bytes an archive may inflate to: ``max_cell_bytes`` an entry, ``max_file_bytes`` in
    all (where they are set)."""

    def __init__(self, path: Path) -> None:
        bounds = limits.current()
        self.path = path
        self.entry = bounds.max_cell_bytes
        self.total = bounds.max_file_bytes
        self.used = 0

    def check(self, name: str, size: int) -> None:
        """Refuse an entry the archive's directory says inflates past a limit."""
        if self.entry and size > self.entry:
            raise ParseError(
                self.path,
                f"{name}: {size} bytes once inflated, more than the limit of {self.entry} an"
                f" entry ({limits.hint('max_cell_bytes')})",
            )
        if self.total and self.used + size > self.total:
            raise ParseError(
                self.path,
                f"{name}: the archive inflates to {self.used + size} bytes or more, more than"
                f" the limit of {self.total} ({limits.hint('max_file_bytes')})",
            )

    def spend(self, size: int) -> None:
        self.used += size


def _entry_json(
    path: Path,
    archive: zipfile.ZipFile,
    handle: IO[bytes],
    info: zipfile.ZipInfo,
    budget: _Budget,
) -> Any:
    return _loads(path, info.filename, _entry_bytes(path, archive, handle, info, budget))


def _entry_bytes(
    path: Path,
    archive: zipfile.ZipFile,
    handle: IO[bytes],
    info: zipfile.ZipInfo,
    budget: _Budget,
) -> bytes:
    """An entry's bytes, inflated no further than the budget allows and checked against the
    size and CRC the archive's directory gives."""
    name = info.filename
    if info.flag_bits & 0x1:
        raise ParseError(path, f"{name}: encrypted, which an Inspect log never is")
    budget.check(name, info.file_size)
    # never more than the directory says (and so than the limits allow): a bomb whose
    # directory lies stops one byte past what it claims
    bound = info.file_size
    if info.compress_type == ZSTANDARD:
        data = _zstandard(path, name, _raw(path, handle, info), bound)
    elif info.compress_type in _STDLIB_METHODS:
        try:
            with archive.open(info) as entry:
                data = _bounded_read(entry, bound)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as error:
            raise ParseError(path, f"{name}: cannot be decompressed ({error})") from None
    else:
        raise ParseError(
            path, f"{name}: compressed with method {info.compress_type}, which Blueprint reads not"
        )
    if len(data) != info.file_size:
        shown = f"at least {len(data)}" if len(data) > info.file_size else str(len(data))
        raise ParseError(
            path, f"{name}: inflates to {shown} bytes where the archive says {info.file_size}"
        )
    if zlib.crc32(data) != info.CRC:
        raise ParseError(path, f"{name}: its checksum does not match (the archive is damaged)")
    budget.spend(len(data))
    return data


def _raw(path: Path, handle: IO[bytes], info: zipfile.ZipInfo) -> bytes:
    """An entry's compressed bytes, found through its local header."""
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise ParseError(path, f"{info.filename}: the archive ends inside the entry")
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    if signature != _LOCAL_SIGNATURE:
        raise ParseError(path, f"{info.filename}: no entry where the archive's directory says")
    handle.seek(name_length + extra_length, io.SEEK_CUR)
    raw = handle.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise ParseError(path, f"{info.filename}: the archive ends inside the entry")
    return raw


def _zstandard(path: Path, name: str, raw: bytes, bound: int) -> bytes:
    import zstandard  # only a .eval log needs it

    try:
        with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader:
            return _bounded_read(reader, bound)
    except zstandard.ZstdError as error:
        raise ParseError(path, f"{name}: cannot be decompressed ({error})") from None


def _bounded_read(stream: Any, bound: int) -> bytes:
    """Everything a stream gives, or the first ``bound + 1`` bytes when it gives more."""
    chunks: list[bytes] = []
    size = 0
    while size <= bound:
        chunk = stream.read(min(_CHUNK, bound + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
