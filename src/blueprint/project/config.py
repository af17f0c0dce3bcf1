"""The project configuration: which files are golden sets and what `blueprint check` asks of them.

It lives in ``blueprint.toml`` (top-level keys) or in ``pyproject.toml`` under
``[tool.blueprint]``, found by walking up from the working folder, as ruff finds its own.
Paths and globs in it are relative to the folder that holds it. Keys are kebab-case; an
unknown key, a wrong type or an unknown issue code is an error naming the file and line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from blueprint.core.errors import BlueprintError, ParseError
from blueprint.formats import REGISTRY, refuse_special_file
from blueprint.formats.base import confined, outside_reason
from blueprint.io import limits, tomlload
from blueprint.io.toml_positions import KeyPath, Positions
from blueprint.validation.stream import ValidationOptions, resolve_codes

CONFIG_FILE: Final = "blueprint.toml"
PYPROJECT: Final = "pyproject.toml"

FailOn = Literal["error", "warning"]


class ConfigError(BlueprintError, ValueError):
    """The configuration file cannot be used as it is; names the file, line and key."""


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class _ConfigModel(BaseModel):
    model_config = ConfigDict(
        defer_build=True,  # built when a configuration is read, not at every start
        strict=True,
        extra="forbid",
        alias_generator=_kebab,
        frozen=True,
        populate_by_name=False,
    )


class CodeSelection(_ConfigModel):
    """Issue codes to report or leave out: codes, prefixes of whole words, or ``ALL``."""

    select: list[str] = Field(default_factory=list)
    ignore: list[str] = Field(default_factory=list)
    #: case family id -> codes not reported for that family's rows
    per_family_ignore: dict[str, list[str]] = Field(default_factory=dict)


class ExportSpec(_ConfigModel):
    """A committed export that must stay what exporting its set gives today."""

    format: str
    path: str
    include_human_review: bool = False
    llm_judge: bool = False
    data_format: str | None = None

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        return _format_name(value)


class Policy(CodeSelection):
    """What a set must pass; set entries override the project-wide values."""

    #: judge-validation reports (``blueprint judge-report -o X.json``) whose passing
    #: verdicts settle the llm-judge condition; an entry's list adds to the project's
    judge_reports: list[str] = Field(default_factory=list)

    #: exit 1 on errors only, or on warnings too
    fail_on: FailOn | None = None
    #: formats the set must go through and come back with exactly the loss they declare
    roundtrip: list[str] | None = None
    #: round-trip through every canonical format (json, jsonl, csv): nothing may change
    canonical_roundtrip: bool | None = None
    #: whether an export (round-trip or committed) may drop fields or leave out rows
    allow_lossy: bool | None = None
    #: whether an export may write rules the vendor's grader will not enforce
    allow_weakened: bool | None = None
    #: how many starter rows (examples, not gold) a set may hold before it counts as
    #: unfinished; no limit when absent
    max_starter_rows: int | None = Field(default=None, ge=0)

    @field_validator("roundtrip")
    @classmethod
    def _known_formats(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else [_format_name(name) for name in value]


class GradeSpec(_ConfigModel):
    """Recorded results ``blueprint check`` grades the set against, and the gates it runs
    (``blueprint grade``'s options of the same names)."""

    #: results files (several: several trials), relative to the configuration
    results: list[str] = Field(min_length=1)
    #: an earlier run's results files, for the regression gates
    baseline: list[str] = Field(default_factory=list)
    gate_severity: list[str] = Field(default_factory=lambda: ["blocker"])
    drop_gate: bool = True
    min_scored_share: float = Field(default=0.0, ge=0, le=1)
    claim: float | None = Field(default=None, gt=0, lt=1)
    confidence: float = Field(default=0.95, gt=0, lt=1)


class SetEntry(Policy):
    """One set (or a glob of sets) with settings of its own."""

    path: str
    format: str | None = None
    #: the split the file is (dev, test): its rows that name no split of their own are in
    #: it, so the same input in two files of different splits is a leak across splits
    split: str | None = Field(default=None, min_length=1)
    export: list[ExportSpec] = Field(default_factory=list)
    #: recorded results to grade the set against, with its gates
    grade: GradeSpec | None = None

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        return None if value is None else _format_name(value)


class LimitsConfig(_ConfigModel):
    """The ``[limits]`` table: bounds every reader keeps to (see :mod:`blueprint.io.limits`)."""

    max_depth: int | None = Field(default=None, ge=1)
    max_file_bytes: int | None = Field(default=None, ge=0)
    max_rows: int | None = Field(default=None, ge=0)
    max_cell_bytes: int | None = Field(default=None, ge=0)
    max_alias_nodes: int | None = Field(default=None, ge=0)
    max_included_files: int | None = Field(default=None, ge=0)
    max_number_digits: int | None = Field(default=None, ge=1)

    def given(self) -> dict[str, int]:
        return {key: value for key, value in self.model_dump().items() if value is not None}


class JudgeThresholds(_ConfigModel):
    """The ``[judge-thresholds]`` table: what ``blueprint judge-report`` asks of a family's
    labels (flags override it; see :class:`blueprint.reports.judging.Thresholds` for the
    defaults)."""

    min_labels: int | None = Field(default=None, ge=1)
    min_fraction: float | None = Field(default=None, ge=0, le=1)
    min_agreement: float | None = Field(default=None, ge=0, le=1)
    min_kappa: float | None = Field(default=None, ge=-1, le=1)
    min_alpha: float | None = Field(default=None, ge=0, le=1)
    max_bias: float | None = Field(default=None, ge=0, le=1)

    def given(self) -> dict[str, Any]:
        return {key: value for key, value in self.model_dump().items() if value is not None}


class ProjectConfig(Policy):
    """The whole ``[tool.blueprint]`` table."""

    #: globs of the project's golden sets; set files (``*.set.json``) are never sets
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    set: list[SetEntry] = Field(default_factory=list)
    #: look for the same input in several sets: exact repeats only, near ones too, or not
    duplicates: Literal["off", "exact", "near"] = "exact"
    #: how alike two inputs must be (Jaccard similarity) to be near-duplicates
    duplicate_threshold: float = Field(default=0.8, gt=0, le=1)
    #: bounds on what readers accept (depth, sizes, alias expansion); environment variables
    #: such as BLUEPRINT_MAX_DEPTH take precedence
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    #: what a judge-validation report asks of each family's labels
    judge_thresholds: JudgeThresholds = Field(default_factory=JudgeThresholds)


def _format_name(value: str) -> str:
    if value not in REGISTRY:
        raise ValueError(f"unknown format {value!r}; known formats: {', '.join(REGISTRY)}")
    return value


@dataclass(frozen=True)
class SetSettings:
    """Everything `blueprint check` asks of one set, resolved from the project and the entry."""

    path: Path
    format: str | None
    options: ValidationOptions
    fail_on: FailOn
    roundtrip: tuple[str, ...]
    canonical_roundtrip: bool
    allow_lossy: bool
    allow_weakened: bool
    max_starter_rows: int | None
    exports: tuple[ExportSpec, ...]
    split: str | None = None
    #: judge-validation reports the configuration names for this set, resolved
    judge_reports: tuple[Path, ...] = ()
    #: the results the set is graded against and the gates, as the entry says
    grade: GradeSpec | None = None


#: what a set is asked when neither the project nor its entry says otherwise
DEFAULT_POLICY: Final = Policy.model_validate(
    {
        "fail-on": "error",
        "roundtrip": [],
        "canonical-roundtrip": True,
        "allow-lossy": True,
        "allow-weakened": True,
    }
)


@dataclass(frozen=True)
class Project:
    """A loaded configuration: where it lives and what it says."""

    path: Path | None
    root: Path
    config: ProjectConfig

    def settings_for(self, data_path: Path, entry: SetEntry | None = None) -> SetSettings:
        """The settings of one set: the entry's values over the project's over the defaults."""
        layers: list[Policy] = [DEFAULT_POLICY, self.config]
        if entry is not None:
            layers.append(entry)

        def pick(name: str) -> Any:
            value = None
            for layer in layers:
                if getattr(layer, name) is not None:
                    value = getattr(layer, name)
            return value

        where = f"{self.path}: " if self.path else ""
        select = resolve_codes(self.config.select, where=where)
        ignore = resolve_codes(self.config.ignore, where=where)
        family_ignore: dict[str, frozenset[str]] = {}
        for layer in (self.config, entry):
            if layer is None:
                continue
            for family, codes in layer.per_family_ignore.items():
                family_ignore[family] = family_ignore.get(family, frozenset()) | resolve_codes(
                    codes, where=where
                )
        if entry is not None:
            # an entry's select replaces the project's; its ignore adds to it
            if entry.select:
                select = resolve_codes(entry.select, where=where)
            ignore |= resolve_codes(entry.ignore, where=where)
        return SetSettings(
            path=data_path,
            format=entry.format if entry is not None else None,
            options=ValidationOptions(select=select, ignore=ignore, family_ignore=family_ignore),
            fail_on=pick("fail_on"),
            roundtrip=tuple(pick("roundtrip")),
            canonical_roundtrip=pick("canonical_roundtrip"),
            allow_lossy=pick("allow_lossy"),
            allow_weakened=pick("allow_weakened"),
            max_starter_rows=pick("max_starter_rows"),
            exports=tuple(entry.export) if entry is not None else (),
            split=entry.split if entry is not None else None,
            grade=entry.grade if entry is not None else None,
            judge_reports=tuple(
                self.resolve(report)
                for layer in (self.config, entry)
                if layer is not None
                for report in layer.judge_reports
            ),
        )

    def resolve(self, relative: str) -> Path:
        return self.root / relative

    def refuse_outside(self, target: Path, location: KeyPath, written: str) -> None:
        """Refuse (exit 2) a path the configuration names, or a file it leads to, that lies
        outside the project's folder once ``..`` and symbolic links are resolved, unless
        ``--allow-path`` allows the folder it is in: a pull request can change the
        configuration and commit links, and must not make CI read the rest of the machine."""
        if confined(target, self.root, working_folder=False):
            return
        key = ".".join(str(part) for part in location)
        reason = outside_reason(target, f"the project's folder ({self.root})", "configured files")
        raise ConfigError(f"{self.where(location)}{key}: {written!r}: {target}{reason}")

    def where(self, location: KeyPath) -> str:
        """``file:line: `` for a key of the configuration, as its other errors name it."""
        if self.path is None:
            return ""
        prefix: KeyPath = ("tool", "blueprint") if self.path.name == PYPROJECT else ()
        try:
            line = Positions(self.path.read_text(encoding="utf-8")).line(prefix + location)
        except (OSError, UnicodeDecodeError):
            line = None  # it was read a moment ago: the file name alone still says enough
        return f"{self.path}:{line}: " if line is not None else f"{self.path}: "

    def refuse_outside_paths(self) -> None:
        """Every judge report and committed export the configuration names must lie inside
        the project (its sets and globs are checked as they are found)."""
        named: list[tuple[KeyPath, str]] = [
            (("judge-reports", index), report)
            for index, report in enumerate(self.config.judge_reports)
        ]
        for number, entry in enumerate(self.config.set):
            named += [
                (("set", number, "judge-reports", index), report)
                for index, report in enumerate(entry.judge_reports)
            ]
            named += [
                (("set", number, "export", index, "path"), spec.path)
                for index, spec in enumerate(entry.export)
            ]
        for location, written in named:
            self.refuse_outside(self.resolve(written), location, written)


def find_config(start: Path) -> Path | None:
    """The nearest ``blueprint.toml``, or ``pyproject.toml`` with a ``[tool.blueprint]``
    table, in ``start`` or a folder above it."""
    folder = start.resolve()
    for candidate in (folder, *folder.parents):
        own = candidate / CONFIG_FILE
        if own.is_file():
            return own
        pyproject = candidate / PYPROJECT
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _has_tool_table(path: Path) -> bool:
    try:
        document = tomlload.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        # a broken pyproject.toml (TOMLDecodeError is a ValueError, as is a number too long)
        # that may hold our table is reported when it is loaded
        return "[tool.blueprint" in path.read_text(encoding="utf-8", errors="replace")
    tool = document.get("tool")
    return isinstance(tool, dict) and "blueprint" in tool


def load_project(path: Path | None = None, *, start: Path | None = None) -> Project:
    """Load the configuration at ``path``, or the one found from ``start`` (the working
    folder); a project without one gets the defaults, rooted at ``start``."""
    if path is None:
        path = find_config(start or Path.cwd())
        if path is None:
            return Project(None, (start or Path.cwd()).resolve(), ProjectConfig())
    config = read_config(path)
    limits.configure(config.limits.given(), where=str(path))
    return Project(path, path.resolve().parent, config)


def read_config(path: Path) -> ProjectConfig:
    try:
        refuse_special_file(path)
    except ParseError as error:
        raise ConfigError(str(error)) from None
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the configuration: {error}") from None
    try:
        document = tomlload.loads(text)
    except tomlload.TomlError as error:  # nested deeper than max_depth
        raise ConfigError(f"{path}: {error}") from None
    except ValueError as error:  # TOMLDecodeError, or a number too long to read
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    prefix: KeyPath = ()
    table: Any = document
    if path.name == PYPROJECT:
        prefix = ("tool", "blueprint")
        table = document.get("tool", {}).get("blueprint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{'.'.join(map(str, prefix))}] must be a table")
    try:
        config = ProjectConfig.model_validate(table)
    except ValidationError as error:
        positions = Positions(text)
        problems = [
            _problem(path, positions, prefix, tuple(item["loc"]), item["msg"], item["type"])
            for item in error.errors()
        ]
        raise ConfigError("; ".join(problems)) from None
    _check_codes(path, config, Positions(text), prefix)
    return config


def _problem(
    path: Path, positions: Positions, prefix: KeyPath, location: KeyPath, message: str, kind: str
) -> str:
    # pydantic puts a validator's error under the field, a tuple's element under an index
    line = positions.line(prefix + location)
    where = f"{path}:{line}" if line is not None else str(path)
    key = ".".join(str(part) for part in location) or "(table)"
    if kind == "extra_forbidden":
        message = "unknown key"
    return f"{where}: {key}: {message.removeprefix('Value error, ')}"


def _check_codes(path: Path, config: ProjectConfig, positions: Positions, prefix: KeyPath) -> None:
    """Every code or prefix the file names must mean a code, checked once, at load time."""
    for location, entries in _code_lists(config):
        try:
            resolve_codes(entries)
        except BlueprintError as error:
            line = positions.line(prefix + location)
            where = f"{path}:{line}" if line is not None else str(path)
            key = ".".join(str(part) for part in location)
            raise ConfigError(f"{where}: {key}: {error}") from None


def _code_lists(config: ProjectConfig) -> Iterator[tuple[KeyPath, list[str]]]:
    layers: list[tuple[KeyPath, CodeSelection]] = [((), config)]
    layers += [(("set", index), entry) for index, entry in enumerate(config.set)]
    for base, layer in layers:
        yield (*base, "select"), layer.select
        yield (*base, "ignore"), layer.ignore
        for family, codes in layer.per_family_ignore.items():
            yield (*base, "per-family-ignore", family), codes
