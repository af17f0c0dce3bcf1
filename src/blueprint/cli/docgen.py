"""Generate from the code the files committed beside it, so they can never drift: the
reference pages in ``docs/`` and the published schemas in ``schemas/``.

Run ``python -m blueprint.cli.docgen --write docs`` after changing the models, the issue codes,
the admissibility map or the CSV rules, and ``blueprint schema --write schemas`` after changing
the models; a test fails while a page or a schema is out of date.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Final

from blueprint.core import admissibility, judgeprompt
from blueprint.core.errors import OutputError
from blueprint.core.issues import CODES
from blueprint.core.model import OMITTED_FIELDS, ORACLE_TYPES
from blueprint.core.resources import PACKAGE
from blueprint.core.schema import published_schemas, render_schema
from blueprint.formats import REGISTRY, checkmap
from blueprint.formats.canonical_csv import LIST_FIELDS
from blueprint.formats.cells import encode_cell, encode_list_cell
from blueprint.formats.mapping import load_mapping
from blueprint.io import jsonvalues
from blueprint.io.atomic import AtomicOutputs
from blueprint.reports.templating import markdown_environment

_environment = markdown_environment()


def _type_of(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema or "oneOf" in schema:
        branches = [
            b for b in schema.get("anyOf", schema.get("oneOf", [])) if b != {"type": "null"}
        ]
        return " or ".join(_type_of(branch) for branch in branches)
    if "const" in schema:
        return f"`{schema['const']}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"array of {_type_of(schema.get('items', {}))}"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"object of {_type_of(extra)}"
        return "object"
    if kind == "string":
        if schema.get("pattern"):
            return "string (kebab-case)"
        return "non-empty string" if schema.get("minLength") == 1 else "string"
    if kind in ("integer", "number", "boolean"):
        bounds = [
            f"{op} {schema[key]}"
            for key, op in (("minimum", ">="), ("maximum", "<="))
            if key in schema
        ]
        return " ".join([kind, " and ".join(bounds)]).strip()
    return "any JSON value"


def _fields(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    required = set(schema.get("required", []))
    return {
        "name": name,
        "description": schema.get("description", ""),
        "closed": schema.get("additionalProperties") is False,
        "fields": [
            {
                "name": key,
                "type": _type_of(prop),
                "required": key in required,
                "description": prop.get("description", ""),
            }
            for key, prop in schema.get("properties", {}).items()
        ],
    }


def _models() -> list[dict[str, Any]]:
    eval_set = published_schemas()["eval-set.schema.json"]
    expected = published_schemas()["expected.schema.json"]
    defs = {**eval_set["$defs"], **expected["$defs"]}
    order = ["EvalSet", "CaseFamily", "Row", "RowMetadata", "CaseProfile"]
    shapes = [name for name in expected["$defs"] if name[0].isupper()]
    models = [_fields("EvalSet", eval_set)]
    models += [_fields(name, defs[name]) for name in order[1:] + shapes if name in defs]
    return models


def _pack_models() -> list[dict[str, Any]]:
    pack = published_schemas()["pack.schema.json"]
    overlay = published_schemas()["overlay.schema.json"]
    defs = {**pack["$defs"], **overlay["$defs"]}
    order = ["PackFamily", "StarterRow", "StarterCase", "Concern"]
    return [_fields("Pack", pack), _fields("Overlay", overlay)] + [
        _fields(name, defs[name]) for name in order if name in defs
    ]


def _csv_examples() -> list[dict[str, str]]:
    values: list[tuple[str, Any, bool]] = [
        ("a plain string", "What is the refund window?", False),
        ("the empty string", "", False),
        ("a string that looks like a number", "1", False),
        ("the number 1", 1, False),
        ("null", None, False),
        ("the string null", "null", False),
        ("a string pandas reads as missing", "NA", False),
        ("a formula-like string", "=SUM(A1:A3)", False),
        ("an object", {"order": "A-1042", "items": 2}, False),
        ("a list field", ["policy-drift", "tone"], True),
        ("a list item with a pipe", ["a | b", "c"], True),
        ("an empty list", [], True),
    ]
    rows = []
    for label, value, is_list in values:
        cell = encode_list_cell(value) if is_list else encode_cell(value)
        rows.append({"label": label, "value": jsonvalues.dumps_text(value), "cell": cell})
    return rows


def _reports_example() -> dict[str, Any]:
    """The worked example of docs/reports.md: the reports on the bundled example set."""
    from blueprint.cli.reports import summary_text
    from blueprint.reports.render import render_risk_markdown
    from blueprint.reports.risk import BLAST_RADII, HIGH_RISK_RULE, MEANINGS, REVERSIBILITY
    from blueprint.reports.summary import ROWS_PER_FAMILY, summarize

    name = "examples/support-refunds.json"
    summary = summarize(PACKAGE.parents[1] / name)
    summary.source = name
    data = summary.to_json()
    part = {key: data[key] for key in ("rows", "valid", "byOracleType", "provenanceMix")}
    part["families"] = data["families"][:1]
    part["exports"] = {"promptfoo": data["exports"]["promptfoo"]}
    return {
        "levels": list(zip(REVERSIBILITY, BLAST_RADII, strict=True)),
        "meanings": MEANINGS,
        "rule": HIGH_RISK_RULE,
        "rows_per_family": ROWS_PER_FAMILY,
        "summary_text": summary_text(summary),
        "risk_markdown": render_risk_markdown(summary.risk, name),
        "summary_json": json.dumps(part, indent=2, ensure_ascii=False),
    }


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else value


#: two runs over the same twelve rows, for the worked paired comparison
_BEFORE: Final = (0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1)
_AFTER: Final = (1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1)


def _statistics_example() -> dict[str, Any]:
    """The worked examples of docs/statistics.md, computed by the functions they document,
    and the power section of ``blueprint summary`` on the bundled example set."""
    from blueprint.cli.reports import power_text
    from blueprint.grading import statistics as stats
    from blueprint.reports.summary import SummaryOptions, summarize

    name = "examples/support-refunds.json"
    summary = summarize(PACKAGE.parents[1] / name, SummaryOptions(exports=False, detect=0.1))
    sizes = (10, 25, 50, 100, 200, 400, 800, 1600)
    baselines = (0.5, 0.7, 0.9)
    return {
        "example": name,
        "power_text": power_text(summary.power),
        "power_json": json.dumps(summary.to_json()["power"], indent=2, ensure_ascii=False),
        "wilson": stats.wilson_interval(7, 10),
        "exact": stats.exact_interval(7, 10),
        "bound": stats.failure_upper_bound(100),
        "bound_exact": stats.exact_interval(0, 100),
        "clustered": stats.clustered_standard_error([1, 1, 0, 0, 1, 0], list("aabbcc")),
        "independent": stats.clustered_standard_error([1, 1, 0, 0, 1, 0], list("abcdef")),
        "before": _BEFORE,
        "after": _AFTER,
        "paired": stats.paired_difference(_BEFORE, _AFTER),
        "mcnemar_example": stats.mcnemar_p(3, 1),
        "mcnemar": stats.mcnemar_p(1, 9),
        "needed": stats.rows_needed(0.5, 0.1),
        "needed_exact": stats._required(0.5, 0.1, 0.8, 0.05),
        "zar": stats._required(0.25, 0.2, 0.9, 0.05),
        "baselines": baselines,
        "detectable": [
            (n, [_finite(stats.detectable_difference(n, rate)) for rate in baselines])
            for n in sizes
        ],
        "straddle": [
            (d, stats.rows_needed(0.5, d), stats.rows_needed(0.5 + d / 2, d))
            for d in (0.05, 0.1, 0.2, 0.4)
        ],
        "needed_for": [
            (d, [stats.rows_needed(rate, d) for rate in baselines]) for d in (0.05, 0.1, 0.2)
        ],
    }


#: a row of each judged oracle type, rendered as an example of its judge template
_JUDGED_EXAMPLES: Final[dict[str, dict[str, Any]]] = {
    "reference-answer": {
        "input": "How long do I have to return an item?",
        "expected": "You can return it within 30 days of delivery.",
        "case": {
            "expectedBehavior": "Quotes the 30-day window, counted from delivery.",
            "evaluationCriteria": ["counts the window from delivery, not from the order"],
        },
    },
    "acceptable-set": {
        "input": "Which carriers deliver to Norway?",
        "expected": {"acceptable": ["Posten and DHL", "DHL and Posten"]},
        "case": {"expectedBehavior": "Names both carriers and no other."},
    },
    "rubric": {
        "input": "This is the third time I am writing. Where is my refund?",
        "case": {
            "expectedBehavior": "Acknowledges the repeat contact and gives the refund's status.",
            "evaluationCriteria": [
                "acknowledges that this is a repeat contact",
                "names a concrete next step and when it happens",
            ],
            "unacceptableBehavior": ["asks the customer to repeat details already given"],
            "passLogic": "both criteria met",
        },
    },
}


def _judge_templates() -> list[dict[str, Any]]:
    found = []
    for oracle, example in _JUDGED_EXAMPLES.items():
        row: dict[str, Any] = {"id": f"example-{oracle}", "input": example["input"]}
        if "expected" in example:
            row["expected"] = example["expected"]
        row["metadata"] = {
            "case": {
                "caseId": row["id"],
                "oracleType": oracle,
                "evaluator": "llm-judge",
                "provenance": "expert-authored",
                **example["case"],
            }
        }
        prompt = judgeprompt.judge_prompt(row)
        assert prompt is not None
        found.append(
            {
                "oracle": oracle,
                "id": judgeprompt.template_id(oracle),
                "source": judgeprompt.template_source(oracle),
                "row": json.dumps(row, indent=2, ensure_ascii=False),
                "example": prompt.text,
            }
        )
    return found


def _context() -> dict[str, Any]:
    return {
        "codes": list(CODES.values()),
        "omitted": OMITTED_FIELDS,
        "models": _models(),
        "pack_models": _pack_models(),
        "rules": [admissibility.ADMISSIBILITY[o] for o in ORACLE_TYPES],
        "formats": list(REGISTRY.values()),
        "csv_examples": _csv_examples(),
        "list_fields": sorted(LIST_FIELDS),
        "checks": checkmap.table(),
        "tools": checkmap.TOOLS,
        "judge_templates": _judge_templates(),
    }


#: page in docs/ -> template
PAGES: Final[dict[str, str]] = {
    "reference/fields.md": "fields.md.j2",
    "reference/issue-codes.md": "issue-codes.md.j2",
    "reference/evaluators.md": "evaluators.md.j2",
    "reference/formats.md": "formats.md.j2",
    "reference/pack-format.md": "pack-format.md.j2",
    "reference/checks.md": "checks.md.j2",
    "reference/judge-templates.md": "judge-templates.md.j2",
    "csv-encoding.md": "csv-encoding.md.j2",
}

#: pages with a context of their own: page in docs/ -> (template, context)
_OWN_CONTEXT: Final = {
    "reports.md": ("reports.md.j2", _reports_example),
    "statistics.md": ("statistics.md.j2", _statistics_example),
}


def _vendor_pages() -> dict[str, str]:
    template = _environment.get_template("vendor.md.j2")
    return {
        f"vendors/{codec.name}.md": template.render(mapping=load_mapping(codec.name))
        for codec in REGISTRY.values()
        if not codec.lossless
    }


def render_pages() -> dict[str, str]:
    context = _context()
    pages = {page: _environment.get_template(t).render(**context) for page, t in PAGES.items()}
    for page, (name, own) in _OWN_CONTEXT.items():
        pages[page] = _environment.get_template(name).render(**own())
    return {**pages, **_vendor_pages()}


def stale_pages(docs: Path) -> list[str]:
    return [
        page
        for page, text in render_pages().items()
        if not (docs / page).is_file() or (docs / page).read_text(encoding="utf-8") != text
    ]


def write_pages(docs: Path) -> list[Path]:
    written = []
    for page, text in render_pages().items():
        target = docs / page
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


# --- the published schemas ------------------------------------------------------------------


def write_schemas(directory: Path, *, force: bool = False) -> list[Path]:
    """Write the published schemas that are missing or stale in ``directory``.

    Files that exist with other content are replaced only with ``force``. Returns the files
    written (none when the folder is current).
    """
    if directory.exists() and not directory.is_dir():
        raise OutputError(directory, "it is not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(directory, error.strerror or str(error)) from None
    targets = [directory / name for name in stale_schemas(directory)]
    with AtomicOutputs(targets, force=force) as outputs:
        for target in targets:
            outputs.open(target, "w").write(render_schema(published_schemas()[target.name]))
    return targets


def stale_schemas(directory: Path) -> list[str]:
    """Names of published schemas whose file in ``directory`` is missing or out of date."""
    stale = []
    for name, document in published_schemas().items():
        target = directory / name
        if not target.is_file() or target.read_text(encoding="utf-8") != render_schema(document):
            stale.append(name)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m blueprint.cli.docgen", description=__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", type=Path, metavar="DOCS", help="write the pages into DOCS")
    action.add_argument("--check", type=Path, metavar="DOCS", help="exit 1 if a page is stale")
    arguments = parser.parse_args(argv)
    if arguments.write:
        for path in write_pages(arguments.write):
            print(f"wrote {path}")
        return 0
    stale = stale_pages(arguments.check)
    for page in stale:
        print(f"out of date: {arguments.check / page}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
