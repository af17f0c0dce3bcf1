"""What each oracle type means when one recorded output is graded: one verdict for a row.

Pure Python, no model calls and no network. ``blueprint grade`` and every runner's scorer
come down to :func:`grade_row`, so one recorded result gets one verdict everywhere. The
rules, in short (docs/grading.md has them in full):

- reference-answer: the output equals ``expected``. Text compares exactly; any other JSON
  value compares as a value (key order and spacing do not matter, and an output given as
  JSON text is read as JSON first).
- acceptable-set: the output equals a member (enumerated); for a graded set, the grade of the
  member matched, which passes at ``pass_grade`` (1 unless the options say otherwise).
- expected-tool-calls: every expected call is made with its arguments (the expected
  arguments a subset of those given, or equal with ``arguments="exact"``), in the given
  order when ``order`` is ``exact`` (other calls may come between), and no forbidden call is
  made (any call of the tool, or one whose arguments include the forbidden ones). Calls
  neither expected nor forbidden do not fail a row.
- expected-final-state: each check against the recorded final state, or a folder it may read
  (``workdir``), or a command it may run (``allow_commands``).
- a row graded by llm-judge (and every rubric row) needs a judge's verdict; an
  expected-behavior-only row, and one graded by human-expert or rubric-human, needs a person
  and never gets a number.
- the set is obeyed before anything is graded: a row whose evaluator its oracle type bars (or
  whose oracle type or evaluator is none Blueprint knows) is ``invalid`` and gets no verdict
  from any source, a judge's included.
- a starter row (provenance ``starter-example`` or ``overlay-starter-needs-expert-validation``)
  is graded as an example: its verdict is shown, marked, and kept out of every pass rate.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from blueprint.core.admissibility import ADMISSIBILITY
from blueprint.core.checks import json_equal
from blueprint.core.judgeprompt import judged
from blueprint.core.model import EVALUATOR_TYPES, STARTER_PROVENANCES
from blueprint.grading.checks import run_check, values_equal
from blueprint.grading.commands import run_command
from blueprint.io import jsonvalues

Verdict = Literal["pass", "fail", "needs-judge", "needs-human", "not-run", "invalid"]
VERDICTS: Final[tuple[Verdict, ...]] = (
    "pass",
    "fail",
    "needs-judge",
    "needs-human",
    "not-run",
    "invalid",
)
#: verdicts that carry a score: every other verdict is no number at all
SCORED: Final = frozenset({"pass", "fail"})

#: how a starter row's verdict is marked wherever it is shown
STARTER_MARK: Final = "[starter example, not gold]"

#: evaluators under which only a person may grade a row
HUMAN_EVALUATORS: Final = frozenset({"human-expert", "rubric-human"})


@dataclass(frozen=True)
class GradingOptions:
    """How the rules that have a choice are applied; the defaults are the documented ones."""

    #: how a call's arguments match the expected ones: "subset" (the expected arguments are
    #: among those given, with equal values) or "exact" (the same arguments, no more)
    arguments: Literal["subset", "exact"] = "subset"
    #: the grade a graded acceptable-set member needs to pass
    pass_grade: float = 1.0
    #: the score a judge verdict without a pass/fail needs to pass
    judge_pass_score: float = 0.5
    #: a folder file_exists checks look in (confined to it, links resolved)
    workdir: Path | None = None
    #: run command checks that have no recorded exit code (off by default: a dataset's code
    #: never runs unasked)
    allow_commands: bool = False
    #: seconds a command check may run
    command_timeout: float = 30.0


@dataclass(frozen=True)
class Recorded:
    """One recorded run of a row: what the system under test produced."""

    id: str
    output: Any = None
    has_output: bool = False
    #: the calls made, as given (each normalised when graded); None when not recorded
    tool_calls: list[Any] | None = None
    final_state: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    #: the line of the results file it came from, for messages
    line: int | None = None


@dataclass(frozen=True)
class RowVerdict:
    """A row's verdict, its score in [0, 1] (None for no number) and the rule it names."""

    id: str
    verdict: Verdict
    score: float | None
    reason: str
    oracle_type: str | None = None
    case_family: str | None = None
    evaluator: str | None = None
    #: a starter row: an example, never gold; its verdict counts in no pass rate
    starter: bool = False
    #: the judge that gave a judged row's verdict, as the result names it (model, template)
    judge: dict[str, str] | None = None
    #: the high-risk cell of the row's case (``R3/B2``: reversibility/blast radius), if any
    risk: str | None = None
    #: whether a judge grades the row (its verdict's judge is then checked)
    judged: bool = False

    @property
    def scored(self) -> bool:
        """Whether the verdict counts: a pass or fail of a row that is not a starter example."""
        return self.verdict in SCORED and not self.starter

    @property
    def counted_score(self) -> float | None:
        """The score a runner may count: None for every verdict that does not count (no
        verdict, an invalid row, a starter example's)."""
        return self.score if self.scored else None

    def explained(self) -> str:
        """The verdict and its rule in one line, a starter example marked as one."""
        mark = f"{STARTER_MARK} " if self.starter else ""
        return f"{mark}{self.verdict}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "verdict": self.verdict,
            "score": self.score,
            "reason": self.reason,
            "oracleType": self.oracle_type,
            "caseFamily": self.case_family,
            "starterExample": self.starter,
            **({"judge": self.judge} if self.judge else {}),
        }


@dataclass
class _Outcome:
    verdict: Verdict
    score: float | None
    reason: str


def grade_row(
    row: dict[str, Any],
    result: Recorded | None,
    options: GradingOptions | None = None,
    *,
    family_evaluator: str | None = None,
) -> RowVerdict:
    """The verdict for one row of a set and its recorded result (None: it was not run)."""
    options = options or GradingOptions()
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    case = case if isinstance(case, dict) else {}
    oracle = case.get("oracleType")
    evaluator = case.get("evaluator", family_evaluator)
    family = case.get("caseFamily")
    barred = _barred(oracle, evaluator)
    if barred is not None:
        outcome = _Outcome("invalid", None, barred)
    else:
        outcome = _outcome(row, case, oracle, evaluator, result, options)
    return RowVerdict(
        id=str(row.get("id")),
        verdict=outcome.verdict,
        score=outcome.score if outcome.verdict in SCORED else None,
        reason=outcome.reason,
        oracle_type=oracle if isinstance(oracle, str) else None,
        case_family=family if isinstance(family, str) else None,
        evaluator=evaluator if isinstance(evaluator, str) else None,
        starter=_is_starter(case.get("provenance")),
        judge=_judge_identity(result) if judged(row, family_evaluator) else None,
    )


def _is_starter(provenance: Any) -> bool:
    # a provenance of another type (a list: unhashable) is the schema's finding, not a starter
    return isinstance(provenance, str) and provenance in STARTER_PROVENANCES


def _judge_identity(result: Recorded | None) -> dict[str, str] | None:
    """The model and template a recorded judge verdict names (None when it names neither)."""
    judge = result.judge if result is not None else None
    if not isinstance(judge, dict):
        return None
    found = {key: judge[key] for key in ("model", "template") if isinstance(judge.get(key), str)}
    return found or None


def _barred(oracle: Any, evaluator: Any) -> str | None:
    """Why the set itself forbids grading the row (None when it does not): an oracle type or
    evaluator Blueprint does not know, or an evaluator the oracle type bars."""
    rule = next((rule for name, rule in ADMISSIBILITY.items() if name == oracle), None)
    if rule is None:
        return f"the row's oracle type {_shown(oracle)} is not one Blueprint knows"
    if evaluator is None:
        return None
    if evaluator not in EVALUATOR_TYPES:
        return f"the row's evaluator {_shown(evaluator)} is not one Blueprint knows"
    reason = rule.bars.get(evaluator)
    if reason is None:
        return None
    return f"{oracle} bars the evaluator {evaluator}: {reason}; no verdict is given"


def person_graded(oracle: Any, evaluator: Any) -> str | None:
    """Why a person, never a grader, gives a row of this oracle type and evaluator its
    verdict (None when a grader may)."""
    if oracle == "expected-behavior-only":
        return "expected-behavior-only: graded by a person only"
    if evaluator in HUMAN_EVALUATORS:
        return f"{evaluator}: graded by a person only"
    if evaluator == "pairwise-preference":
        return "pairwise-preference compares two outputs; one was recorded"
    return None


def may_score(oracle: Any, evaluator: Any) -> bool:
    """Whether ``blueprint grade`` may give a number to a row of this oracle type and
    evaluator once it is no starter example: the set does not bar it and no person grades it."""
    return _barred(oracle, evaluator) is None and person_graded(oracle, evaluator) is None


def _outcome(
    row: dict[str, Any],
    case: dict[str, Any],
    oracle: Any,
    evaluator: Any,
    result: Recorded | None,
    options: GradingOptions,
) -> _Outcome:
    # who may grade comes first: a person's row gets no number, whatever the result says
    person = person_graded(oracle, evaluator)
    if person is not None:
        return _Outcome("needs-human", None, person)
    if result is None:
        return _Outcome("not-run", None, "no recorded result for this row")
    return _gated(_oracle_outcome(row, case, oracle, evaluator, result, options), case, result)


def _oracle_outcome(
    row: dict[str, Any],
    case: dict[str, Any],
    oracle: Any,
    evaluator: Any,
    result: Recorded,
    options: GradingOptions,
) -> _Outcome:
    threshold = case.get("passThreshold")
    threshold = threshold if _is_share(threshold) else None
    if evaluator == "llm-judge" or oracle == "rubric":
        why = "llm-judge" if evaluator == "llm-judge" else "rubric"
        return _judged(result, options, why, threshold)
    expected = row.get("expected", _MISSING)
    if oracle == "reference-answer":
        return _reference(expected, result, case)
    if oracle == "acceptable-set":
        return _acceptable(
            expected, result, case, options.pass_grade if threshold is None else threshold
        )
    if oracle == "expected-tool-calls":
        return _tool_calls(expected, result, options)
    # the oracle type is a known one (_barred said so), and the others returned above
    return _final_state(expected, result, options)


def _is_share(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _gated(outcome: _Outcome, case: dict[str, Any], result: Recorded) -> _Outcome:
    """The oracle's outcome with the row's ``checks`` applied as a gate: a check that fails
    fails the row whatever else says, a judge included; a pass needs every check to pass."""
    checks = case.get("checks")
    if not isinstance(checks, list) or not checks or outcome.verdict == "not-run":
        return outcome
    if not result.has_output:
        if outcome.verdict == "fail":
            return outcome
        return _Outcome(
            "not-run", None, f"the result records no output for the row's {len(checks)} check(s)"
        )
    for number, check in enumerate(checks, start=1):
        decided = run_check(check, result.output)
        if not decided.passed:
            return _Outcome("fail", 0.0, f"check {number} of {len(checks)}: {decided.reason}")
    if outcome.verdict == "pass":
        return _Outcome("pass", outcome.score, f"{outcome.reason}; its {len(checks)} check(s) pass")
    return outcome


class _Missing:
    pass


_MISSING: Final = _Missing()


# --- equality ---------------------------------------------------------------------------------


def output_equals(expected: Any, output: Any, case: dict[str, Any] | None = None) -> bool:
    """Whether an output is the expected answer, as the row compares them: text exactly
    (after the row's ``normalize``), a number within the row's ``tolerance``, any other JSON
    value as a value (the output read as JSON first when it is text)."""
    case = case or {}
    return values_equal(expected, output, case.get("normalize"), case.get("tolerance"))


def _shown(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else jsonvalues.dumps_text(value)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the oracle types -------------------------------------------------------------------------


def _compared(case: dict[str, Any], expected: Any) -> str:
    """How a row compares an output with an expected value, for reasons."""
    if isinstance(expected, str):
        steps = case.get("normalize")
        if not steps:
            return "text, compared exactly"
        # steps of another shape are the schema's finding; the reason shows them as given
        named = steps if isinstance(steps, list) else [steps]
        return "text after " + ", ".join(
            step if isinstance(step, str) else _shown(step) for step in named
        )
    tolerance = case.get("tolerance")
    if (
        isinstance(tolerance, int | float)
        and not isinstance(tolerance, bool)
        and isinstance(expected, int | float)
        and not isinstance(expected, bool)
    ):
        return f"a number, within {tolerance:g}"
    return "a JSON value"


def _reference(expected: Any, result: Recorded, case: dict[str, Any]) -> _Outcome:
    if expected is _MISSING:
        return _Outcome("not-run", None, "reference-answer: the row has no expected answer")
    if not result.has_output:
        return _Outcome("not-run", None, "the result records no output")
    how = _compared(case, expected)
    if output_equals(expected, result.output, case):
        return _Outcome("pass", 1.0, f"reference-answer: the output equals expected ({how})")
    return _Outcome(
        "fail",
        0.0,
        f"reference-answer: the output {_shown(result.output)} does not equal expected"
        f" {_shown(expected)} ({how})",
    )


def _acceptable(
    expected: Any, result: Recorded, case: dict[str, Any], pass_grade: float
) -> _Outcome:
    if not isinstance(expected, dict):
        return _Outcome("not-run", None, "acceptable-set: expected is not a set of answers")
    if not result.has_output:
        return _Outcome("not-run", None, "the result records no output")
    if "satisfies" in expected:
        decided = run_check(expected["satisfies"], result.output)
        verdict: Verdict = "pass" if decided.passed else "fail"
        return _Outcome(verdict, float(decided.passed), f"acceptable-set: {decided.reason}")
    members = expected.get("acceptable")
    if isinstance(members, list):
        for number, member in enumerate(members, start=1):
            if output_equals(member, result.output, case):
                return _Outcome(
                    "pass", 1.0, f"acceptable-set: the output is member {number} of {len(members)}"
                )
        return _Outcome(
            "fail",
            0.0,
            f"acceptable-set: the output {_shown(result.output)} is none of the"
            f" {len(members)} acceptable answers",
        )
    graded = expected.get("graded")
    if not isinstance(graded, list):
        return _Outcome("not-run", None, "acceptable-set: expected has no members")
    matched = [
        member
        for member in graded
        if isinstance(member, dict) and output_equals(member.get("value"), result.output, case)
    ]
    if not matched:
        return _Outcome(
            "fail",
            0.0,
            f"acceptable-set (graded): the output {_shown(result.output)} is none of the"
            f" {len(graded)} graded answers",
        )
    grade = max(float(member.get("grade", 0)) for member in matched)
    if grade >= pass_grade:
        return _Outcome(
            "pass",
            grade,
            f"acceptable-set (graded): grade {grade:g}, passing at {pass_grade:g}",
        )
    return _Outcome(
        "fail",
        grade,
        f"acceptable-set (graded): the output's grade {grade:g} is below the pass grade"
        f" {pass_grade:g}",
    )


@dataclass(frozen=True)
class Call:
    """A tool call as graded: its name and arguments (text that was not a JSON object stays
    text, and matches only a call expected with no arguments)."""

    name: str
    arguments: Any = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.name}({_shown(self.arguments, 50) if self.arguments else ''})"


def calls_of(recorded: list[Any]) -> list[Call] | str:
    """The calls of a recorded trajectory, or what is wrong with it. A call is ``{name,
    arguments}`` or OpenAI's ``{type: function, function: {name, arguments}}``; arguments
    given as JSON text are read as JSON."""
    calls = []
    for number, item in enumerate(recorded, start=1):
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            item = item["function"]
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return f"call {number} has no name: a call is {{name, arguments}}"
        arguments = item.get("arguments", item.get("args", {}))
        if isinstance(arguments, str):
            # text that is not JSON is what a model wrote: it matches no expected arguments
            with contextlib.suppress(jsonvalues.JSONError):
                arguments = jsonvalues.loads(arguments) if arguments.strip() else {}
        calls.append(Call(item["name"], {} if arguments is None else arguments))
    return calls


def _arguments_match(expected: Any, given: Any, mode: str) -> bool:
    if not isinstance(expected, dict) or not expected:
        return mode == "subset" or json_equal(expected or {}, given)
    if not isinstance(given, dict):
        return False
    if mode == "exact":
        return json_equal(expected, given)
    return all(key in given and json_equal(value, given[key]) for key, value in expected.items())


def _tool_calls(expected: Any, result: Recorded, options: GradingOptions) -> _Outcome:
    if not isinstance(expected, dict) or not isinstance(expected.get("calls"), list):
        return _Outcome("not-run", None, "expected-tool-calls: expected has no calls")
    if result.tool_calls is None:
        return _Outcome("not-run", None, "the result records no tool calls")
    made = calls_of(result.tool_calls)
    if isinstance(made, str):
        return _Outcome("fail", 0.0, f"expected-tool-calls: the recorded {made}")
    wanted = [
        Call(str(item.get("name")), item.get("arguments", {}))
        for item in expected["calls"]
        if isinstance(item, dict)
    ]
    for forbidden in expected.get("forbidden") or []:
        if not isinstance(forbidden, dict):
            continue
        arguments = forbidden.get("arguments")
        for call in made:
            if call.name == forbidden.get("name") and (
                arguments is None or _arguments_match(arguments, call.arguments, "subset")
            ):
                what = "any call of it" if arguments is None else "with those arguments"
                return _Outcome(
                    "fail",
                    0.0,
                    f"expected-tool-calls: the forbidden call {call} was made ({what} is"
                    " forbidden)",
                )

    def matches(want: Call, call: Call) -> bool:
        return want.name == call.name and _arguments_match(
            want.arguments, call.arguments, options.arguments
        )

    order = expected.get("order", "exact")
    found = (
        _in_order(wanted, made, matches) if order == "exact" else _any_order(wanted, made, matches)
    )
    missing = [want for want, hit in zip(wanted, found, strict=True) if not hit]
    extra = len(made) - sum(found)
    others = f"; {extra} other call(s) made, which do not fail a row" if extra > 0 else ""
    if not missing:
        ordered = "in order" if order == "exact" else "in any order"
        return _Outcome(
            "pass",
            1.0,
            f"expected-tool-calls: all {len(wanted)} expected call(s) made {ordered}{others}",
        )
    score = (len(wanted) - len(missing)) / len(wanted) if wanted else 0.0
    first = missing[0]
    same_name = [call for call in made if call.name == first.name]
    if order == "exact" and all(_any_order(wanted, made, matches)):
        why = "the expected calls were made, but not in the expected order"
    elif same_name:
        how = "equal" if options.arguments == "exact" else "including"
        why = f"{first.name} was called, but not with arguments {how} {_shown(first.arguments, 50)}"
    else:
        why = f"{first} was not called"
    return _Outcome(
        "fail",
        score,
        f"expected-tool-calls: {why} ({len(missing)} of {len(wanted)} expected call(s)"
        f" missing){others}",
    )


def _in_order(wanted: list[Call], made: list[Call], matches: Any) -> list[bool]:
    """Which expected calls are made as a subsequence of the calls, earliest first."""
    found = [False] * len(wanted)
    position = 0
    for call in made:
        if position < len(wanted) and matches(wanted[position], call):
            found[position] = True
            position += 1
    return found


def _any_order(wanted: list[Call], made: list[Call], matches: Any) -> list[bool]:
    """Which expected calls each have a call of their own, in any order (a matching of
    expected calls to calls, by augmenting paths)."""
    owner: dict[int, int] = {}

    def assign(index: int, seen: set[int]) -> bool:
        for position, call in enumerate(made):
            if position in seen or not matches(wanted[index], call):
                continue
            seen.add(position)
            if position not in owner or assign(owner[position], seen):
                owner[position] = index
                return True
        return False

    found = [False] * len(wanted)
    for index in range(len(wanted)):
        found[index] = assign(index, set())
    return found


# --- final state ------------------------------------------------------------------------------


def _final_state(expected: Any, result: Recorded, options: GradingOptions) -> _Outcome:
    checks = expected.get("checks") if isinstance(expected, dict) else None
    if not isinstance(checks, list) or not checks:
        return _Outcome("not-run", None, "expected-final-state: expected has no checks")
    state = result.final_state
    # every check is decided, so the score is the share that holds whatever their order
    decided = [_check(check if isinstance(check, dict) else {}, state, options) for check in checks]
    passed = sum(verdict is True for verdict, _ in decided)
    failing = [
        f"check {number} of {len(checks)} fails: {reason}"
        for number, (verdict, reason) in enumerate(decided, start=1)
        if verdict is False
    ]
    if failing:
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        return _Outcome("fail", passed / len(checks), f"expected-final-state: {failing[0]}{more}")
    unknown = [
        f"check {number}: {reason}"
        for number, (verdict, reason) in enumerate(decided, start=1)
        if verdict is None
    ]
    if unknown:
        return _Outcome("not-run", None, "expected-final-state: " + "; ".join(unknown))
    return _Outcome("pass", 1.0, f"expected-final-state: all {len(checks)} check(s) hold")


def _check(
    check: dict[str, Any], state: dict[str, Any] | None, options: GradingOptions
) -> tuple[bool | None, str]:
    """One check: True, False, or None when nothing recorded or allowed can decide it."""
    kind = check.get("kind")
    state = state or {}
    if kind == "file_exists":
        return _file_check(str(check.get("path")), state, options)
    if kind == "command":
        return _command_check(check, state, options)
    if kind == "record":
        return _record_check(check, state)
    return None, f"a check of kind {kind!r} is not one Blueprint knows"


def _file_check(
    path: str, state: dict[str, Any], options: GradingOptions
) -> tuple[bool | None, str]:
    files = state.get("files")
    if files is not None:
        present = _recorded_file(path, files)
        return present, f"file {path} {'exists' if present else 'does not exist'} (recorded)"
    if options.workdir is None:
        return None, f"file {path}: no files recorded, and no --workdir to look in"
    return _in_workdir(options.workdir, path)


def _in_workdir(workdir: Path, path: str) -> tuple[bool | None, str]:
    """Whether ``path`` names a file inside ``workdir`` (links resolved, confined to it). A
    path no file can have (a NUL byte, a loop of links, a name too long) names none; one
    that cannot be looked at (no permission) decides nothing."""
    if "\x00" in path:
        return False, f"file {path!r} cannot exist: a path holds no NUL byte"
    try:
        root = workdir.resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            return False, f"file {path} leads outside --workdir {workdir}"
        target.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False, f"file {path} does not exist in {workdir}"
    except PermissionError as error:
        return None, f"file {path}: cannot look in {workdir} ({error.strerror})"
    except (OSError, RuntimeError, ValueError) as error:  # a loop of links, a name too long
        reason = getattr(error, "strerror", None) or error
        return False, f"file {path} does not exist in {workdir} ({reason})"
    return True, f"file {path} exists in {workdir}"


def file_key(path: str) -> str:
    """A file path as recorded paths compare: ``./out/x``, ``out//x`` and ``out/./x`` are
    ``out/x`` (backslashes are separators too); ``..`` parts are kept as written."""
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    rooted = "/" if path.startswith(("/", "\\")) else ""
    return rooted + "/".join(parts)


def _recorded_file(path: str, files: Any) -> bool:
    """Whether a recorded ``finalState.files`` holds a path: a list of paths, or an object of
    paths whose value ``false`` means absent."""
    wanted = file_key(path)
    if isinstance(files, list):
        return any(isinstance(item, str) and file_key(item) == wanted for item in files)
    if isinstance(files, dict):
        return any(file_key(key) == wanted and value is not False for key, value in files.items())
    return False


def _command_check(
    check: dict[str, Any], state: dict[str, Any], options: GradingOptions
) -> tuple[bool | None, str]:
    run = str(check.get("run"))
    wanted = check.get("exitCode")
    code = _recorded_exit_code(run, state.get("commands"))
    how = "recorded"
    if code is None:
        if not options.allow_commands:
            return None, f"command {run!r}: no exit code recorded (--allow-commands runs it)"
        try:
            # the user allowed this set's commands (--allow-commands); nothing it starts
            # outlives it, and its output is not kept
            done = run_command(run, options.workdir or Path.cwd(), options.command_timeout)
        except (OSError, ValueError) as error:
            reason = getattr(error, "strerror", None) or error
            return False, f"command {run!r} could not run: {reason}"
        if done.timed_out:
            return False, f"command {run!r} ran past {options.command_timeout:g} s"
        code, how = done.exit_code, "run"
    if isinstance(wanted, int) and not isinstance(wanted, bool) and code == wanted:
        return True, f"command {run!r} exits {code} ({how})"
    return False, f"command {run!r} exits {code}, not {wanted} ({how})"


def _recorded_exit_code(run: str, commands: Any) -> int | None:
    """The exit code recorded for a command: ``{run: code}`` or ``[{run, exitCode}]``."""
    if isinstance(commands, dict):
        code = commands.get(run)
    elif isinstance(commands, list):
        code = next(
            (
                item.get("exitCode")
                for item in commands
                if isinstance(item, dict) and item.get("run") == run
            ),
            None,
        )
    else:
        return None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _record_check(check: dict[str, Any], state: dict[str, Any]) -> tuple[bool | None, str]:
    description = str(check.get("description"))
    records = state.get("records")
    keys = [key for key in (check.get("query"), description) if isinstance(key, str)]
    value: Any = _MISSING
    if isinstance(records, dict):
        value = next((records[key] for key in keys if key in records), _MISSING)
    elif isinstance(records, list):
        for item in records:
            if not isinstance(item, dict):
                continue
            if any(item.get("query") == key or item.get("description") == key for key in keys):
                value = item.get("value", item.get("equals", _MISSING))
                break
    if value is _MISSING:
        if records is None:
            return None, f"record {description!r}: no records recorded"
        # records were recorded and this one is not among them: it is not there
        return False, f"record {description!r} is not among the recorded records"
    if "equals" not in check:
        if value is None or value is False:
            return False, f"record {description!r} is recorded as {_shown(value)}: not there"
        return True, f"record {description!r} is there"
    if json_equal(check["equals"], value):
        return True, f"record {description!r} equals {_shown(check['equals'])}"
    return False, f"record {description!r} is {_shown(value)}, not {_shown(check['equals'])}"


# --- judged rows ------------------------------------------------------------------------------


def _judged(
    result: Recorded, options: GradingOptions, why: str, threshold: float | None
) -> _Outcome:
    judge = result.judge
    if not isinstance(judge, dict):
        return _Outcome(
            "needs-judge", None, f"{why}: needs a judge's verdict, and none is recorded"
        )
    verdict = judge.get("pass")
    score = judge.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        score = None
    if threshold is not None:
        # the row's threshold, as promptfoo's llm-rubric applies one: the judge must not fail
        # the output, and its score (1 for a bare pass) must reach the threshold
        if verdict is False:
            return _Outcome("fail", float(score or 0), f"{why}: the judge fails it")
        if score is None and verdict is True:
            score = 1.0
    elif isinstance(verdict, bool):
        return _Outcome(
            "pass" if verdict else "fail",
            float(score) if score is not None else float(verdict),
            f"{why}: the judge {'passes' if verdict else 'fails'} it",
        )
    if score is not None:
        bar = options.judge_pass_score if threshold is None else threshold
        passed = score >= bar
        whose = "" if threshold is None else " (the row's passThreshold)"
        return _Outcome(
            "pass" if passed else "fail",
            float(score),
            f"{why}: the judge's score {score:g} is {'at or above' if passed else 'below'}"
            f" {bar:g}{whose}",
        )
    return _Outcome("needs-judge", None, f"{why}: the judge's verdict has no pass and no score")


def verdict_counts(verdicts: Iterable[RowVerdict]) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
    for verdict in verdicts:
        counts[verdict.verdict] += 1
    return counts
