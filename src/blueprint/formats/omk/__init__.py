"""omk eval-sample sets: one document, ``schemaVersion: omk.eval-sample-set/v2``, JSON or YAML.

An omk sample set is strict: the root, every sample, assertion, mock and nested object
accept only the keys omk's loader knows, so there is no free-form place for Blueprint's case
profile. The writer therefore writes only omk's own keys, and what a sample cannot say is
declared lost field by field (see :meth:`VendorCodec.declare_unkept`).

How rows map to samples:

- ``id`` is ``sample_id``; ``input`` is ``prompt`` (text as it is; any other value as its
  JSON text);
- a reference answer is an ``equals`` assertion; an acceptable set an ``assert-set`` of mode
  ``any`` holding one ``equals`` per member; expected tool calls are ``tools_called``, one
  ``tool_input_contains`` per argument and ``tools_not_called``; a rubric row's criteria are
  rubric dimensions of equal weight, summing to exactly 1;
- provenance goes to omk's three values where one fits; the case family to ``capability``.

Reading infers the oracle type from the rubric and assertions, sets provenance ``imported``
and keeps every key of the sample it does not read (``difficulty``, ``tripwire``, ``mocks``,
``covers``, ``context``, assertion weights, ...) in ``case.extensions.omk``, so an omk file
goes back as it came. The root's ``requires`` is kept in the set's ``extensions.omk``.

:func:`check_document` implements omk's own rules for a sample set (strict keys at every
level, rubric weights, ``mock_hit`` references, assert-set nesting, required values per
assertion type); reading an omk file reports what it finds as ``vendor-format`` issues.
"""

from __future__ import annotations

from blueprint.formats.omk.codec import (
    EMPTY_PROMPT,
    FINAL_STATE,
    NO_CHECK,
    PROVENANCE_TO_OMK,
    EmptySampleSet,
    OmkCodec,
)
from blueprint.formats.omk.files import (
    CANONICAL_NAMES,
    ambiguity,
    check_file,
    read_document,
)
from blueprint.formats.omk.rules import (
    ASSERTION_KEYS,
    ASSERTION_TYPES,
    ASYNC_TYPES,
    COVER_KINDS,
    MATCH_KEYS,
    MAX_SAFE,
    REQUIRES_KEYS,
    ROOT_KEYS,
    SAMPLE_KEYS,
    SCHEMA_VERSION,
    WEIGHT_TOLERANCE,
    Problem,
    blank,
    check_document,
)
from blueprint.formats.omk.samples import (
    answer_value,
    argument_text,
    equal_weights,
    grading_of,
    oracle_of,
    prompt_of,
    rubric_criteria,
    rubric_of,
)

__all__ = [
    "ASSERTION_KEYS",
    "ASSERTION_TYPES",
    "ASYNC_TYPES",
    "CANONICAL_NAMES",
    "COVER_KINDS",
    "EMPTY_PROMPT",
    "FINAL_STATE",
    "MATCH_KEYS",
    "MAX_SAFE",
    "NO_CHECK",
    "PROVENANCE_TO_OMK",
    "REQUIRES_KEYS",
    "ROOT_KEYS",
    "SAMPLE_KEYS",
    "SCHEMA_VERSION",
    "WEIGHT_TOLERANCE",
    "EmptySampleSet",
    "OmkCodec",
    "Problem",
    "ambiguity",
    "answer_value",
    "argument_text",
    "blank",
    "check_document",
    "check_file",
    "equal_weights",
    "grading_of",
    "oracle_of",
    "prompt_of",
    "read_document",
    "rubric_criteria",
    "rubric_of",
]
