"""omk's and apollia-os's verdicts by their own documented rules, written here apart from
Blueprint's code, for tools that have no binary on this machine.

**omk** (oh-my-knowledge, https://github.com/lizhiyao/oh-my-knowledge, MIT): its assertions
are decided by ``evalAssertion`` and ``runAssertions`` in ``src/grading/assertions.ts``
(read at the repository's release 0.23.0, commit 85a656b): ``contains``, ``not_contains``,
``starts_with``, ``ends_with``, ``contains_all`` and ``contains_any`` compare the output and
the value lowercased (JavaScript's ``toLowerCase``); ``equals`` and ``not_equals`` compare
trimmed texts; ``regex`` is ``new RegExp(pattern, flags || 'i').test(output)``;
``min_length``/``max_length`` bound ``output.length`` (UTF-16 code units);
``word_count_min``/``word_count_max`` bound ``output.split(/\\s+/).filter(Boolean).length``;
``json_valid`` is ``JSON.parse`` succeeding; ``levenshtein_max`` bounds the edit distance
(over UTF-16 code units) to ``reference``; ``not: true`` negates any assertion; an
``assert-set`` passes when all (mode ``all``, the default) or any (mode ``any``) of its
children pass, none passing when it has none. A sample's assertions pass when every one does
(the weighted ratio omk turns into its 1-5 score is then 1). The evaluator is JavaScript, run
by node, so that the regular expressions, lowercasing, trimming and lengths are JavaScript's
own; an assertion it does not know (``json_schema``, which needs Ajv) is an error.

**apollia-os** (https://github.com/nidal-z/apollia-os, MIT OR Apache-2.0): ``EvalRunner``'s
``evaluate_assertions`` in ``crates/apollia-eval/src/runner.rs`` passes a run when every
assertion holds: ``exit_code`` equals the run's exit code, ``file_exists`` finds the path,
``regex`` is ``Regex::new(pattern)`` (Rust's regex crate) ``is_match`` anywhere in the channel
it names (``result`` here). The Rust patterns are read here with Python's ``re`` for the subset
whose meaning the two share, and refused otherwise: literals and escaped punctuation, ``\\n``
``\\t`` ``\\r`` and ``\\x{...}``, classes of literals and ranges, ``.`` (any character but
``\\n`` in both), groups, ``(?:...)`` and ``(?s:...)``, alternation and the quantifiers; ``^``
and ``$`` without a multi-line flag are the very start and end of the text (Python's ``\\A``
and ``\\Z``: Python's ``$`` would also match before a final line end).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import required

OMK_EVALUATOR = r"""
const fs = require('fs');
function levenshtein(a, b) {
  const m = a.length, n = b.length;
  let prev = Array.from({length: n + 1}, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const curr = [i];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      curr[j] = Math.min(prev[j] + 1, curr[j - 1] + 1, prev[j - 1] + cost);
    }
    prev = curr;
  }
  return prev[n];
}
function has(lower, v) { return lower.includes(String(v).toLowerCase()); }
function words(output) { return output.split(/\s+/).filter(Boolean).length; }
function raw(output, a) {
  const lower = output.toLowerCase();
  switch (a.type) {
    case 'assert-set': {
      const children = a.children || [];
      if (children.length === 0) return false;
      const passes = children.map((c) => decided(output, c));
      return (a.mode || 'all') === 'any' ? passes.some(Boolean) : passes.every(Boolean);
    }
    case 'contains': return lower.includes(String(a.value).toLowerCase());
    case 'not_contains': return !lower.includes(String(a.value).toLowerCase());
    case 'starts_with': return lower.startsWith(String(a.value).toLowerCase());
    case 'ends_with': return lower.endsWith(String(a.value).toLowerCase());
    case 'equals': return output.trim() === String(a.value).trim();
    case 'not_equals': return output.trim() !== String(a.value).trim();
    case 'regex': return new RegExp(a.pattern, a.flags || 'i').test(output);
    case 'min_length': return output.length >= a.value;
    case 'max_length': return output.length <= a.value;
    case 'word_count_min': return words(output) >= a.value;
    case 'word_count_max': return words(output) <= a.value;
    case 'contains_all': return (a.values || []).every((v) => has(lower, v));
    case 'contains_any': return (a.values || []).some((v) => has(lower, v));
    case 'json_valid': try { JSON.parse(output); return true; } catch { return false; }
    case 'levenshtein_max':
      return levenshtein(output, String(a.reference ?? a.value ?? '')) <= (a.value ?? Infinity);
    default: throw new Error('an assertion this evaluator does not know: ' + a.type);
  }
}
function decided(output, a) { const r = raw(output, a); return a.not ? !r : r; }
const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const verdicts = cases.map(([assertions, output]) => assertions.every((a) => decided(output, a)));
process.stdout.write(JSON.stringify(verdicts));
"""


def node() -> str:
    executable = os.environ.get("BLUEPRINT_NODE") or shutil.which("node")
    if not executable:
        if required():
            pytest.fail("node is not installed but conformance tests are required")
        pytest.skip("node is not installed (omk's rules are run as JavaScript)")
    return executable


def omk_verdicts(folder: Path, cases: list[tuple[list[dict[str, Any]], str]]) -> list[bool]:
    """Whether every omk assertion passes on its output, for each (assertions, output)."""
    script = folder / "omk-rules.cjs"
    script.write_text(OMK_EVALUATOR, encoding="utf-8")
    data = folder / "omk-cases.json"
    data.write_text(json.dumps(cases), encoding="utf-8")
    done = subprocess.run(
        [node(), str(script), str(data)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    verdicts = json.loads(done.stdout)
    assert len(verdicts) == len(cases)
    return [bool(verdict) for verdict in verdicts]


# --- apollia-os -------------------------------------------------------------------------------

_HEX = re.compile(r"\\x\{([0-9A-Fa-f]{1,6})\}")
#: escapes both dialects read as the same literal character
_LITERAL_ESCAPES = frozenset("\\.+*?()|[]{}^$#&-~nrt")


def rust_as_python(pattern: str) -> str:
    """A Rust regex of the shared subset as a Python pattern that matches the same texts."""
    out: list[str] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            hexed = _HEX.match(pattern, index)
            if hexed:
                out.append(re.escape(chr(int(hexed.group(1), 16))))
                index = hexed.end()
                continue
            following = pattern[index + 1 : index + 2]
            if following not in _LITERAL_ESCAPES or not following:
                raise NotImplementedError(f"escape \\{following} in {pattern!r}")
            out.append("\\" + following)
            index += 2
            continue
        if in_class:
            if char == "[" or pattern.startswith(("&&", "--", "~~"), index):
                raise NotImplementedError(f"a nested class or set operation in {pattern!r}")
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern.startswith("]", index + 1) or pattern.startswith("^]", index + 1):
                raise NotImplementedError(f"a class starting with ] in {pattern!r}")
        elif char == "(" and pattern.startswith("(?", index):
            if not pattern.startswith(("(?:", "(?s:"), index):
                raise NotImplementedError(f"a group with flags or a name in {pattern!r}")
            out.append(char)
        elif char == "^":
            out.append(r"\A")
        elif char == "$":
            out.append(r"\Z")
        else:
            out.append(char)
        index += 1
    return "".join(out)


def apollia_passes(
    assertions: list[dict[str, Any]], result: str, exit_code: int, files: set[str]
) -> bool:
    """apollia-os's verdict on one run: every assertion holds."""
    for assertion in assertions:
        kind = assertion["type"]
        if kind == "exit_code":
            held = exit_code == assertion["equals"]
        elif kind == "file_exists":
            held = assertion["path"] in files
        elif kind == "regex" and assertion.get("on") == "result":
            held = re.search(rust_as_python(assertion["pattern"]), result) is not None
        else:
            raise NotImplementedError(f"an assertion these rules do not decide: {assertion}")
        if not held:
            return False
    return True
