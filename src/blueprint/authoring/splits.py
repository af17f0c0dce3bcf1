"""Splitting a set into seeded, stratified splits, and drawing seeded, stratified samples.

A stratum is a case family and an oracle type. Each stratum is shared out between the splits
(or the sample between the strata) by the largest-remainder rule: every part gets the whole
part of its quota, and the rows left over go to the largest fractional parts. Splitting
carries each stratum's shortfall to the next, so that strata too small to split (one row
each) still add up to the ratios overall. Where a stratum has at least as many rows as there
are splits, a split the rule left empty takes one row from the split furthest above its
quota, so that every split sees every kind of case.

Splitting keeps exact and near-duplicate inputs together (see
:mod:`blueprint.authoring.hygiene`), so no case leaks from one split into another. Randomness
comes from ``random.Random`` seeded with text built from the seed and the stratum, never from
Python's per-process hash seed: the same seed gives the same result on every run and machine.
"""

from __future__ import annotations

import math
import random
import re
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.authoring.editing import (
    EditableSet,
    EditOptions,
    EditRefused,
    Target,
    editing,
    output_target,
)
from blueprint.authoring.hygiene import DuplicateIndex, DuplicateOptions, read_rows
from blueprint.core.errors import UsageError
from blueprint.formats import ExportResult, StrPath

#: a stratum: (case family, oracle type); None where the row names none
Stratum = tuple[str | None, str | None]

#: what a split may be called: dev, test, train_2, holdout.v1
_SPLIT_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def stratum_of(row: Any) -> Stratum:
    metadata = row.get("metadata") if isinstance(row, dict) else None
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if not isinstance(case, dict):
        return (None, None)
    family, oracle_type = case.get("caseFamily"), case.get("oracleType")
    return (
        family if isinstance(family, str) else None,
        oracle_type if isinstance(oracle_type, str) else None,
    )


def _stratum_order(stratum: Stratum) -> tuple[str, str]:
    return (stratum[0] or "", stratum[1] or "")


def _rng(purpose: str, seed: int, stratum: Stratum) -> random.Random:
    # a text seed is hashed with SHA-512 by random.Random: stable across runs, unlike hash()
    return random.Random(f"blueprint-{purpose}:{seed}:{stratum[0] or ''}:{stratum[1] or ''}")


def largest_remainder(
    total: int,
    weights: Sequence[float],
    *,
    at_least_one: bool,
    carried: Sequence[float] | None = None,
    tie_order: Sequence[int] | None = None,
) -> list[int]:
    """Share ``total`` out in proportion to ``weights`` (the largest-remainder rule).

    Every part gets the whole part of its quota; the rest go one each to the parts with the
    largest fractional remainders, plus ``carried`` (what earlier shares fell short of their
    quotas, so that many small shares add up to the proportions), and ties go by
    ``tie_order`` (default: the order listed). Each part ends within one of its quota. With
    ``at_least_one`` and ``total >= len(weights)``, a part left with nothing then takes one
    from the part furthest above its quota.
    """
    weight_sum = math.fsum(weights)
    quotas = [total * weight / weight_sum for weight in weights]
    counts = [math.floor(quota) for quota in quotas]
    carry = carried or [0.0] * len(weights)
    rank = tie_order or range(len(weights))
    # only a part with a fractional remainder may round up, so none ends a whole row off
    fractional = [i for i in range(len(quotas)) if quotas[i] > counts[i]]
    fractional.sort(key=lambda i: (-(quotas[i] - counts[i] + carry[i]), rank[i]))
    for position in fractional[: total - sum(counts)]:
        counts[position] += 1
    if at_least_one and total >= len(weights):
        for empty in [i for i, count in enumerate(counts) if count == 0]:
            donors = [i for i, count in enumerate(counts) if count >= 2]
            donor = max(donors, key=lambda i: (counts[i] - quotas[i], -rank[i]))
            counts[donor] -= 1
            counts[empty] += 1
    return counts


def parse_ratios(text: str) -> tuple[tuple[str, float], ...]:
    """``train=0.8,test=0.2`` as ((name, ratio), ...): two or more distinct names, positive
    ratios that sum to 1."""
    ratios: dict[str, float] = {}
    for part in (piece.strip() for piece in text.split(",")):
        name, equals, value = part.partition("=")
        name = name.strip()
        if not equals or not _SPLIT_NAME.fullmatch(name):
            raise UsageError(
                f"--ratios {text!r}: each part is NAME=RATIO with a name like dev, test or"
                f" train_2 (got {part!r})"
            )
        if name in ratios:
            raise UsageError(f"--ratios {text!r}: the split {name!r} is named twice")
        try:
            ratio = float(value)
        except ValueError:
            raise UsageError(f"--ratios {text!r}: {value.strip()!r} is not a number") from None
        if not 0 < ratio <= 1 or not math.isfinite(ratio):
            raise UsageError(f"--ratios {text!r}: a ratio is above 0 and at most 1")
        ratios[name] = ratio
    if len(ratios) < 2:
        raise UsageError(f"--ratios {text!r}: name at least two splits")
    if not math.isclose(math.fsum(ratios.values()), 1, abs_tol=1e-6):
        raise UsageError(
            f"--ratios {text!r}: the ratios sum to {math.fsum(ratios.values()):g}, not 1"
        )
    return tuple(ratios.items())


def _rows(opened: EditableSet) -> Iterator[tuple[int, int | None, Any]]:
    return read_rows(opened.source())


# --- split -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SplitOptions:
    """How to split: named ratios, a seed, and what counts as a duplicate to keep together."""

    ratios: tuple[tuple[str, float], ...]
    seed: int
    #: replace the splits rows already carry (refused otherwise)
    reassign: bool = False
    duplicates: DuplicateOptions = field(default_factory=DuplicateOptions)
    #: replace an existing output file
    force: bool = False

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.ratios]


@dataclass
class StratumSplit:
    """How one stratum was shared out: its rows, the row count per split, and the targets."""

    family: str | None
    oracle_type: str | None
    rows: int
    counts: dict[str, int]
    targets: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "caseFamily": self.family,
            "oracleType": self.oracle_type,
            "rows": self.rows,
            "splits": self.counts,
            "targets": {name: round(target, 4) for name, target in self.targets.items()},
        }


@dataclass
class SplitResult:
    source: Path
    output: Path
    export: ExportResult
    options: SplitOptions
    strata: list[StratumSplit]
    totals: dict[str, int]
    #: groups of rows kept in one split because their inputs are (near-)duplicates
    groups: int = 0
    grouped_rows: int = 0
    largest_group: int = 0
    #: rows whose existing split was replaced (with reassign)
    replaced: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "output": str(self.output),
            "format": self.export.format,
            "rows": self.export.rows,
            "seed": self.options.seed,
            "ratios": dict(self.options.ratios),
            "splits": self.totals,
            "strata": [stratum.to_json() for stratum in self.strata],
            "duplicateGroups": {
                "groups": self.groups,
                "rows": self.grouped_rows,
                "largest": self.largest_group,
                "threshold": self.options.duplicates.threshold
                if self.options.duplicates.near
                else None,
            },
            "replaced": self.replaced,
            "notes": self.notes,
        }


def split_set(
    path: StrPath,
    options: SplitOptions,
    *,
    output: StrPath | None = None,
    format: str | None = None,
) -> SplitResult:
    """Give every row of a set a ``metadata.split``, and write the set to ``output`` (a
    canonical format) or, when ``output`` is None, back in place (canonical formats only).

    Refuses, writing nothing, when rows already carry a split (unless ``reassign``) or a row
    has no metadata object to hold one. In place, the set is rewritten as an edit rewrites
    it (see :func:`blueprint.authoring.editing.editing`).
    """
    target = output_target(Path(path), format, Path(output) if output else None, options.force)
    with editing(path, EditOptions(format), rewrite=target.in_place) as opened:
        index = DuplicateIndex(options.duplicates)
        strata: dict[Stratum, int] = {}
        stratum_ids = array("l")
        group_first = array("q")
        existing = 0
        example: tuple[int, Any, Any] | None = None
        for position, line, row in _rows(opened):
            metadata = row.get("metadata") if isinstance(row, dict) else None
            row_id = row.get("id") if isinstance(row, dict) else None
            if not isinstance(metadata, dict):
                raise EditRefused(
                    f"{opened.path}: row {position} ({row_id!r}) has no metadata object to hold its"
                    " split; run blueprint validate and fix the row first"
                )
            if "split" in metadata:
                existing += 1
                example = example or (position, row_id, metadata["split"])
            stratum_ids.append(strata.setdefault(stratum_of(row), len(strata)))
            number = index.add(
                row.get("input"),
                index=position,
                line=line,
                row_id=row_id if isinstance(row_id, str) else None,
            )
            # a group is kept with its first row, which came before
            first = position if number is None else index.rows[index.group_of(number)][1]
            group_first.append(first)
        if example is not None and not options.reassign:
            position, row_id, value = example
            raise EditRefused(
                f"{opened.path}: {existing} row(s) already carry metadata.split (row {position}"
                f" {row_id!r}: {value!r}); pass --reassign to replace them"
            )
        total = len(group_first)
        assigned = _assign(options, strata, stratum_ids, group_first)

        names = options.names

        def with_splits() -> Iterator[Any]:
            for position, _, row in _rows(opened):
                row["metadata"]["split"] = names[assigned[position]]
                yield row

        export = target.write(opened, with_splits(), total)
    result = SplitResult(
        source=opened.path,
        output=target.path,
        export=export,
        options=options,
        strata=_strata_report(options, strata, stratum_ids, assigned),
        totals={name: 0 for name in names},
        replaced=existing,
        notes=opened.notes,
    )
    for split in assigned:
        result.totals[names[split]] += 1
    sizes = Counter(group_first)
    grouped = [size for size in sizes.values() if size > 1]
    result.groups, result.grouped_rows = len(grouped), sum(grouped)
    result.largest_group = max(grouped, default=0)
    return result


def _assign(
    options: SplitOptions,
    strata: dict[Stratum, int],
    stratum_ids: array[int],
    group_first: array[int],
) -> array[int]:
    """The split (its position in the ratios) of every row."""
    weights = [ratio for _, ratio in options.ratios]
    # units: the rows of one group, allocated within the stratum of the group's first row
    units: dict[int, list[int]] = {}
    for position, first in enumerate(group_first):
        units.setdefault(first, []).append(position)
    by_stratum: dict[int, list[list[int]]] = {}
    for first, members in units.items():
        by_stratum.setdefault(stratum_ids[first], []).append(members)
    assigned = array("b", bytes(len(group_first)))
    carried = [0.0] * len(weights)
    for stratum in sorted(strata, key=_stratum_order):
        stratum_units = by_stratum.get(strata[stratum], [])
        if not stratum_units:
            continue
        _rng("split", options.seed, stratum).shuffle(stratum_units)
        stratum_units.sort(key=len, reverse=True)  # stable: big groups first, then shuffled
        rows = sum(len(unit) for unit in stratum_units)
        targets = largest_remainder(
            rows, weights, at_least_one=len(stratum_units) >= len(weights), carried=carried
        )
        given = [0] * len(weights)
        for unit in stratum_units:
            split = max(range(len(weights)), key=lambda i: (targets[i] - given[i], -i))
            given[split] += len(unit)
            for position in unit:
                assigned[position] = split
        # what this stratum gave each split against its quota, for the strata after it
        for split, ratio in enumerate(weights):
            carried[split] += rows * ratio / math.fsum(weights) - given[split]
    return assigned


def _strata_report(
    options: SplitOptions,
    strata: dict[Stratum, int],
    stratum_ids: array[int],
    assigned: array[int],
) -> list[StratumSplit]:
    names = options.names
    counts: dict[int, list[int]] = {number: [0] * len(names) for number in strata.values()}
    for number, split in zip(stratum_ids, assigned, strict=True):
        counts[number][split] += 1
    report = []
    for stratum in sorted(strata, key=_stratum_order):
        row_counts = counts[strata[stratum]]
        rows = sum(row_counts)
        report.append(
            StratumSplit(
                family=stratum[0],
                oracle_type=stratum[1],
                rows=rows,
                counts=dict(zip(names, row_counts, strict=True)),
                targets={name: rows * ratio for name, ratio in options.ratios},
            )
        )
    return report


# --- sample ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleOptions:
    size: int
    seed: int
    force: bool = False


@dataclass
class StratumSample:
    family: str | None
    oracle_type: str | None
    rows: int
    sampled: int

    def to_json(self) -> dict[str, Any]:
        return {
            "caseFamily": self.family,
            "oracleType": self.oracle_type,
            "rows": self.rows,
            "sampled": self.sampled,
        }


@dataclass
class SampleResult:
    source: Path
    output: Path
    export: ExportResult
    options: SampleOptions
    rows: int
    strata: list[StratumSample]
    #: the case families the sample kept in its set-level fields (those its rows use)
    families: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "output": str(self.output),
            "format": self.export.format,
            "rows": self.rows,
            "sampled": self.export.rows,
            "seed": self.options.seed,
            "strata": [stratum.to_json() for stratum in self.strata],
            "caseFamilies": self.families,
            "notes": self.notes,
        }


def sample_set(
    path: StrPath, output: StrPath, options: SampleOptions, *, format: str | None = None
) -> SampleResult:
    """Write a stratified, seeded sample of ``options.size`` rows to ``output`` (a canonical
    format), in the set's order, with the set-level fields and only the case families the
    sampled rows use."""
    target = output_target(Path(path), format, Path(output), options.force)
    with editing(path, EditOptions(format), rewrite=target.in_place) as opened:
        return _sample(opened, target, options)


def _sample(opened: EditableSet, target: Target, options: SampleOptions) -> SampleResult:
    strata: dict[Stratum, list[int]] = {}
    for position, _, row in _rows(opened):
        strata.setdefault(stratum_of(row), []).append(position)
    total = sum(len(rows) for rows in strata.values())
    if not 1 <= options.size <= total:
        raise UsageError(
            f"{opened.path}: a sample of {options.size} row(s) from a set of {total}; ask for"
            f" 1 to {total}"
        )
    ordered = sorted(strata, key=_stratum_order)
    # ties between strata go by a seeded draw, not by their names
    tie_order = list(range(len(ordered)))
    _rng("sample-ties", options.seed, (None, None)).shuffle(tie_order)
    sizes = largest_remainder(
        options.size,
        [len(strata[stratum]) for stratum in ordered],
        at_least_one=options.size >= len(ordered),
        tie_order=tie_order,
    )
    chosen: set[int] = set()
    report = []
    for stratum, size in zip(ordered, sizes, strict=True):
        chosen.update(_rng("sample", options.seed, stratum).sample(strata[stratum], size))
        report.append(StratumSample(stratum[0], stratum[1], len(strata[stratum]), size))
    del strata

    def sampled() -> Iterator[Any]:
        for position, _, row in _rows(opened):
            if position in chosen:
                yield row

    header = opened.header
    families = header.get("caseFamilies")
    # the strata name every family a sampled row uses, so the header is known before the rows
    sampled_families = {stratum[0] for stratum, size in zip(ordered, sizes, strict=True) if size}
    if isinstance(families, list):
        header["caseFamilies"] = [
            family
            for family in families
            if not isinstance(family, dict) or family.get("id") in sampled_families
        ]
    export = target.write(opened, sampled(), options.size)
    kept = [
        family["id"]
        for family in header.get("caseFamilies") or []
        if isinstance(family, dict) and isinstance(family.get("id"), str)
    ]
    return SampleResult(
        source=opened.path,
        output=target.path,
        export=export,
        options=options,
        rows=total,
        strata=report,
        families=kept,
        notes=opened.notes,
    )
