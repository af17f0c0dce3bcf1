"""The exceptions Blueprint raises: one root, each subclass also a matching builtin."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class BlueprintError(Exception):
    """Root of every error Blueprint raises on purpose.

    Each carries the exit code the CLI maps it to, so the boundary needs no table.
    """

    exit_code = 2

    #: the arguments the error was made with (see ``__reduce__``)
    _given: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    def __init_subclass__(cls, **options: Any) -> None:
        super().__init_subclass__(**options)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def remembering(self: BlueprintError, *args: Any, **kwargs: Any) -> None:
            if self._given is None:  # the class made, not a base its __init__ calls
                self._given = (args, kwargs)
            init(self, *args, **kwargs)

        setattr(cls, "__init__", remembering)  # noqa: B010 - the class is being made

    def __reduce__(self) -> str | tuple[Any, ...]:
        # rebuilt from the arguments it was made with, not from its message: an error a
        # worker process (a pool's, a cluster's) raises reaches the process that reads its
        # result as it was raised
        if self._given is None:
            return super().__reduce__()
        args, kwargs = self._given
        return functools.partial(type(self), **kwargs), args


class UsageError(BlueprintError, ValueError):
    """The caller asked for something that cannot be done (bad option, wrong argument)."""


class UnknownFormatError(BlueprintError, LookupError):
    """No registered format has this name, or none matches this file."""


class AmbiguousFormatError(BlueprintError, LookupError):
    """Several formats could read this file and its content does not decide between them."""

    def __init__(self, path: Path, candidates: list[str]) -> None:
        self.path = path
        self.candidates = candidates
        names = ", ".join(candidates)
        super().__init__(
            f"{path}: several formats read this extension ({names}) and the content does not"
            " decide between them; name one with --from/--to"
        )


class EngineError(BlueprintError, RuntimeError):
    """The cluster a command ran on failed it: a worker lost, a task that failed there, a
    worker that cannot import Blueprint."""


class ParseError(BlueprintError, ValueError):
    """A file cannot be read as the format it claims; names the file, line and column."""

    def __init__(
        self,
        path: Path | str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.line = line
        self.column = column
        self.reason = message
        super().__init__(self.describe())

    def describe(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.reason}"


class OutputExistsError(BlueprintError, FileExistsError):
    """An output file exists and --force was not given."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"{path} already exists; pass --force to overwrite it")


class OutputError(BlueprintError, OSError):
    """An output file cannot be written where it was asked for."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}")


class InvalidSetError(BlueprintError, ValueError):
    """A set was loaded as a model but breaks the schema or the rules."""

    exit_code = 1

    def __init__(self, path: Path | str, issues: Sequence[object]) -> None:
        self.path = Path(path)
        self.issues = issues
        super().__init__(
            f"{path}: the set is not valid ({len(issues)} error(s)); run blueprint validate"
        )


class LossyExportRefused(BlueprintError, ValueError):
    """A strict export would have lost something (dropped, excluded, weakened): nothing was
    written. ``lossy`` holds what the export would have reported."""

    exit_code = 1

    def __init__(self, format_name: str, lossy: Sequence[Any]) -> None:
        self.format = format_name
        self.lossy = list(lossy)
        parts = []
        left_out = sum(item.count for item in self.lossy if item.kind == "excluded")
        if left_out:
            parts.append(f"leave out {left_out} row(s)")
        for kind, verb in (("dropped", "drop"), ("weakened", "weaken")):
            items = [item for item in self.lossy if item.kind == kind]
            if items:
                listed = ", ".join(
                    f"{item.field} ({item.count} rows)" if item.scope == "row" else item.field
                    for item in items
                )
                parts.append(f"{verb} {listed}")
        super().__init__(f"refused (--strict): the {format_name} export would " + "; ".join(parts))


class EmptyExportRefused(BlueprintError, ValueError):
    """A format whose document must hold at least one record (an omk sample set) was given
    no row it can write, so nothing was written."""

    exit_code = 1


class EveryRowExcluded(EmptyExportRefused):
    """A vendor export would leave out every row of a set that has rows, so nothing was
    written: a file of no records is no export. ``lossy`` holds what the export would have
    reported, its exclusions among them."""

    def __init__(self, format_name: str, lossy: Sequence[Any]) -> None:
        self.format = format_name
        self.lossy = list(lossy)
        left_out = [item for item in self.lossy if item.kind == "excluded"]
        total = sum(item.count for item in left_out)
        listed = "; ".join(
            f"{item.count} row(s) ({', '.join(item.row_ids[:5])}"
            f"{' and more' if item.count > 5 else ''}): {item.reason}"
            for item in left_out
        )
        super().__init__(
            f"refused: the {format_name} export would leave out every row of the set"
            f" ({total} row(s)), so nothing was written; it leaves out {listed}"
        )


class NoRowsRead(BlueprintError, ValueError):
    """A conversion read a vendor file that gives no row, so it wrote nothing: a file of no
    records is no export, and records none of which became a row would all be lost.
    ``summary`` says where the file's records went."""

    exit_code = 1

    def __init__(self, path: Path, summary: str, *, done: str = "converted") -> None:
        self.path = path
        self.summary = summary
        super().__init__(
            f"{path}: not {done}, no row was read from it ({summary}), so there is nothing to write"
        )


class ConversionRefused(BlueprintError, ValueError):
    """A conversion read a set that is not valid, so it wrote nothing. ``report`` holds the
    validation report of what was read."""

    exit_code = 1

    def __init__(self, path: Path, report: Any, *, done: str = "converted") -> None:
        self.path = path
        self.report = report
        errors = [issue for issue in report.issues if issue.severity == "error"]
        shown = "; ".join(
            f"{issue.row_id or '(set)'}: [{issue.code}] {issue.message}" for issue in errors[:3]
        )
        more = f" and {len(errors) - 3} more" if len(errors) > 3 else ""
        what = f"{len(errors)} error(s): {shown}{more}" if errors else "parts that cannot be read"
        # a round trip has no --allow-invalid: what it refuses, no flag lets through
        anyway = ", or pass --allow-invalid to write it anyway" if done == "converted" else ""
        super().__init__(
            f"{path}: not {done}, the set is not valid ({what}); run blueprint validate to"
            f" see every finding{anyway}"
        )
