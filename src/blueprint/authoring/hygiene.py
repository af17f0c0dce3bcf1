"""Finding exact and near-duplicate inputs within and across sets, and the report of them.

Exact duplicates share the key of their normalised input (see
:mod:`blueprint.validation.inputtext`).
Near-duplicates are found with MinHash signatures (:mod:`blueprint.authoring.signatures`)
and locality-sensitive hashing over their bands, and every
candidate is confirmed with the actual Jaccard similarity of the two shingle sets, so a
reported pair is never a false positive. Each row is compared with the first row of every
group found so far; a row that matches none starts a group of its own. Memory holds, per
row, its position, id, split and input key, plus the shingle hashes, LSH band keys and part
of the signature of the rows that start a group: never a row."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from blueprint.authoring.editing import EditOptions, editing, output_target
from blueprint.authoring.signatures import ESTIMATE_PERM, Signature, signature_of
from blueprint.core import jsonpath
from blueprint.core.errors import UsageError
from blueprint.core.issues import Issue, make_issue
from blueprint.formats import (
    ExportResult,
    SetSource,
    SourceRow,
    StrPath,
    UnreadableRow,
    resolve_codec,
)
from blueprint.validation.inputtext import input_key, jaccard, split_of

#: the default Jaccard similarity (over words and adjacent word pairs) of a near-duplicate
DEFAULT_THRESHOLD: Final = 0.8
#: how far below the threshold a candidate's estimated similarity may fall (about three
#: standard deviations of the estimate) and still be compared exactly
ESTIMATE_MARGIN: Final = 0.2
#: how many candidates of one row are compared exactly, the likeliest first
MAX_COMPARED: Final = 8
#: how many groups one LSH bucket holds; later ones are found through their other bands
BUCKET_CAP: Final = 16
#: how many recent bucket entries wait in a dictionary before they join the sorted arrays
RECENT_ENTRIES: Final = 1 << 16


@dataclass(frozen=True)
class DuplicateOptions:
    """What counts as a duplicate: exact ones always, near ones at ``threshold`` unless
    ``near`` is off."""

    threshold: float = DEFAULT_THRESHOLD
    near: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise UsageError(f"--threshold {self.threshold}: a Jaccard similarity in (0, 1]")


# --- the report --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RowRef:
    """Where a row is: its set, position, id, physical line and split."""

    set: str
    index: int
    id: str | None
    line: int | None
    split: str | None
    #: the shard the row is in, for a set in shards (``line`` is a line of it)
    file: str | None = None

    def label(self) -> str:
        name = repr(self.id) if self.id is not None else "(no id)"
        shard = f", {self.file}" if self.file is not None else ""
        line = f", line {self.line}" if self.line is not None else ""
        return f"row {self.index} ({name}{shard}{line})"

    def to_json(self) -> dict[str, Any]:
        found = {
            "set": self.set,
            "index": self.index,
            "id": self.id,
            "line": self.line,
            "split": self.split,
        }
        if self.file is not None:
            found["file"] = self.file
        return found


def _splits(rows: Sequence[RowRef]) -> list[str]:
    return sorted({row.split for row in rows if row.split is not None})


class _Grouped(Protocol):
    @property
    def rows(self) -> tuple[RowRef, ...]: ...


class _Spread:
    """Where a group's rows lie: which splits, and whether in several sets."""

    @property
    def splits(self: _Grouped) -> list[str]:
        return _splits(self.rows)

    @property
    def across_splits(self: _Grouped) -> bool:
        return len(_splits(self.rows)) > 1

    @property
    def across_sets(self: _Grouped) -> bool:
        return len({row.set for row in self.rows}) > 1


@dataclass(frozen=True)
class ExactGroup(_Spread):
    """Rows whose inputs are the same once normalised; the first is the earliest."""

    rows: tuple[RowRef, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "acrossSets": self.across_sets,
            "acrossSplits": self.across_splits,
            "splits": self.splits,
            "rows": [row.to_json() for row in self.rows],
        }


@dataclass(frozen=True)
class NearMatch:
    row: RowRef
    #: the Jaccard similarity of its shingles to the group's first row
    similarity: float


@dataclass(frozen=True)
class NearGroup(_Spread):
    """Rows whose inputs are near-duplicates of the group's first row."""

    first: RowRef
    matches: tuple[NearMatch, ...]

    @property
    def rows(self) -> tuple[RowRef, ...]:
        return (self.first, *(match.row for match in self.matches))

    def to_json(self) -> dict[str, Any]:
        return {
            "acrossSets": self.across_sets,
            "acrossSplits": self.across_splits,
            "splits": self.splits,
            "first": self.first.to_json(),
            "matches": [
                {**match.row.to_json(), "similarity": round(match.similarity, 4)}
                for match in self.matches
            ],
        }


@dataclass(frozen=True)
class SetSummary:
    """One set that was searched: its rows, how many had an input to compare, its splits."""

    path: str
    format: str
    rows: int
    compared: int
    splits: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "rows": self.rows,
            "compared": self.compared,
            "splits": self.splits,
        }


@dataclass
class DuplicateReport:
    """Every exact and near-duplicate group found within and across the sets searched."""

    sets: list[SetSummary]
    #: the near-duplicate threshold; None when only exact duplicates were looked for
    threshold: float | None
    exact: list[ExactGroup] = field(default_factory=list)
    near: list[NearGroup] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.exact or self.near)

    def counts(self) -> dict[str, int]:
        groups: list[ExactGroup | NearGroup] = [*self.exact, *self.near]
        return {
            "exactGroups": len(self.exact),
            "exactRows": sum(len(group.rows) - 1 for group in self.exact),
            "nearGroups": len(self.near),
            "nearRows": sum(len(group.matches) for group in self.near),
            "acrossSets": sum(1 for group in groups if group.across_sets),
            "acrossSplits": sum(1 for group in groups if group.across_splits),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "duplicates": self.found,
            "threshold": self.threshold,
            "sets": [summary.to_json() for summary in self.sets],
            "counts": self.counts(),
            "exact": [group.to_json() for group in self.exact],
            "near": [group.to_json() for group in self.near],
        }

    def issues_for(self, path: StrPath, *, across_sets_only: bool = False) -> list[Issue]:
        """The findings on one searched set's rows, as validator issues: each repeat names the
        row it repeats (in this set or another), and is reported on the later row.

        ``across_sets_only`` leaves out an exact repeat of a row of the same set (the
        validator reports those itself, as ``duplicate-input``)."""
        label = str(Path(path))
        found: list[Issue] = []
        for group in self.exact:
            first = group.rows[0]
            for row in group.rows[1:]:
                if row.set != label:
                    continue
                if across_sets_only and all(r.set == label for r in group.rows):
                    continue
                other = _other(first, row)
                split_rows = [r for r in group.rows if r.split is not None]
                clash = next((r for r in split_rows if row.split and r.split != row.split), None)
                if clash is not None:
                    found.append(
                        _row_issue(
                            "duplicate-input-across-splits",
                            row,
                            other=_other(clash, row),
                            split=row.split,
                            other_split=clash.split,
                        )
                    )
                else:
                    found.append(_row_issue("duplicate-input", row, other=other))
        for near in self.near:
            for match in near.matches:
                if match.row.set != label:
                    continue
                splits = ""
                if near.first.split and match.row.split and near.first.split != match.row.split:
                    splits = (
                        f"; the rows are in different splits ({near.first.split!r} and"
                        f" {match.row.split!r})"
                    )
                found.append(
                    _row_issue(
                        "near-duplicate-input",
                        match.row,
                        other=_other(near.first, match.row),
                        similarity=f"{match.similarity:.2f}",
                        threshold=f"{self.threshold:.2f}",
                        splits=splits,
                    )
                )
        found.sort(key=lambda issue: (issue.row_index or 0, issue.code))
        return found


def _other(row: RowRef, seen_from: RowRef) -> str:
    where = "" if row.set == seen_from.set else f" of {row.set}"
    return row.label() + where


def _row_issue(code: str, row: RowRef, **context: Any) -> Issue:
    return make_issue(
        code,
        path=jsonpath.row_path(row.index, "input"),
        row_index=row.index,
        row_id=row.id,
        line=row.line,
        **context,
    )


# --- the index ---------------------------------------------------------------------------------


class _Bands:
    """The LSH buckets of the groups found so far, kept compact.

    Each group's first row is kept under each of its band keys (:class:`_Banding`), in a
    sorted numpy array (12 bytes an entry) plus a small dictionary of recent ones merged
    into it now and then. datasketch's own ``MinHashLSH`` keeps a Python set per bucket,
    about 4.5 KB per indexed input (450 MB for 100,000 distinct inputs), and returns whole
    buckets however large. A bucket here holds at most ``BUCKET_CAP`` groups.
    """

    def __init__(self) -> None:
        import numpy

        self._keys = numpy.empty(0, dtype=numpy.uint64)
        self._members = numpy.empty(0, dtype=numpy.int32)
        self._recent: dict[int, list[int]] = {}
        self._recent_entries = 0

    def candidates(self, keys: Any) -> tuple[list[int], list[int]]:
        """The groups sharing a bucket with the keys, and each bucket's size."""
        import numpy

        left = numpy.searchsorted(self._keys, keys, "left")
        right = numpy.searchsorted(self._keys, keys, "right")
        found: list[int] = []
        sizes: list[int] = []
        for band, key in enumerate(keys.tolist()):
            start, end = int(left[band]), int(right[band])
            recent = self._recent.get(key, ())
            if start < end:
                found.extend(self._members[start:end].tolist())
            found.extend(recent)
            sizes.append(end - start + len(recent))
        return sorted(set(found)), sizes

    def insert(self, member: int, keys: Any, sizes: list[int]) -> None:
        for key, size in zip(keys.tolist(), sizes, strict=True):
            if size < BUCKET_CAP:
                self._recent.setdefault(key, []).append(member)
                self._recent_entries += 1
        if self._recent_entries >= RECENT_ENTRIES:
            self._merge()

    def _merge(self) -> None:
        import numpy

        keys = numpy.fromiter(
            (key for key, members in self._recent.items() for _ in members),
            dtype=numpy.uint64,
            count=self._recent_entries,
        )
        members = numpy.fromiter(
            (member for found in self._recent.values() for member in found),
            dtype=numpy.int32,
            count=self._recent_entries,
        )
        all_keys = numpy.concatenate((self._keys, keys))
        # stable: within a bucket, groups stay in the order they were found
        order = numpy.argsort(all_keys, kind="stable")
        self._keys = all_keys[order]
        self._members = numpy.concatenate((self._members, members))[order]
        self._recent, self._recent_entries = {}, 0


class DuplicateIndex:
    """Rows added one at a time, each matched against the rows before it.

    ``add`` returns the row's number in the index (None when its input has nothing to
    compare); ``group_of`` gives the number of the first row of the row's group, so rows of
    one group share it.
    """

    def __init__(self, options: DuplicateOptions | None = None) -> None:
        self.options = options or DuplicateOptions()
        #: per row: (set number, row index, line, id, split)
        self.rows: list[tuple[int, int, int | None, str | None, str | None, str | None]] = []
        self._first_by_key: dict[int, int] = {}
        #: row -> the first row with the same normalised input
        self.exact_of: dict[int, int] = {}
        #: row (the first of its exact group) -> (the first row of its near group, similarity)
        self.near_of: dict[int, tuple[int, float]] = {}
        # the rows that start a group ("leaders"), by their position among leaders: the row
        # number, the shingle hashes (one flat array) and part of the MinHash signature
        self._leaders: array[int] = array("q")
        self._shingles: array[int] = array("I")
        self._shingle_starts: array[int] = array("q", [0])
        self._estimates: Any = None
        self._bands: _Bands | None = None  # made (and numpy imported) at the first match

    def add(
        self,
        value: Any,
        *,
        set_number: int = 0,
        index: int,
        line: int | None = None,
        row_id: str | None = None,
        split: str | None = None,
        file: str | None = None,
    ) -> int | None:
        key = input_key(value)  # the validator's duplicate key: one normalisation for both
        if key is None:
            return None
        number = len(self.rows)
        self.rows.append((set_number, index, line, row_id, split, file))
        first = self._first_by_key.setdefault(key, number)
        if first != number:
            self.exact_of[number] = first
            return number
        if self.options.near:
            signature = signature_of(value, self.options.threshold)
            if signature is not None:
                self.match(number, signature)
        return number

    def match(self, number: int, signature: Signature) -> None:
        """Row ``number`` (the first of its exact group) joins the near group of the first
        similar enough group leader before it, or starts a group of its own. Rows are
        matched in order; only rows whose band keys meet matter to one another."""
        if self._bands is None:
            self._bands = _Bands()
        bands = self._bands
        candidates, sizes = bands.candidates(signature.keys)
        mine = set(signature.hashes)
        # the group whose first row is similar enough, the likeliest first; a row that joins
        # a group is not indexed, so a cluster of look-alikes costs one entry
        for leader in self._likely(candidates, signature.estimate):
            theirs = self._shingles[self._shingle_starts[leader] : self._shingle_starts[leader + 1]]
            similarity = jaccard(mine, theirs)
            if similarity >= self.options.threshold:
                self.near_of[number] = (self._leaders[leader], similarity)
                return
        self._keep_leader(number, signature.hashes, signature.estimate)
        bands.insert(len(self._leaders) - 1, signature.keys, sizes)

    def _keep_leader(self, number: int, hashes: array[int], values: Any) -> None:
        import numpy

        position = len(self._leaders)
        if self._estimates is None or position == len(self._estimates):
            grown = numpy.empty((max(1024, 2 * position), ESTIMATE_PERM), values.dtype)
            if self._estimates is not None:
                grown[:position] = self._estimates
            self._estimates = grown
        self._estimates[position] = values[:ESTIMATE_PERM]
        self._leaders.append(number)
        self._shingles.extend(hashes)
        self._shingle_starts.append(len(self._shingles))

    def _likely(self, candidates: list[int], values: Any) -> list[int]:
        """The candidates worth an exact comparison, likeliest first (ties: earliest first).

        One vectorised comparison of MinHash signatures estimates every candidate's
        similarity; those whose estimate comes near the threshold are compared exactly, at
        most ``MAX_COMPARED`` of them, so a set of many look-alike groups (a template filled
        with different values) does not make every row compare itself with all of them.
        """
        if not candidates:
            return []
        import numpy

        found = numpy.array(candidates, dtype=numpy.int64)
        estimates = (self._estimates[found] == values[:ESTIMATE_PERM]).mean(axis=1)
        kept = estimates >= self.options.threshold - ESTIMATE_MARGIN
        found, estimates = found[kept], estimates[kept]
        order = numpy.lexsort((found, -estimates))[:MAX_COMPARED]
        return [int(leader) for leader in found[order]]

    def group_of(self, number: int) -> int:
        """The first row of the group a row belongs to (itself when it has no duplicate)."""
        first = self.exact_of.get(number, number)
        near = self.near_of.get(first)
        return near[0] if near is not None else first

    def report(
        self, sets: list[SetSummary], line_of: Sequence[Any] | None = None
    ) -> DuplicateReport:
        """The groups found; ``line_of[set number](row index)`` fills in lines a format
        works out only when asked (JSON)."""

        def ref(number: int) -> RowRef:
            set_number, index, line, row_id, split, file = self.rows[number]
            if line is None and line_of is not None:
                line = line_of[set_number](index)
            return RowRef(sets[set_number].path, index, row_id, line, split, file)

        exact: dict[int, list[int]] = {}
        for number, first in self.exact_of.items():
            exact.setdefault(first, [first]).append(number)
        near: dict[int, list[tuple[int, float]]] = {}
        for number, (first, similarity) in self.near_of.items():
            near.setdefault(first, []).append((number, similarity))
        return DuplicateReport(
            sets=sets,
            threshold=self.options.threshold if self.options.near else None,
            exact=[
                ExactGroup(tuple(ref(number) for number in members))
                for _, members in sorted(exact.items())
            ],
            near=[
                NearGroup(
                    ref(first),
                    tuple(NearMatch(ref(number), similarity) for number, similarity in members),
                )
                for first, members in sorted(near.items())
            ],
        )


# --- reading sets ------------------------------------------------------------------------------


def read_rows(source: SetSource) -> Iterator[tuple[int, int | None, Any]]:
    """(index, line, raw row) for every row; a row that cannot be read stops the search."""
    for item in read_source_rows(source):
        yield item.index, item.line, item.data


def read_source_rows(source: SetSource) -> Iterator[SourceRow]:
    """Every row as read (with the file it is in, where that is not the set's); a row that
    cannot be read stops the search."""
    source.require_structure()
    for item in source.rows:
        if isinstance(item, UnreadableRow):
            raise item.error(source.path)
        yield item


def _row_id(row: Any) -> str | None:
    row_id = row.get("id") if isinstance(row, dict) else None
    return row_id if isinstance(row_id, str) else None


def index_set(
    index: DuplicateIndex,
    path: Path,
    set_number: int,
    format: str | None = None,
    split: str | None = None,
) -> tuple[SetSummary, SetSource]:
    """Add every row of a set file to the index; the summary and the (spent) source.

    ``split`` is the split of a file that is one split (a project's test set): rows that name
    no split of their own are taken to be in it. A row read from a file other than the
    set's (a shard of a set in shards) names it.
    """
    default_split = split
    source = resolve_codec(path, format, reading=True).open(path)
    rows = compared = 0
    splits: Counter[str] = Counter()
    for item in read_source_rows(source):
        row = item.data
        rows += 1
        split = split_of(row) or default_split
        if split is not None:
            splits[split] += 1
        number = index.add(
            row.get("input") if isinstance(row, dict) else None,
            set_number=set_number,
            index=item.index,
            line=item.line,
            row_id=_row_id(row),
            split=split,
            file=None if item.file is None else str(item.file),
        )
        compared += number is not None
    summary = SetSummary(str(path), source.format, rows, compared, dict(sorted(splits.items())))
    return summary, source


def distinct_paths(paths: Sequence[StrPath]) -> list[Path]:
    """The paths, refusing one given twice (every row would repeat itself)."""
    found: dict[Path, Path] = {}
    for given in map(Path, paths):
        key = given.resolve()
        if key in found:
            raise UsageError(f"{given}: given twice (as {found[key]} too)")
        found[key] = given
    if not found:
        raise UsageError("no set given")
    return list(found.values())


def find_duplicates(
    paths: Sequence[StrPath],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    near: bool = True,
    format: str | None = None,
    formats: Sequence[str | None] | None = None,
    splits: Sequence[str | None] | None = None,
) -> DuplicateReport:
    """Exact and near-duplicate inputs within and across the set files, in the order given.

    ``format`` names the format of every file (default: each file's extension and content);
    ``formats`` names one per file instead. ``splits`` gives, per file, the split its rows
    are in when they name none (a file that is one split). A file that cannot be read
    raises :class:`ParseError` naming it.
    """
    index = DuplicateIndex(DuplicateOptions(threshold=threshold, near=near))
    summaries: list[SetSummary] = []
    sources: list[SetSource] = []
    files = distinct_paths(paths)
    per_file = list(formats) if formats is not None else [format] * len(files)
    file_splits = list(splits) if splits is not None else [None] * len(files)
    if len(per_file) != len(files) or len(file_splits) != len(files):
        raise UsageError("formats and splits name one value per set")
    for number, path in enumerate(files):
        summary, source = index_set(index, path, number, per_file[number], file_splits[number])
        summaries.append(summary)
        sources.append(source)
    return index.report(summaries, [source.line_of for source in sources])


# --- writing a set without its repeats ---------------------------------------------------------


@dataclass
class DedupeResult:
    """What writing the last set without its exact repeats did."""

    report: DuplicateReport
    output: Path
    export: ExportResult
    #: every row left out, with the earlier row whose input it repeats
    removed: list[tuple[RowRef, RowRef]]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "output": str(self.output),
            "format": self.export.format,
            "rows": self.export.rows,
            "removed": [
                {**row.to_json(), "repeats": first.to_json()} for row, first in self.removed
            ],
            "notes": self.notes,
        }


def remove_duplicates(
    paths: Sequence[StrPath],
    output: StrPath,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    near: bool = True,
    format: str | None = None,
    force: bool = False,
) -> DedupeResult:
    """Find duplicates as :func:`find_duplicates` does, then write the last set to
    ``output`` without its rows whose input exactly repeats an earlier row's (earlier in it,
    or in a set given before it). Near-duplicates are reported, never removed: whether two
    similar inputs are one case is for a person to decide. An output that is the set itself
    rewrites it as an edit does (see :func:`blueprint.authoring.editing.editing`).
    """
    given = distinct_paths(paths)
    last = given[-1]
    target = output_target(last, format, Path(output), force)
    with editing(last, EditOptions(format), rewrite=target.in_place) as edited:
        report = find_duplicates(given, threshold=threshold, near=near, format=format)
        label = str(last)
        removed = [
            (row, group.rows[0])
            for group in report.exact
            for row in group.rows[1:]
            if row.set == label
        ]
        left_out = {row.index for row, _ in removed}
        kept = (row for position, _, row in read_rows(edited.source()) if position not in left_out)
        export = target.write(edited, kept, report.sets[-1].rows - len(left_out))
    removed.sort(key=lambda pair: pair[0].index)
    return DedupeResult(report, target.path, export, removed, edited.notes)
