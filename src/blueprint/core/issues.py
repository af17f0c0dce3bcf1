"""Issue codes, the Issue record and the validation report.

Every finding Blueprint reports has a stable kebab-case code from the closed table below. The
message is always rendered from the code's template, never written at the call site, so tests
assert on codes and positions and the docs page is generated from this table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from blueprint.core.spill import FieldsList

IssueSeverity = Literal["error", "warning", "info"]
SEVERITY_ORDER: Final[tuple[IssueSeverity, ...]] = ("error", "warning", "info")


@dataclass(frozen=True)
class IssueCode:
    """One entry of the closed list of issue codes."""

    code: str
    severity: IssueSeverity
    title: str
    template: str
    explanation: str


CODES: Final[dict[str, IssueCode]] = {
    spec.code: spec
    for spec in (
        IssueCode(
            "parse",
            "error",
            "File cannot be read",
            "cannot read this as {format}: {reason}",
            "The file is not what its format claims: invalid JSON, a CSV row with the wrong"
            " number of cells, bytes that are not UTF-8. The issue names the line and, where"
            " known, the column. The rest of the file is still checked where it can be.",
        ),
        IssueCode(
            "schema",
            "error",
            "Breaks the published schema",
            "{reason}",
            "The row or the set-level fields break the published JSON Schema: a missing required"
            ' field, a value of the wrong type (the string "1" is not the number 1), a value'
            " outside an enum, or a key the schema does not know.",
        ),
        IssueCode(
            "case-id-mismatch",
            "error",
            "caseId differs from the row id",
            "case.caseId {case_id!r} differs from the row id {id!r}",
            "`metadata.case.caseId` must equal the row's top-level `id`, so that a case can be"
            " recognized by the same name everywhere it appears.",
        ),
        IssueCode(
            "duplicate-id",
            "error",
            "Two rows share an id",
            "the id {id!r} is already used by row {first_index}{first_where}",
            "Row ids must be unique within a set. The issue is reported on every repeat and"
            " names the first row that used the id.",
        ),
        IssueCode(
            "duplicate-input",
            "warning",
            "Two rows share an input",
            "the input is the same as that of {other}, once case, spacing and punctuation are"
            " normalised",
            "Two cases that pose the same input count twice in every score. Inputs are compared"
            " after Unicode NFKC normalisation, case folding, collapsing whitespace and turning"
            " punctuation into spaces (a point or comma between two digits, and a sign before a"
            " number, are kept); object keys are sorted and each chat message is compared with"
            " its role. The issue is reported on every repeat and names the first row. Merge the"
            " rows, or make the inputs differ on purpose. `blueprint dedupe` lists them, and"
            " finds near-duplicates too.",
        ),
        IssueCode(
            "duplicate-input-across-splits",
            "error",
            "Same input in two splits",
            "the input is the same as that of {other}, which is in split {other_split!r} while"
            " this row is in {split!r}: a case must not be in two splits",
            "Rows whose `metadata.split` differ (dev and test, train and test) share an input"
            " once normalised, so the split used to tune a system also grades it. Keep one of"
            " them, or move them into the same split; `blueprint split` keeps duplicates"
            " together.",
        ),
        IssueCode(
            "near-duplicate-input",
            "warning",
            "Input nearly the same as another row's",
            "the input is a near-duplicate of that of {other} (similarity {similarity}, threshold"
            " {threshold}){splits}",
            "The two inputs share most of their words and word pairs (Jaccard similarity of"
            " their shingles at or above the threshold). Found by `blueprint dedupe` (and by"
            " checks that call it), not by the validator's single pass: near-duplicates need an"
            " index of every input.",
        ),
        IssueCode(
            "inadmissible-evaluator",
            "error",
            "Evaluator barred for the oracle type",
            "{oracle_type} bars the evaluator {evaluator}: {reason}."
            " Admissible evaluators: {admissible}",
            "The named evaluator cannot read this oracle type, so any number it produced would"
            " be meaningless. The message gives the reason from the admissibility map and lists"
            " the evaluators that are admissible.",
        ),
        IssueCode(
            "conditional-evaluator",
            "warning",
            "Evaluator admitted only with conditions",
            "{evaluator} grades {oracle_type} rows only if {conditions}",
            "An LLM judge may grade reference-answer, acceptable-set and rubric rows only under"
            " conditions: the reference (or set, or rubric) goes in the judge prompt, and the"
            " judge is validated against human labels on a sample of the task's own cases.",
        ),
        IssueCode(
            "judge-validated",
            "info",
            "LLM judge validated against human labels",
            "llm-judge is validated for this row's case family by {report} (agreement"
            " {agreement}, kappa {kappa})",
            "A judge-validation report (`blueprint judge-report`) that the set, its case family"
            " or the project configuration names covers this row's case family: its verdict"
            " passes, it has enough labelled cases, and the family's rows are still the ones it"
            " was made for. The `conditional-evaluator` warning is settled; the other condition"
            " (the reference, set or rubric goes in the judge prompt) is the harness's to keep.",
        ),
        IssueCode(
            "judge-report-stale",
            "warning",
            "Judge-validation report is stale",
            "{report} no longer matches case family {family!r}: {reason}",
            "The report records a content hash of the family's rows and, where its labels name"
            " it, the judge it validated (model and judge template). A row added, removed or"
            " edited since then changes the hash, and an edited judge template is another"
            " judge, so the labels may not speak for the family any more and its"
            " `conditional-evaluator` warnings stay. Label the new or changed cases (or the new"
            " judge's verdicts) and run `blueprint judge-report` again.",
        ),
        IssueCode(
            "judge-report-insufficient",
            "warning",
            "Judge-validation report has too few labels",
            "{report} labels {labelled} case(s) of family {family!r}, which needs {required}"
            " ({rows} rows)",
            "A family needs at least the report's minimum number of labelled cases (all of a"
            " smaller family, and the minimum fraction of its rows when one is set). The"
            " family's `conditional-evaluator` warnings stay until enough of its cases are"
            " labelled.",
        ),
        IssueCode(
            "judge-report-failed",
            "warning",
            "Judge-validation report fails",
            "{report} fails for case family {family!r}: {reason}",
            "The judge agrees too little with the human labels on the family's cases (or the"
            " humans disagree among themselves, or the judge is too lenient or too harsh), so"
            " the report does not validate it and the `conditional-evaluator` warnings stay.",
        ),
        IssueCode(
            "judge-report-unreadable",
            "warning",
            "Judge-validation report cannot be read",
            "the judge-validation report cannot be used: {reason}",
            "The set (or one of its case families) names a judge-validation report that does"
            " not exist or is not a report `blueprint judge-report` wrote.",
        ),
        IssueCode(
            "missing-input",
            "error",
            "Row has no input",
            "the row has no input ({what}): the system under test would be given nothing",
            "A case is something the system under test receives and answers, so a row's `input`"
            " holds it: a text, an object of named inputs, or a list of chat messages. `null`,"
            " an empty text and an empty list of messages are no input (a file whose records"
            " lost their input on the way in, or were never cases: Inspect refuses such samples"
            ' with "No input in dataset"). A row without the `input` key at all is a `schema`'
            " error. A case about an empty message from the user is written as one empty chat"
            ' message: `[{"role": "user", "content": ""}]`. These are inputs: an empty object'
            " (a call with no named inputs, as a promptfoo test without vars runs the config's"
            " prompts as they are), and an empty list of messages with a `case.scenario` that a"
            " simulator plays the conversation from (DeepEval's conversational goldens without"
            " turns).",
        ),
        IssueCode(
            "expected-shape",
            "error",
            "expected does not fit the oracle type",
            "{reason}",
            "The shape of `expected` is fixed by the oracle type: any value for"
            " reference-answer (required), `{acceptable: [...]}` or `{graded: [...]}` for"
            " acceptable-set, `{calls, order, forbidden}` for expected-tool-calls,"
            " `{checks: [...]}` for expected-final-state, and no `expected` at all for rubric and"
            " expected-behavior-only rows.",
        ),
        IssueCode(
            "omitted-field",
            "error",
            "Field the schema leaves out on purpose",
            "{field} is deliberately not part of the schema: {reason}",
            "`difficulty`, `weight`, `priority` and `score` are left out of the case profile on"
            " purpose. They are reported wherever they appear: as a row key, in `metadata`, or in"
            " `metadata.case`, and in any letter case or spelling (`Priority`, `DIFFICULTY`,"
            " `Weight`, `score_`).",
        ),
        IssueCode(
            "starter-example",
            "warning",
            "Starter example, not validated gold",
            "provenance {provenance}: this row is an example, not a validated gold answer",
            "Rows with provenance `starter-example` or `overlay-starter-needs-expert-validation`"
            " are shaped correctly but their expected answers are examples. Replace them with"
            " answers that are right for your system and change the provenance.",
        ),
        IssueCode(
            "case-family-mismatch",
            "error",
            "Row differs from its case family",
            "{field} is {row_value} but case family {family!r} has {family_value}",
            "Rows of a case family share its oracle type and evaluator. A row that needs a"
            " different one belongs to another family, or to none. Where the family itself does"
            " not name an evaluator (or is not declared at all), the rows are compared with the"
            " first row of the family that names one.",
        ),
        IssueCode(
            "inherited-evaluator",
            "warning",
            "Row relies on its family's evaluator",
            "the row names no evaluator; it is graded by {evaluator}, which its case family"
            " {family!r} names",
            "A row without `case.evaluator` in a case family that names one is graded by the"
            " family's evaluator: Blueprint's validator and exports apply it. Write it on the row"
            " too, so that a harness or spreadsheet reading rows alone does not take the row for"
            " one any admissible evaluator may grade.",
        ),
        IssueCode(
            "undeclared-case-family",
            "warning",
            "Case family not declared by the set",
            "case family {family!r} is not declared: the set defines no caseFamilies, so the"
            " family's oracle type, evaluator and severity are not recorded",
            "A row names a case family but the set-level fields define no `caseFamilies`. Rows"
            " naming the same family are still checked against each other (they must share an"
            " oracle type and evaluator); declare the family to record its severity too.",
        ),
        IssueCode(
            "unknown-case-family",
            "error",
            "Case family not defined by the set",
            "case family {family!r} is not defined by this set (defined: {defined})",
            "When a set defines case families, every `case.caseFamily` must name one of them.",
        ),
        IssueCode(
            "duplicate-case-family",
            "error",
            "Two case families share an id",
            "case family id {family!r} is defined more than once",
            "Case family ids must be unique within a set.",
        ),
        IssueCode(
            "missing-reviewer-expertise",
            "warning",
            "Human expert without stated expertise",
            "the evaluator is human-expert but case.reviewerExpertise is not given",
            "A case graded by a human expert should say what expertise the reviewer needs, so"
            " that the right person grades it.",
        ),
        IssueCode(
            "rubric-without-criteria",
            "info",
            "Rubric row without criteria",
            "rubric row without case.evaluationCriteria",
            "A rubric row with no `evaluationCriteria` is incomplete, not invalid: the criteria"
            " may live in the rubric itself.",
        ),
        IssueCode(
            "check-unusable",
            "error",
            "A check that cannot run",
            "this check cannot run: {reason}",
            "A check the schema accepts but that no grader could apply: a regular expression"
            " outside the dialect (JavaScript's, which Python must read the same way; named"
            " groups, inline flags, backreferences...), a json-schema check whose schema is not"
            " a JSON Schema, weights that do not pair with their checks, a length whose min is"
            " above its max. Found before any model runs, so no grader decides it silently.",
        ),
        IssueCode(
            "rule-not-applied",
            "warning",
            "A grading rule the row's grading never applies",
            "case.{field} has no effect on this row: {reason}",
            "`normalize` and `tolerance` apply to the comparison of a reference answer or an"
            " acceptable set's members, `passThreshold` to a graded acceptable set or a judge's"
            " score, `checks` to an output a grader scores. Set on a row where they cannot"
            " apply (a tool-call row's tolerance, a threshold on a reference answer, checks on a"
            " row a person grades), they would read as rules that nothing enforces.",
        ),
        IssueCode(
            "pass-logic-unstated",
            "warning",
            "passLogic states a rule no field declares",
            "case.passLogic says {what}, but {missing}",
            "`passLogic` is the author's words and nothing applies it. When it states a rule"
            " code could apply (a pass threshold, a comparison ignoring case or white space)"
            " and the row's fields do not declare it (`passThreshold`, `normalize`), the grade"
            " would silently apply something else: declare the rule, or reword passLogic.",
        ),
        IssueCode(
            "derived-value",
            "warning",
            "Value derived on import",
            "{field} was derived on import from {format}: {how}; review it",
            "A file imported from a vendor format that did not come from Blueprint lacks some"
            " of the case profile. The importer infers what it must (the oracle type from the"
            " assertions, an id, an expected behaviour) and records each inference; a person"
            " should confirm or correct it, then remove the entry from"
            ' `case.extensions["blueprint-import"].derived`.',
        ),
        IssueCode(
            "vendor-format",
            "error",
            "Breaks the vendor format's own rules",
            "{format} rule {rule}: {reason}",
            "A vendor file that the vendor's own tool would refuse to load: for an omk sample set,"
            " a field omk's strict loader does not know, rubric weights that are not in (0, 1] or"
            " do not sum to 1, a `mock_hit` naming a mock the sample does not declare, a"
            " judge-backed assertion inside an `assert-set`, an assertion without the value its"
            " type needs, or `eval-samples.json` beside `eval-samples.yaml`. The path points at"
            " the offending value in the vendor's document (not a Blueprint row). Blueprint still"
            " reads what it can; fix the file before the vendor's tool runs it.",
        ),
        IssueCode(
            "missing-set-file",
            "warning",
            "Set-level fields not found",
            "no set file {set_file} beside the data; {consequence}",
            "CSV and JSONL files keep the set-level fields (name, version, case families) in a"
            " set file next to them. Without it the set is named after the file and case"
            " families are unknown, so family checks cannot run.",
        ),
        IssueCode(
            "empty-row",
            "info",
            "Empty row skipped",
            "empty row(s) at {lines}: no cell has a value, so they are skipped, not read as rows",
            "A CSV row whose cells are all empty (a spreadsheet leaves them at the end of a sheet,"
            " or where a row's content was deleted) holds nothing, so it is not a row of the set:"
            " it is skipped, and consecutive empty rows are reported once. Row positions"
            " (`$.rows[N]`) count only the rows that were read.",
        ),
        IssueCode(
            "unversioned-behavior-change",
            "warning",
            "Expected behaviour changed, version did not",
            "the expected behaviour changed ({fields}) but case.version stayed {version}:"
            " version the case when its expected behaviour changes",
            "A case is versioned when its expected behaviour changes, so that results recorded"
            " against the old behaviour are not read as results against the new one."
            " `blueprint diff` (two sets, or `--against REF` for a git revision) reports a row"
            " whose `expected`, oracle type, `expectedBehavior`, `unacceptableBehavior`,"
            " `evaluationCriteria`, `passLogic`, `toolActionExpectation` or"
            " `escalationExpectation` differs while its `case.version` is the same on both"
            " sides (or unset on both); the row is positioned in the newer set. It compares two"
            " sets, so `validate` never reports it.",
        ),
        IssueCode(
            "csv-column-added",
            "info",
            "An edit adds a column to a CSV set",
            "the edit adds the column(s) {columns}: every line of the file gains a cell for"
            " it, so this one change shows on every line of a diff",
            "A CSV file is a table: every line has a cell for every column, so the first edit"
            " that needs a column the file lacks (the first promotion of a CSV set, which"
            " writes `case.extensions`, or the first `normalize` on any row) adds an empty cell"
            " to every other line as well. Blueprint keeps the file's own column order and puts"
            " the new column where the canonical order has it; the rows it did not edit read back"
            " the same. Later edits that need no new column change only the lines of their rows.",
        ),
        IssueCode(
            "spreadsheet-formula",
            "warning",
            "A spreadsheet would run this CSV cell as a formula",
            "{where} in column {column!r} begins with {first!r}, so a spreadsheet that opens"
            " the CSV runs it as a formula: {text}",
            "Excel, LibreOffice and Google Sheets evaluate a cell that begins with `=`, `+`,"
            " `-` or `@` (or a tab or carriage return before one) as a formula, and a formula"
            " can run commands or send the sheet's data elsewhere (CSV injection). Blueprint"
            " writes such a text anyway, exactly, and warns; a number such as `-3` is a value"
            " and is not reported. `--spreadsheet-safe` writes the cell with a leading `'`"
            " instead, which a spreadsheet shows as text; the quote is then part of the value,"
            " and the conversion reports the change.",
        ),
    )
}

#: the codes whose findings make a set invalid: what decides whether a set is written or
#: graded, which a pass that only decides that needs to look for
ERROR_CODES: Final = frozenset(code for code, spec in CODES.items() if spec.severity == "error")


#: the keys of an issue in JSON reports, in order
ISSUE_FIELDS: Final = ("code", "severity", "rowIndex", "rowId", "path", "line", "message")


@dataclass(frozen=True, slots=True)
class Issue:
    """One finding, positioned by row, JSON path and physical line."""

    code: str
    severity: IssueSeverity
    message: str
    path: str
    row_index: int | None = None
    row_id: str | None = None
    line: int | None = None
    #: the file ``line`` is in, when it is not the report's own (a tests file a promptfoo
    #: config includes); None for the file the report is about
    file: str | None = None

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "rowIndex": self.row_index,
            "rowId": self.row_id,
            "path": self.path,
            "line": self.line,
        }
        if self.file is not None:
            found["file"] = self.file
        found["message"] = self.message
        return found


def make_issue(
    code: str,
    *,
    path: str,
    row_index: int | None = None,
    row_id: str | None = None,
    line: int | None = None,
    **context: Any,
) -> Issue:
    """Build an issue, rendering its message from the code's template."""
    spec = CODES[code]
    return Issue(
        code=code,
        severity=spec.severity,
        message=spec.template.format(**context),
        path=path,
        row_index=row_index,
        row_id=row_id,
        line=line,
    )


class IssueLog(FieldsList[Issue], kind=Issue):
    """A report's findings: past a few thousand, the oldest wait in a scratch file, each as
    the tuple of its fields (:mod:`blueprint.core.spill`)."""

    __slots__ = ()


def issue_fields(issue: Issue) -> tuple[Any, ...]:
    """A finding as a tuple of its fields, in the order ``Issue`` takes them."""
    return (
        issue.code,
        issue.severity,
        issue.message,
        issue.path,
        issue.row_index,
        issue.row_id,
        issue.line,
        issue.file,
    )


@dataclass
class ValidationReport:
    """What validating one file found."""

    source: str
    format: str
    rows: int = 0
    #: the findings in order; past a few thousand the oldest wait in a scratch file, so that
    #: a report's memory stays the same however many it has (:mod:`blueprint.core.spill`)
    issues: MutableSequence[Issue] = field(default_factory=lambda: IssueLog())
    #: the id of every row in order (None where a row has no readable id), for per-row reports
    row_ids: list[str | None] = field(default_factory=list)
    #: part of the file could not be read at all; set even when `parse` issues are filtered out
    unreadable: bool = False
    #: rows whose provenance marks them as starter material (examples, not validated gold),
    #: counted whatever codes are reported
    starter_rows: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.issues, IssueLog):
            self.issues = IssueLog(self.issues)

    @property
    def valid(self) -> bool:
        return not self.unreadable and not any(i.severity == "error" for i in self.issues)

    def counts(self) -> dict[IssueSeverity, int]:
        tally = Counter(issue.severity for issue in self.issues)
        return {severity: tally.get(severity, 0) for severity in SEVERITY_ORDER}

    def counts_by_code(self) -> dict[str, int]:
        return dict(Counter(issue.code for issue in self.issues))

    def flatten(
        self, fields: Sequence[str] = ("row_index", "path", "code")
    ) -> list[tuple[Any, ...]]:
        """The issues as tuples of the named attributes, for compact assertions."""
        return [tuple(getattr(issue, name) for name in fields) for issue in self.issues]

    def to_json(self, *, with_issues: bool = True) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "rows": self.rows,
            "counts": self.counts(),
            "issues": [issue.to_json() for issue in self.issues] if with_issues else [],
            "source": self.source,
            "format": self.format,
        }


@dataclass(frozen=True)
class CodeStatistic:
    """How often one code was found, and in how many files."""

    code: str
    severity: IssueSeverity
    title: str
    count: int
    files: int

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "count": self.count,
            "files": self.files,
        }


def code_statistics(reports: Iterable[ValidationReport]) -> list[CodeStatistic]:
    """The findings of several reports grouped by code, most frequent first."""
    counts: Counter[str] = Counter()
    files: Counter[str] = Counter()
    for report in reports:
        found = Counter(issue.code for issue in report.issues)
        counts.update(found)
        files.update(found.keys())
    return [
        CodeStatistic(code, CODES[code].severity, CODES[code].title, count, files[code])
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
