"""promptfoo: test cases (YAML, JSON, JSONL) and configs; reads CSV test files too.

Rows authored in Blueprint become tests whose assertions are chosen from the oracle type and
the evaluator, with every text kept literal through promptfoo's template rendering. Tests
imported from a promptfoo suite go back as they came: their own assertions, vars (live
templates, file references and lists included), options and thresholds, and the config's
``defaultTest``, prompts and providers, kept at set level.
"""

from __future__ import annotations

from blueprint.formats.promptfoo.assertions import (
    Inference,
    asserted,
    assertions_for,
    criterion,
    expected_from_assertions,
    infer,
)
from blueprint.formats.promptfoo.cases import (
    ASSERTION_TYPES,
    CONTEXT_VARS,
    Suite,
    assertion_from_cell,
    configs_of,
    input_from_vars,
    merged_vars,
    suite_of_header,
    vars_for,
)
from blueprint.formats.promptfoo.codec import FINAL_STATE, NO_ASSERTION, PromptfooCodec
from blueprint.formats.promptfoo.config import CONFIG_KEYS, Loaded, load
from blueprint.formats.promptfoo.templating import literal, risky, unliteral

# the YAML dialect is shared with omk, so it lives in yaml12; its names still import from
# here, where they were first
from blueprint.formats.yaml12 import (
    Yaml12Loader,
    YamlDate,
    date_paths,
    dump_yaml,
    mark_dates,
    read_yaml,
)

__all__ = [
    "ASSERTION_TYPES",
    "CONFIG_KEYS",
    "CONTEXT_VARS",
    "FINAL_STATE",
    "NO_ASSERTION",
    "Inference",
    "Loaded",
    "PromptfooCodec",
    "Suite",
    "Yaml12Loader",
    "YamlDate",
    "asserted",
    "assertion_from_cell",
    "assertions_for",
    "configs_of",
    "criterion",
    "date_paths",
    "dump_yaml",
    "expected_from_assertions",
    "infer",
    "input_from_vars",
    "literal",
    "load",
    "mark_dates",
    "merged_vars",
    "read_yaml",
    "risky",
    "suite_of_header",
    "unliteral",
    "vars_for",
]
