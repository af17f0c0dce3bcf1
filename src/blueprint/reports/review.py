"""What a change to a set means for its reviewers: a pull-request summary of a set diff.

Beyond the rows added, removed and changed, a reviewer wants to see what changes how cases are
graded (oracle types and evaluators, of rows and of case families), what happened to the
gold (a starter row promoted to gold is good news; gold turned back into a starter example is
a warning), and every case whose expected behaviour changed while its ``version`` stayed the
same (a case is versioned when its expected behaviour changes).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from blueprint.core import jsonpath
from blueprint.core.issues import Issue, IssueLog, make_issue
from blueprint.core.model import STARTER_PROVENANCES
from blueprint.core.spill import SpillList
from blueprint.diff import (
    ABSENT,
    LISTED_A_CHUNK,
    CaseFields,
    Change,
    ComparedSet,
    JoinedSets,
    Pair,
    RowKey,
    SetDiff,
    case_dict,
    diff_joined,
    row_label,
)
from blueprint.io.jsonvalues import Streamed, dumps_text

if TYPE_CHECKING:
    import jinja2

#: the parts of a row that say what the expected behaviour is
BEHAVIOUR_PATHS: Final = (
    "$.expected",
    "$.metadata.case.oracleType",
    "$.metadata.case.expectedBehavior",
    "$.metadata.case.unacceptableBehavior",
    "$.metadata.case.evaluationCriteria",
    "$.metadata.case.passLogic",
    "$.metadata.case.toolActionExpectation",
    "$.metadata.case.escalationExpectation",
)
GRADING_PATHS: Final = ("$.metadata.case.oracleType", "$.metadata.case.evaluator")
#: how long a value may be in the summary before it is cut
VALUE_LIMIT: Final = 120


@dataclass(frozen=True)
class Transition:
    """One value that changed, for one row (or case family)."""

    subject: str
    field: str
    before: Any
    after: Any


@dataclass(frozen=True)
class RowSummary:
    id: str
    oracle_type: Any
    evaluator: Any
    provenance: Any


@dataclass
class Review:
    """The reviewer's view of one set's change. Its lists may be long (every row of a large
    set may change) and wait on disk past a few hundred items."""

    before: str
    after: str
    diff: SetDiff
    added: MutableSequence[RowSummary] = field(default_factory=list)
    removed: MutableSequence[RowSummary] = field(default_factory=list)
    grading: MutableSequence[Transition] = field(default_factory=list)
    promoted: MutableSequence[Transition] = field(default_factory=list)
    demoted: MutableSequence[Transition] = field(default_factory=list)
    #: (row id, the behaviour fields that changed, the version both sides carry)
    unversioned: MutableSequence[tuple[str, list[str], Any]] = field(default_factory=list)
    #: the findings, with stable codes: a case whose behaviour changed but not its version
    findings: MutableSequence[Issue] = field(default_factory=list)

    @property
    def warnings(self) -> int:
        return len(self.demoted) + len(self.unversioned)

    def to_json(self, *, streamed: bool = False) -> dict[str, Any]:
        """The review as JSON; ``streamed``: its lists as :class:`Streamed` arrays (see
        :meth:`SetDiff.to_json`)."""

        def array(items: Sequence[Any], convert: Callable[[Any], Any]) -> Any:
            found = Streamed(items, convert)
            return found if streamed else list(found)

        return {
            "before": self.before,
            "after": self.after,
            "grading": array(self.grading, _transition_json),
            "promoted": array(self.promoted, _transition_json),
            "demoted": array(self.demoted, _transition_json),
            "unversioned": array(self.unversioned, _unversioned_json),
            "findings": array(self.findings, Issue.to_json),
        }


def _transition_json(item: Transition) -> dict[str, Any]:
    return {
        "subject": item.subject,
        "field": item.field,
        "before": None if item.before is ABSENT else item.before,
        "after": None if item.after is ABSENT else item.after,
    }


def _unversioned_json(item: tuple[str, list[str], Any]) -> dict[str, Any]:
    row_id, fields, version = item
    return {"id": row_id, "fields": fields, "version": version}


def _summary(key: RowKey, fields: CaseFields) -> RowSummary:
    case = case_dict(fields)
    return RowSummary(
        row_label(key), case.get("oracleType"), case.get("evaluator"), case.get("provenance")
    )


def _is_starter(provenance: Any) -> bool:
    return isinstance(provenance, str) and provenance in STARTER_PROVENANCES


def _under(path: str, prefixes: tuple[str, ...]) -> str | None:
    for prefix in prefixes:
        if path == prefix or path.startswith((prefix + ".", prefix + "[")):
            return prefix
    return None


def review(before: ComparedSet, after: ComparedSet, diff: SetDiff | None = None) -> Review:
    """The reviewer's view of the change from ``before`` to ``after`` (of ``diff``, their
    set diff, worked out here when not given)."""
    with JoinedSets(before, after) as joined:
        return review_joined(joined, diff_joined(joined) if diff is None else diff)


def review_joined(joined: JoinedSets, diff: SetDiff) -> Review:
    result = Review(
        joined.left.label,
        joined.right.label,
        diff,
        added=SpillList(chunk=LISTED_A_CHUNK),
        removed=SpillList(chunk=LISTED_A_CHUNK),
        grading=SpillList(chunk=LISTED_A_CHUNK),
        promoted=SpillList(chunk=LISTED_A_CHUNK),
        demoted=SpillList(chunk=LISTED_A_CHUNK),
        unversioned=SpillList(chunk=LISTED_A_CHUNK),
        findings=IssueLog(chunk=LISTED_A_CHUNK),
    )
    for pair in joined.pairs():
        if pair.other is None:
            result.removed.append(_summary(pair.key, pair.case))
            continue
        label = row_label(pair.key)
        old_case, new_case = case_dict(pair.case), case_dict(pair.other)
        for path, name in zip(GRADING_PATHS, ("oracleType", "evaluator"), strict=True):
            if old_case.get(name, ABSENT) != new_case.get(name, ABSENT):
                result.grading.append(
                    Transition(
                        label,
                        path.removeprefix("$."),
                        old_case.get(name, ABSENT),
                        new_case.get(name, ABSENT),
                    )
                )
        was, now = old_case.get("provenance"), new_case.get("provenance")
        if was != now:
            item = Transition(label, "metadata.case.provenance", was, now)
            if _is_starter(was) and not _is_starter(now):
                result.promoted.append(item)
            elif _is_starter(now) and not _is_starter(was):
                result.demoted.append(item)
        unversioned = _unversioned(pair)
        if unversioned is not None:
            result.unversioned.append((label, *unversioned))
    result.added.extend(_summary(item.key, item.case) for item in joined.added())
    # a finding for each such row, at its place in the newer set, in that set's order
    for pair in joined.changed():
        unversioned = _unversioned(pair)
        if unversioned is not None and pair.place is not None:
            fields, version = unversioned
            result.findings.append(
                make_issue(
                    "unversioned-behavior-change",
                    path=jsonpath.join("$", ["rows", pair.place, "metadata", "case", "version"]),
                    row_index=pair.place,
                    row_id=pair.key[0],
                    fields=", ".join(fields),
                    version="unset" if version is None else dumps_text(version),
                )
            )
    result.grading += _family_grading(joined.left.header, joined.right.header)
    return result


def _unversioned(pair: Pair) -> tuple[list[str], Any] | None:
    """The behaviour fields that changed and the version both sides carry (None when
    unset), for a case whose expected behaviour changed but not its version."""
    behaviour = sorted(
        {
            prefix.removeprefix("$.")
            for change in pair.changes
            if (prefix := _under(change.path, BEHAVIOUR_PATHS)) is not None
        }
    )
    old_version = case_dict(pair.case).get("version", ABSENT)
    new_version = ABSENT if pair.other is None else case_dict(pair.other).get("version", ABSENT)
    if not behaviour or old_version != new_version:
        return None
    return behaviour, None if old_version is ABSENT else old_version


def _family_grading(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> list[Transition]:
    """Oracle types and evaluators of case families that both sides define, by family id."""

    def families(header: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
        found = header.get("caseFamilies") if isinstance(header, dict) else None
        if not isinstance(found, list):
            return {}
        return {f["id"]: f for f in found if isinstance(f, dict) and isinstance(f.get("id"), str)}

    old, new = families(before), families(after)
    changes = []
    for family_id, family in old.items():
        if family_id not in new:
            continue
        for name in ("oracleType", "evaluator"):
            if family.get(name, ABSENT) != new[family_id].get(name, ABSENT):
                changes.append(
                    Transition(
                        f"case family {family_id}",
                        name,
                        family.get(name, ABSENT),
                        new[family_id].get(name, ABSENT),
                    )
                )
    return changes


# --- Markdown ----------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = dumps_text(value)
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"


def _code(value: Any) -> str:
    """A value as inline code in a Markdown table cell: pipes escaped, never on two lines."""
    text = value if isinstance(value, str) else _shown(value)
    text = text.replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    padding = " " if fence == "``" else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _plain(value: Any) -> str:
    """A name (an oracle type, a provenance) as code, without JSON's quotes; a dash if unset."""
    if value is None or value is ABSENT:
        return "—"
    return _code(value if isinstance(value, str) else _shown(value))


def _change_value(change: Change, side: str) -> str:
    """One side of a change. Two long texts are shown around where they first differ, so
    that a reviewer sees the edit rather than the same opening twice."""
    value = change.before if side == "before" else change.after
    if value is ABSENT:
        return ""
    other = change.after if side == "before" else change.before
    if isinstance(value, str) and isinstance(other, str):
        text, opposite = dumps_text(value), dumps_text(other)
        if len(text) > VALUE_LIMIT:
            start = next(
                (i for i, (a, b) in enumerate(zip(text, opposite, strict=False)) if a != b),
                min(len(text), len(opposite)),
            )
            begin = max(0, start - VALUE_LIMIT // 3)
            excerpt = text[begin : begin + VALUE_LIMIT]
            prefix = "…" if begin else ""
            suffix = "…" if begin + VALUE_LIMIT < len(text) else ""
            return _code(prefix + excerpt + suffix)
    return _code(_shown(value))


@functools.cache
def _environment() -> jinja2.Environment:
    # made on first use: jinja2 is needed only when a summary is written, not at start-up
    from blueprint.reports.templating import markdown_environment

    environment = markdown_environment()
    environment.filters["code"] = _code
    environment.filters["shown"] = lambda value: _code(_shown(value))
    environment.filters["plain"] = _plain
    environment.globals["change_value"] = _change_value
    return environment


def render_markdown(reviews: list[Review], *, title: str = "Golden set review") -> str:
    """A pull-request summary of one or more sets' changes, in GitHub-flavoured Markdown."""
    return "".join(markdown_pieces(reviews, title=title))


def markdown_pieces(reviews: list[Review], *, title: str = "Golden set review") -> Iterator[str]:
    """The summary of :func:`render_markdown`, in pieces as the template makes them (a
    large set's rows one at a time)."""
    template = _environment().get_template("review.md.j2")
    return template.generate(
        title=title,
        changed=[item for item in reviews if not item.diff.identical],
        unchanged=[item for item in reviews if item.diff.identical],
    )
