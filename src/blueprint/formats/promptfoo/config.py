"""Reading promptfoo configs and tests files: $ref pointers, file:// includes and globs."""

from __future__ import annotations

import copy
import glob
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_json_lines
from blueprint.formats.base import UnreadableRow, confined, outside_reason
from blueprint.formats.canonical_json import element_lines
from blueprint.formats.promptfoo.cases import Suite, _csv_tests
from blueprint.formats.vendor import read_json_document, read_json_text
from blueprint.formats.yaml12 import item_lines, read_yaml, read_yaml_nodes
from blueprint.io import limits


def _document(path: Path) -> Any:
    suffix = path.suffix.lower()
    return read_json_document(path) if suffix == ".json" else read_yaml(path)


#: where the items of a file's test list start: ``lines(count, key)``, for the document's
#: own list (key None) or the list under its top-level key
LineFinder = Callable[[int, str | None], list[int | None]]


def _located(path: Path) -> tuple[Any, LineFinder]:
    """A JSON or YAML file's document, read once, with where its tests start (from the
    JSON text, or from the YAML node tree composed on the way to the document)."""
    if path.suffix.lower() == ".json":
        document, text = read_json_text(path)
        return document, lambda count, key: element_lines(text, count, key)
    document, node = read_yaml_nodes(path)
    return document, lambda count, key: item_lines(node, count, key)


def _pointer(document: Any, pointer: str, path: Path) -> Any:
    target = document
    for part in pointer.removeprefix("#/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise ParseError(path, f"$ref {pointer!r} points at nothing in the config")
    return target


class References:
    """``{$ref: '#/...'}`` objects of one document replaced by what they point at.

    Like YAML aliases, references can make a few hundred bytes stand for billions of values:
    the values reached through them are counted, over the whole document, against
    ``max_alias_nodes``, and the nesting they make against ``max_depth``.
    """

    def __init__(self, document: Any, path: Path) -> None:
        self.document = document
        self.path = path
        self.limits = limits.current()
        self.reached = 0

    def resolve(self, value: Any) -> Any:
        return self._walk(value, 0, 0)

    def _walk(self, value: Any, references: int, depth: int) -> Any:
        if references:
            self.reached += 1
            if self.limits.max_alias_nodes and self.reached > self.limits.max_alias_nodes:
                raise ParseError(
                    self.path,
                    f"$ref references expand to more than {self.limits.max_alias_nodes:,}"
                    f" values (max_alias_nodes; {limits.hint('max_alias_nodes')})",
                )
        if references > 32:
            raise ParseError(self.path, "$ref references nest too deeply (or form a loop)")
        if not isinstance(value, dict | list):
            return value
        if depth >= self.limits.max_depth:
            raise ParseError(
                self.path,
                f"$ref references nest values deeper than {self.limits.max_depth} levels"
                f" (max_depth; {limits.hint('max_depth')})",
            )
        if isinstance(value, list):
            return [self._walk(item, references, depth + 1) for item in value]
        reference = value.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/") and len(value) == 1:
            target = _pointer(self.document, reference, self.path)
            return self._walk(target, references + 1, depth)
        return {key: self._walk(item, references, depth + 1) for key, item in value.items()}


@dataclass
class Loaded:
    """A promptfoo file read: its tests (each with the line it starts on, where known)."""

    tests: list[tuple[int | None, Any]]
    suite: Suite
    #: the file each test is written in, by the test's position, for the tests of files
    #: the loaded file includes (their lines are in those files); the rest are its own
    origins: dict[int, Path] = field(default_factory=dict)


def load(path: Path) -> Loaded:
    """Read a promptfoo config or tests file, following ``tests: file://...`` references.

    References are read only inside the config's folder or the working folder (or an
    allowed path, see ReadOptions), each file once however often it is named; a loop of
    references is an error, and so are more than ``max_included_files`` includes in all.
    """
    return _Inclusion(path).load(path, top=True)


class _Inclusion:
    """One config's reading of the files it refers to, and of the files those refer to."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.base = top.parent.resolve()
        #: each file read so far (by resolved path): what it holds, and how many includes
        #: it stands for once its own includes are followed
        self.done: dict[Path, tuple[Loaded, int]] = {}
        self.chain: list[Path] = []
        self.included = 0

    def load(self, path: Path, *, top: bool = False) -> Loaded:
        resolved = path.resolve()
        if resolved in self.chain:
            loop = " -> ".join(str(step) for step in [*self.chain, resolved])
            raise ParseError(path, f"the promptfoo config includes itself ({loop})")
        self.chain.append(resolved)
        try:
            return self._read(path, top=top)
        finally:
            self.chain.pop()

    def include(self, target: Path, *, by: Path, entry: str) -> Loaded:
        """The tests of a file a config names, read once, counted each time."""
        resolved = target.resolve()
        if resolved in self.done:
            loaded, size = self.done[resolved]
            self._count(1 + size, by, entry)
            return Loaded(copy.deepcopy(loaded.tests), loaded.suite, origins=loaded.origins)
        self._count(1, by, entry)
        before = self.included
        loaded = self.load(target)
        self.done[resolved] = (loaded, self.included - before)
        return loaded

    def _count(self, files: int, by: Path, entry: str) -> None:
        self.included += files
        if limits.exceeded("max_included_files", self.included):
            raise ParseError(
                by,
                f"tests: {entry} makes the config include more than"
                f" {limits.current().max_included_files:,} files once every include is"
                f" followed{'' if by == self.top else f', reading {self.top}'}"
                f" (max_included_files; {limits.hint('max_included_files')})",
                line=_line_naming(by, entry),
            )

    def _read(self, path: Path, *, top: bool) -> Loaded:
        suffix = path.suffix.lower()
        if suffix == ".csv":
            return Loaded(list(_csv_tests(path)), Suite())
        if suffix == ".jsonl":
            found: list[tuple[int | None, Any]] = []
            for item in read_json_lines(path):
                if isinstance(item, UnreadableRow):
                    raise ParseError(path, item.reason, line=item.line, column=item.column)
                found.append(item)
            return Loaded(found, Suite())
        data, lines = _located(path)
        if isinstance(data, dict) and set(data) & CONFIG_KEYS:
            return _config(path, data, self, top=top, lines=lines)
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise ParseError(path, "a promptfoo tests file is a list of test cases")
        references = References(data, path)
        starts = lines(len(data), None)
        return Loaded(
            [(line, references.resolve(test)) for line, test in zip(starts, data, strict=True)],
            Suite(),
        )

    def targets(self, config: Path, entry: str) -> list[Path]:
        """The files a ``tests:`` entry (a file or a glob) names, each checked to lie inside
        the folders references may lead to."""
        name = entry.removeprefix("file://")
        reference = config.parent / name
        if not any(char in name for char in "*?["):
            self.confine(reference, config, entry)
            return [reference]
        # a glob is checked before it is expanded (file:///**/*.yaml would walk the whole
        # disk), then every match is (a link inside the folder may lead out)
        fixed = Path(*_parts_before_magic(reference))
        self.confine(fixed, config, entry)
        # absolute or relative, as promptfoo allows: Path.glob takes relative only; in the
        # order the file system gives, as promptfoo's glob does
        matches = [Path(match) for match in glob.glob(str(reference))]  # noqa: PTH207
        if not matches:
            raise ParseError(
                config,
                f"tests: {entry} matches no file, so it adds no test (promptfoo would run"
                " none from it); check the pattern",
                line=_line_naming(config, entry),
            )
        for match in matches:
            self.confine(match, config, entry)
        return matches

    def confine(self, target: Path, config: Path, entry: str) -> None:
        if not confined(target, self.base):
            folders = f"the config's folder ({self.base}) and the working folder ({Path.cwd()})"
            raise ParseError(
                config,
                f"tests: {entry}{outside_reason(target, folders)}",
                line=_line_naming(config, entry),
            )
        from blueprint.formats import refuse_special_file  # the registry imports this module

        refuse_special_file(target)


def _parts_before_magic(path: Path) -> list[str]:
    parts = []
    for part in path.parts:
        if any(char in part for char in "*?["):
            break
        parts.append(part)
    return parts or ["."]


def _line_naming(path: Path, text: str) -> int | None:
    """The first line of a file that holds ``text``, for an error about a reference."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if text in line:
                    return number
    except OSError:
        pass
    return None


def _rebased(test: Any, folder: Path, base: Path) -> Any:
    """A test from a file in ``folder``, its var files named from ``base`` instead.

    promptfoo reads a test's ``vars: path.yaml`` (a file, a glob or a list of them) from the
    folder of the file the test is in; written inline in a config, the test is read from the
    config's folder, so the paths are rewritten to keep naming the same files.
    """
    if not isinstance(test, dict) or folder == base:
        return test
    variables = test.get("vars")

    def rebase(name: Any) -> Any:
        if not isinstance(name, str) or name.startswith("file://") or Path(name).is_absolute():
            return name
        return os.path.relpath(folder / name, base)

    if isinstance(variables, str):
        return {**test, "vars": rebase(variables)}
    if isinstance(variables, list):
        return {**test, "vars": [rebase(name) for name in variables]}
    return test


#: keys only a promptfoo config has (a test case has none of them)
CONFIG_KEYS: Final = frozenset(
    {
        "tests",
        "prompts",
        "providers",
        "targets",
        "scenarios",
        "defaultTest",
        "evaluateOptions",
        "outputPath",
        "sharing",
        "env",
        "nunjucksFilters",
        "assertionTemplates",
        "derivedMetrics",
        "redteam",
        "commandLineOptions",
        "tracing",
        "writeLatestResults",
    }
)
#: a reference promptfoo would fetch (https://, huggingface://, a Google Sheet)
_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_GENERATOR: Final = re.compile(r"\.(?:py|js|cjs|mjs|ts|cts|mts)(?::[\w.]+)?$", re.IGNORECASE)


def _config(
    path: Path, config: dict[str, Any], inclusion: _Inclusion, *, top: bool, lines: LineFinder
) -> Loaded:
    references = References(config, path)
    tests = config.get("tests")
    entries = tests if isinstance(tests, list) else [] if tests is None else [tests]
    starts = lines(len(entries), "tests") if isinstance(tests, list) else [None] * len(entries)
    found: list[tuple[int | None, Any]] = []
    origins: dict[int, Path] = {}
    for start, entry in zip(starts, entries, strict=True):
        if isinstance(entry, str) and _GENERATOR.search(entry):
            raise ParseError(path, f"tests: {entry} is a test generator, which runs code; not read")
        if isinstance(entry, str) and _URL.match(entry) and not entry.startswith("file://"):
            raise ParseError(
                path,
                f"tests: {entry} is a URL; Blueprint fetches nothing (download the tests and"
                " name the file)",
                line=_line_naming(path, entry),
            )
        if isinstance(entry, str):
            for target in inclusion.targets(path, entry):
                included = inclusion.include(target, by=path, entry=entry)
                for number, (line, test) in enumerate(included.tests):
                    origins[len(found)] = included.origins.get(number, target)
                    found.append((line, _rebased(test, target.parent, path.parent)))
        elif isinstance(entry, dict) and "path" in entry and "vars" not in entry:
            raise ParseError(path, "test generators (tests: {path: ...}) run code; not read")
        else:
            found.append((start, references.resolve(entry)))
    defaults = config.get("defaultTest")
    if isinstance(defaults, str) and defaults.startswith("file://"):
        target = path.parent / defaults.removeprefix("file://")
        inclusion.confine(target, path, defaults)
        defaults = _document(target)
    defaults = references.resolve(defaults) if isinstance(defaults, dict) else {}
    # the scenarios are read as the tests promptfoo runs for them, and written back as those
    # tests: the config keeps none (promptfoo would run them twice)
    rest = {
        key: value
        for key, value in config.items()
        if key not in ("tests", "description", "scenarios")
    }
    suite = Suite(defaults=defaults, config=rest if top else None)
    if top and "description" in config:
        suite.description = config["description"]
    if top:
        for test, origin in scenario_tests(path, config.get("scenarios"), references):
            suite.scenario_tests[len(found)] = origin
            found.append((None, test))
    return Loaded(found, suite, origins=origins)


def scenario_tests(
    path: Path, scenarios: Any, references: References
) -> list[tuple[dict[str, Any], str]]:
    """The tests promptfoo runs for a config's ``scenarios``: each entry of a scenario's
    ``config`` crossed with each of its ``tests`` (one test with nothing of its own when it
    has none), merged as promptfoo's evaluator merges them: the entry's keys, then the
    test's; vars, metadata and assertions of both (the entry's first); the test's options
    alone. Each with where it comes from. Scenarios or tests kept in other files, and config
    entries that expand a file (``$values``, ``$expand``), are not read: refused, named."""
    if scenarios is None:
        return []
    if not isinstance(scenarios, list):
        raise ParseError(path, "scenarios is a list of scenarios, each a config and its tests")
    found: list[tuple[dict[str, Any], str]] = []
    for number, scenario in enumerate(scenarios, start=1):
        where = f"scenarios[{number - 1}]"
        if isinstance(scenario, str):
            raise ParseError(
                path,
                f"{where}: {scenario} is a scenario in another file; Blueprint reads the"
                " scenarios written in the config (copy it in, or convert that file)",
                line=_line_naming(path, scenario),
            )
        scenario = references.resolve(scenario)
        entries = scenario.get("config") if isinstance(scenario, dict) else None
        if not isinstance(entries, list):
            raise ParseError(path, f"{where}: a scenario has a config list (its variable sets)")
        tests = scenario.get("tests", [{}])
        if not isinstance(tests, list) or not all(isinstance(test, dict) for test in tests):
            raise ParseError(
                path,
                f"{where}.tests: a scenario's tests are read when written in the config, as a"
                " list of tests; these are not (a file reference is not read)",
            )
        for position, entry in enumerate(entries):
            if not isinstance(entry, dict) or entry.keys() & {"$values", "$expand"}:
                raise ParseError(
                    path,
                    f"{where}.config[{position}]: a config entry is a test's vars and keys"
                    " written in the config; one that loads a file ($values, $expand) is not"
                    " read",
                )
            for index, test in enumerate(tests):
                merged = _scenario_test(entry, test, f"{where}.config[{position}]", path)
                found.append(
                    (
                        merged,
                        f"scenario {number}: config entry {position + 1} x test {index + 1}",
                    )
                )
    return found


def _scenario_test(
    entry: dict[str, Any], test: dict[str, Any], where: str, path: Path
) -> dict[str, Any]:
    merged = {**entry, **test}
    for key in ("vars", "metadata"):
        objects: list[dict[str, Any]] = []
        for part in (entry, test):
            value = part.get(key)
            if value is None:
                continue
            if not isinstance(value, dict):
                raise ParseError(
                    path, f"{where}: {key} that are not an object (a file of vars) are not read"
                )
            objects.append(value)
        merged.pop(key, None)
        if objects:
            merged[key] = {name: value for part in objects for name, value in part.items()}
    checks: list[Any] = []
    for part in (entry, test):
        value = part.get("assert")
        if value is None:
            continue
        if not isinstance(value, list):
            raise ParseError(path, f"{where}: assert is a list of assertions")
        checks += value
    merged.pop("assert", None)
    if checks:
        merged["assert"] = checks
    merged.pop("options", None)  # promptfoo gives the test's options, not the entry's
    if "options" in test:
        merged["options"] = test["options"]
    return merged


def tests_at(path: Path, config: dict[str, Any]) -> list[Any]:
    """The tests ``config``, were it at ``path``, reads: its file references followed from
    there, its ``$ref`` pointers resolved in it (ParseError when one cannot be read)."""
    return tests_and_origins(path, config)[0]


def tests_and_origins(path: Path, config: dict[str, Any]) -> tuple[list[Any], dict[int, Path]]:
    """:func:`tests_at`, with the file each test read from another file is written in, by
    the test's position."""
    loaded = _config(
        path,
        config,
        _Inclusion(path),
        top=True,
        lines=lambda count, key: [None] * count,
    )
    return [test for _, test in loaded.tests], loaded.origins
