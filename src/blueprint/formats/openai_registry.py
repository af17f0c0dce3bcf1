"""The registry YAML that runs an OpenAI Evals samples file, and what its eval class decides
of an ideal, written as a check of Blueprint's vocabulary.

The open-source registry keeps samples under ``<registry>/data`` and the evals that run them
under ``<registry>/evals``: a YAML entry names a class and its ``args.samples_jsonl``, a
path under ``data``. Two basic classes decide an ideal exactly as a check does: Match passes
an output that starts with any ideal (``sampled.startswith(ideal)``, nothing normalised) and
Includes one that contains any (``rfind``; both sides lowercased with ``ignore_case``). The
third, FuzzyMatch, lowercases, strips ASCII punctuation and the articles a, an and the, and
passes either text holding the other: no check of the vocabulary removes punctuation or
articles, so its samples import as they always have.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.io import yamlload

MATCH: Final = "evals.elsuite.basic.match:Match"
INCLUDES: Final = "evals.elsuite.basic.includes:Includes"
#: the check each class decides an ideal by
_CHECKS: Final = {MATCH: "starts-with", INCLUDES: "contains"}
#: the most YAML files looked through for the entry naming a samples file
_MOST_SPECS: Final = 5000


@dataclass(frozen=True)
class EvalClass:
    """The eval class a registry YAML runs a samples file with."""

    path: str
    spec: Path
    ignore_case: bool = False

    @property
    def name(self) -> str:
        return self.path.rsplit(":", 1)[-1]


def registry_class(samples: Path) -> EvalClass | None:
    """The class the registry runs ``samples`` with, where the file sits under a registry's
    ``data`` folder and the YAML entries naming it agree on one class; else None."""
    resolved = samples.resolve()
    for data in resolved.parents:
        if data.name == "data" and (data.parent / "evals").is_dir():
            relative = resolved.relative_to(data).as_posix()
            found = set(_entries(data.parent / "evals", relative))
            return found.pop() if len(found) == 1 else None
    return None


def _entries(evals: Path, relative: str) -> list[EvalClass]:
    found = []
    specs = sorted(path for path in evals.rglob("*") if path.suffix in (".yaml", ".yml"))
    for spec in specs[:_MOST_SPECS]:
        try:
            text = spec.read_text(encoding="utf-8")
            document = yamlload.load(text, spec) if relative in text else None
        except (OSError, UnicodeDecodeError, ParseError):
            continue
        for entry in document.values() if isinstance(document, dict) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("class"), str):
                continue
            args = entry.get("args")
            named = args.get("samples_jsonl") if isinstance(args, dict) else None
            if isinstance(named, str) and named.removeprefix("./") == relative:
                assert isinstance(args, dict)
                found.append(EvalClass(entry["class"], spec, args.get("ignore_case") is True))
    return found


def ideal_check(eval_class: EvalClass, ideal: Any) -> dict[str, Any] | None:
    """The check that decides ``ideal`` as the class does: one for a text, ``any`` of one per
    text for a list; None where the class is none of Match and Includes, or the ideal is not
    text the class reads."""
    kind = _CHECKS.get(eval_class.path)
    if kind is None:
        return None

    def one(text: str) -> dict[str, Any]:
        check: dict[str, Any] = {"type": kind, "value": text}
        if eval_class.ignore_case and kind == "contains":
            check["normalize"] = ["lowercase"]
        return check

    if isinstance(ideal, str):
        return one(ideal)
    if isinstance(ideal, list) and ideal and all(isinstance(item, str) for item in ideal):
        return {"type": "any", "checks": [one(item) for item in ideal]}
    return None


def _text_of(check: Any) -> tuple[str, str] | None:
    """A check Match or Includes decides from its text alone: (the class, the text)."""
    if not isinstance(check, dict) or not isinstance(check.get("value"), str):
        return None
    normalize = check.get("normalize")
    if check.get("type") == "starts-with" and set(check) == {"type", "value"}:
        return "Match", check["value"]
    if check.get("type") == "contains" and normalize in (None, ["lowercase"]):
        return ("Includes" if normalize is None else "Includes (ignore_case)"), check["value"]
    return None


def check_ideal(satisfies: Any) -> tuple[str, str | list[str]] | None:
    """The class that decides an acceptable set defined by ``satisfies`` exactly, and the
    ideal it reads: a text for one starts-with (Match) or contains (Includes) check, a list
    for ``any`` of several of one kind; None for any other check."""
    if isinstance(satisfies, dict) and satisfies.get("type") == "any":
        parts = [_text_of(part) for part in satisfies.get("checks") or []]
        names = {part[0] for part in parts if part is not None}
        if not parts or None in parts or len(names) != 1:
            return None
        return names.pop(), [part[1] for part in parts if part is not None]
    return _text_of(satisfies)
