"""The check vocabulary's table: a check, an output, and the verdict every grader must give
(``blueprint grade``, and each runner a set with these checks is exported to)."""

from __future__ import annotations

from typing import Any

# (check, output, verdict): one line per rule, edge cases included
CASES: list[tuple[dict[str, Any], Any, bool]] = [
    ({"type": "equals", "value": "Paris"}, "Paris", True),
    ({"type": "equals", "value": "Paris"}, "Paris\n", False),
    ({"type": "equals", "value": "Paris", "normalize": ["trim"]}, "Paris\n", True),
    ({"type": "equals", "value": "paris", "normalize": ["lowercase"]}, "PARIS", True),
    ({"type": "equals", "value": "caf\u00e9", "normalize": ["nfc"]}, "cafe\u0301", True),
    ({"type": "equals", "value": "caf\u00e9"}, "cafe\u0301", False),
    ({"type": "equals", "value": "a b", "normalize": ["collapse-whitespace"]}, "a \t\n b", True),
    ({"type": "equals", "value": {"a": 1}}, '{"a": 1.0}', True),
    ({"type": "number", "value": 3.14, "tolerance": 0.01}, "3.15", True),
    ({"type": "number", "value": 3.14, "tolerance": 0.01}, " 3.16 ", False),
    ({"type": "number", "value": 42}, 42, True),
    ({"type": "number", "value": 42}, "42 apples", False),
    ({"type": "number", "value": 1}, True, False),
    ({"type": "contains", "value": "grub"}, "Use GRUB", False),
    ({"type": "contains", "value": "grub", "normalize": ["lowercase"]}, "Use GRUB", True),
    ({"type": "starts-with", "value": "Yes"}, "Yes, it is", True),
    ({"type": "ends-with", "value": "."}, "Done.\n", False),
    ({"type": "ends-with", "value": ".", "normalize": ["trim"]}, "Done.\n", True),
    ({"type": "contains-any", "values": ["a", "z"]}, "xyz", True),
    ({"type": "contains-all", "values": ["x", "q"]}, "xyz", False),
    ({"type": "regex", "pattern": "^yes$"}, "yes\n", False),  # JavaScript's $: the very end
    ({"type": "regex", "pattern": "^yes$", "flags": "m"}, "no\nyes\n", True),
    ({"type": "regex", "pattern": "YES", "flags": "i"}, "oh yes", True),
    ({"type": "regex", "pattern": "a.c"}, "a\rc", False),  # . stops at every line end
    ({"type": "regex", "pattern": "a.c", "flags": "s"}, "a\rc", True),
    ({"type": "regex", "pattern": "\\d"}, "\u0663", False),  # \d is ASCII, as in JavaScript
    ({"type": "regex", "pattern": "\\bfoo\\b"}, "a foo.", True),
    ({"type": "is-json"}, '{"a": [1, 2]}', True),
    ({"type": "is-json"}, "{a: 1}", False),
    ({"type": "is-json"}, {"already": "json"}, True),
    ({"type": "json-schema", "schema": {"type": "object", "required": ["a"]}}, '{"a": 1}', True),
    ({"type": "json-schema", "schema": {"type": "object", "required": ["a"]}}, "{}", False),
    ({"type": "json-schema", "schema": {"pattern": "^a$"}}, '"a\\n"', False),
    ({"type": "length", "max": 5}, "héllo", True),
    ({"type": "length", "min": 3, "unit": "words"}, "one two", False),
    ({"type": "levenshtein", "value": "kitten", "maxDistance": 3}, "sitting", True),
    ({"type": "levenshtein", "value": "kitten", "maxDistance": 2}, "sitting", False),
    ({"type": "items", "required": ["A", "B"]}, '["B", "A"]', True),
    ({"type": "items", "required": ["A", "B"]}, ["B", "A", "C"], False),
    ({"type": "items", "required": ["A"], "allowed": ["C", "D"]}, ["C", "A"], True),
    ({"type": "items", "required": ["A", "A"]}, ["A"], False),
    ({"type": "not", "check": {"type": "contains", "value": "sorry"}}, "Here you go", True),
    (
        {"type": "all", "checks": [{"type": "is-json"}, {"type": "contains", "value": "a"}]},
        "1",
        False,
    ),
    (
        {"type": "any", "checks": [{"type": "is-json"}, {"type": "contains", "value": "a"}]},
        "a",
        True,
    ),
    (
        {
            "type": "weighted",
            "checks": [{"type": "is-json"}, {"type": "contains", "value": "a"}],
            "weights": [1, 3],
            "threshold": 0.75,
        },
        "a",
        True,
    ),
    (
        {"type": "weighted", "checks": [{"type": "is-json"}], "weights": [0], "threshold": 0},
        "x",
        True,
    ),
]
