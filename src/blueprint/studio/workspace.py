"""The sets a studio serves: each read and validated in one pass, kept in memory, and read
again when its files change on disk.

A set is validated by the same pass as ``blueprint validate`` (:func:`validate_opened`), and
each finding is kept with its row. What a page shows of a row (its oracle type, evaluator,
provenance, split, family) is worked out once, at load, so filtering 50,000 rows is a loop
over small records.
"""

from __future__ import annotations

import gc
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from blueprint.authoring.rowedit import row_version
from blueprint.core.errors import BlueprintError, ParseError
from blueprint.core.issues import Issue, ValidationReport
from blueprint.core.model import STARTER_PROVENANCES
from blueprint.formats import SourceRow, UnreadableRow, resolve_codec
from blueprint.formats.setfile import set_file_for
from blueprint.io.locking import Stamp, stamp_of
from blueprint.validation.stream import ValidationOptions
from blueprint.validation.validate import validate_opened

#: how often (in rows) a load reports its progress
PROGRESS_EVERY: Final = 5000

#: progress of a load: the set's file and the rows read so far
Progress = Callable[[Path, int], None]


@dataclass
class StudioRow:
    """One row as the studio shows it: the row itself, its findings and what filters read."""

    index: int
    data: Any
    #: the row's line where the reader knew it as it read (see :attr:`line`)
    read_line: int | None
    findings: list[Issue] = field(default_factory=list)
    #: why the row could not be read (None: it was)
    unreadable: str | None = None
    #: the reader's way to a row's line, asked only when a page shows it (a JSON document
    #: counts newlines to answer)
    line_of: Callable[[int], int | None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        data = self.data if isinstance(self.data, dict) else {}
        metadata = data.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        case = metadata.get("case")
        self.case: dict[str, Any] = case if isinstance(case, dict) else {}
        self.id: str | None = data["id"] if isinstance(data.get("id"), str) else None
        self.oracle_type = _text(self.case.get("oracleType"))
        self.provenance = _text(self.case.get("provenance"))
        self.family = _text(self.case.get("caseFamily"))
        self.split = _text(metadata.get("split"))
        self.evaluator = _text(self.case.get("evaluator"))

    @cached_property
    def line(self) -> int | None:
        if self.read_line is not None or self.line_of is None:
            return self.read_line
        return self.line_of(self.index)

    @cached_property
    def codes(self) -> frozenset[str]:
        return frozenset(issue.code for issue in self.findings)

    @cached_property
    def version(self) -> str:
        """The version of the row as read (see :func:`row_version`): what a page made from
        it sends back, so that a save over a row changed since is refused."""
        return row_version(self.data)

    @property
    def severities(self) -> Counter[str]:
        return Counter(issue.severity for issue in self.findings)

    def review(self) -> dict[str, Any] | None:
        """The review record ``promote`` wrote, if any."""
        extensions = self.case.get("extensions")
        record = extensions.get("blueprint-review") if isinstance(extensions, dict) else None
        return record if isinstance(record, dict) else None

    def derived(self) -> dict[str, Any]:
        """The values an import derived and no one has accepted yet."""
        extensions = self.case.get("extensions")
        record = extensions.get("blueprint-import") if isinstance(extensions, dict) else None
        derived = record.get("derived") if isinstance(record, dict) else None
        return derived if isinstance(derived, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass
class StudioSet:
    """A set as loaded: its set-level fields, rows and findings, and the files' stamps."""

    key: str
    path: Path
    format: str
    #: whether the studio may write it (a canonical set; a vendor file is read only)
    editable: bool
    header: dict[str, Any]
    rows: list[StudioRow]
    #: findings about the set as a whole (set-level fields, the file)
    findings: list[Issue]
    report: ValidationReport | None
    stamp: tuple[Stamp | None, ...]
    #: why the set could not be read at all (None: it was)
    unreadable: str | None = None

    def __post_init__(self) -> None:
        self.by_id: dict[str, list[int]] = {}
        for row in self.rows:
            if row.id is not None:
                self.by_id.setdefault(row.id, []).append(row.index)
        families = self.header.get("caseFamilies")
        self.families: dict[str, dict[str, Any]] = {
            family["id"]: family
            for family in families or []
            if isinstance(family, dict) and isinstance(family.get("id"), str)
        }
        for row in self.rows:  # a row without its own evaluator takes its family's
            if row.evaluator is None and row.family in self.families:
                row.evaluator = _text(self.families[row.family].get("evaluator"))

    @property
    def name(self) -> str:
        name = self.header.get("name")
        return name if isinstance(name, str) and name else self.path.stem

    def row(self, row_id: str) -> StudioRow | None:
        """The one row with this id (None: no row, or several, have it)."""
        found = self.by_id.get(row_id, [])
        return self.rows[found[0]] if len(found) == 1 else None

    def counts(self) -> dict[str, int]:
        tally: Counter[str] = Counter()
        for issue in self.findings:
            tally[issue.severity] += 1
        for row in self.rows:
            tally.update(row.severities)
        return {severity: tally.get(severity, 0) for severity in ("error", "warning", "info")}

    def values(self, attribute: str) -> list[str]:
        """The values one filterable attribute takes across the rows, sorted."""
        return sorted({value for row in self.rows if (value := getattr(row, attribute))})

    def codes(self) -> list[str]:
        return sorted({code for row in self.rows for code in row.codes})


def _stamp(path: Path) -> tuple[Stamp | None, ...]:
    """What changes when the set's files change (see :func:`stamp_of`); a file that cannot
    be looked at counts as absent, and the load says why."""
    stamps: list[Stamp | None] = []
    for file in (path, set_file_for(path)):
        try:
            stamps.append(stamp_of(file))
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def load_set(key: str, path: Path, progress: Progress | None = None) -> StudioSet:
    """Read and validate a set in one pass, keeping each row with its findings.

    The rows stay in memory for as long as the studio serves them, so the cyclic garbage
    collector is kept from scanning them: paused while they are read, and the loaded rows
    frozen afterwards (they are let go, and freed, when the set is read again)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_set(key, path, progress)
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


def _load_set(key: str, path: Path, progress: Progress | None) -> StudioSet:
    stamp = _stamp(path)
    try:
        codec = resolve_codec(path, None, reading=True)
        source = codec.open(path)
    except (ParseError, BlueprintError) as error:
        return StudioSet(key, path, "?", False, {}, [], [], None, stamp, unreadable=str(error))
    items: list[SourceRow | UnreadableRow] = []

    def observe(item: SourceRow | UnreadableRow) -> None:
        items.append(item)
        if progress is not None and len(items) % PROGRESS_EVERY == 0:
            progress(path, len(items))

    try:
        report = validate_opened(
            path, codec, source, ValidationOptions(row_ids=False), observe=observe
        )
    except (ParseError, BlueprintError) as error:
        return StudioSet(
            key, path, codec.name, False, {}, [], [], None, stamp, unreadable=str(error)
        )
    if progress is not None:
        progress(path, len(items))
    by_row: dict[int, list[Issue]] = {}
    set_findings: list[Issue] = []
    for issue in report.issues:
        if issue.row_index is None:
            set_findings.append(issue)
        else:
            by_row.setdefault(issue.row_index, []).append(issue)
    rows = [_studio_row(item, by_row.get(item.index, []), source.line_of) for item in items]
    return StudioSet(
        key,
        path,
        codec.name,
        codec.lossless,
        dict(source.header or {}),
        rows,
        set_findings,
        report,
        stamp,
    )


def _studio_row(
    item: SourceRow | UnreadableRow, findings: list[Issue], line_of: Callable[[int], int | None]
) -> StudioRow:
    if isinstance(item, UnreadableRow):
        # a row of another file than the set's (a dataset folder's data file) names it
        reason = item.reason if item.file is None else f"{item.file.name}: {item.reason}"
        return StudioRow(item.index, None, item.line, findings, unreadable=reason)
    return StudioRow(item.index, item.data, item.line, findings, line_of=line_of)


# --- what a page asks for --------------------------------------------------------------------

#: the filters of the rows page: query parameter -> the row attribute it reads
FILTERS: Final = {
    "oracle": "oracle_type",
    "evaluator": "evaluator",
    "provenance": "provenance",
    "split": "split",
    "family": "family",
}


@dataclass(frozen=True)
class RowFilter:
    """Which rows a page lists: equal attributes, a finding's code, and text in the row."""

    equal: tuple[tuple[str, str], ...] = ()
    code: str | None = None
    text: str | None = None

    @classmethod
    def from_query(cls, query: dict[str, str]) -> RowFilter:
        equal = tuple(
            (attribute, query[name]) for name, attribute in FILTERS.items() if query.get(name)
        )
        return cls(equal, query.get("code") or None, (query.get("q") or "").strip() or None)

    def matches(self, row: StudioRow) -> bool:
        if any(getattr(row, attribute) != value for attribute, value in self.equal):
            return False
        if self.code is not None:
            if self.code == "any" and not row.findings:
                return False
            if self.code != "any" and self.code not in row.codes:
                return False
        if self.text is not None:
            needle = self.text.casefold()
            haystack = f"{row.id} {row.data.get('input') if isinstance(row.data, dict) else ''}"
            if needle not in haystack.casefold():
                return False
        return True


@dataclass(frozen=True)
class Queue:
    """A review queue: the rows that wait for a person, and what they wait for."""

    name: str
    title: str
    why: str
    test: Callable[[StudioRow], bool]


def _needs_expert(row: StudioRow) -> bool:
    if "missing-reviewer-expertise" in row.codes:
        return True
    expertise = row.case.get("reviewerExpertise")
    return isinstance(expertise, str) and bool(expertise.strip()) and row.review() is None


QUEUES: Final = {
    queue.name: queue
    for queue in (
        Queue(
            "starter",
            "Starter rows",
            "Examples from a pack: gold only once someone who knows the domain promotes them.",
            lambda row: row.provenance in STARTER_PROVENANCES,
        ),
        Queue(
            "derived",
            "Derived on import",
            "Values an importer had to infer: confirm them (accept) or correct them.",
            lambda row: bool(row.derived()),
        ),
        Queue(
            "behavior",
            "Expected behaviour only",
            "No answer to compare with: a person judges the behaviour the row describes.",
            lambda row: row.oracle_type == "expected-behavior-only",
        ),
        Queue(
            "expertise",
            "Waiting for an expert",
            "Rows that need a reviewer with named expertise and have not been reviewed, or"
            " that do not say which expertise they need.",
            _needs_expert,
        ),
    )
}


class Workspace:
    """The sets a studio serves, by key; a set whose files changed is read again."""

    def __init__(self, paths: Iterable[Path], progress: Progress | None = None) -> None:
        self._lock = threading.Lock()
        self._progress = progress
        self._sets: dict[str, StudioSet] = {}
        for number, path in enumerate(paths, start=1):
            key = str(number)
            self._sets[key] = load_set(key, path, progress)

    def __iter__(self) -> Iterator[StudioSet]:
        return iter([self.get(key) for key in list(self._sets)])

    def __len__(self) -> int:
        return len(self._sets)

    def get(self, key: str) -> StudioSet:
        """The set, read again first if its files changed (KeyError: no such set)."""
        with self._lock:
            loaded = self._sets[key]
            if _stamp(loaded.path) != loaded.stamp:
                loaded = self._sets[key] = load_set(key, loaded.path, self._progress)
            return loaded

    def reload(self, key: str) -> StudioSet:
        with self._lock:
            loaded = self._sets[key] = load_set(key, self._sets[key].path, self._progress)
            return loaded
