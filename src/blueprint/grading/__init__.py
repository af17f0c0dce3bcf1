"""Grading: what each oracle type means when a recorded output is graded, in one place.

This wing sits beside ``authoring``: it reads sets through the transport layer and imports
nothing above it. :func:`grade_row` is the reference semantics every runner's scorer uses;
:func:`grade_set` applies it to a set and a file of recorded results.
"""

from __future__ import annotations

from blueprint.grading.report import GradeReport, UnknownResultIds, grade_set, pass_rate
from blueprint.grading.results import read_results
from blueprint.grading.semantics import (
    VERDICTS,
    GradingOptions,
    Recorded,
    RowVerdict,
    calls_of,
    grade_row,
    json_equal,
    output_equals,
)

__all__ = [
    "VERDICTS",
    "GradeReport",
    "GradingOptions",
    "Recorded",
    "RowVerdict",
    "UnknownResultIds",
    "calls_of",
    "grade_row",
    "grade_set",
    "json_equal",
    "output_equals",
    "pass_rate",
    "read_results",
]
