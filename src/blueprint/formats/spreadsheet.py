"""Cells of a CSV being written that a spreadsheet would run as formulas: warned of, or made safe.

OWASP's CSV-injection guidance: a cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is evaluated by Excel, LibreOffice and Google Sheets, and a formula can run
commands (``=cmd|' /C calc'!A0``) or send the sheet's data away. Every CSV writer passes its
header and its text cells through one :class:`FormulaGuard`: by default the text is written
exactly and each such cell is a ``spreadsheet-formula`` finding; with ``spreadsheet_safe`` it
gets a leading ``'`` (shown as text by spreadsheets), which is a real change to the value,
reported in the export's loss list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from blueprint.core import jsonpath
from blueprint.core.issues import Issue, make_issue
from blueprint.formats.base import LossyField
from blueprint.formats.cells import formula_like, neutralised

#: how much of a formula a finding quotes
PREVIEW_CHARACTERS: Final = 60
CHANGED_REASON: Final = (
    "begins with a character a spreadsheet runs as a formula, so --spreadsheet-safe wrote it"
    " with a leading ' (shown as text): it reads back with the quote"
)


def _preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARACTERS else text[:PREVIEW_CHARACTERS] + "..."


class FormulaGuard:
    """Checks what one CSV writer writes; collects findings, or the changes it made."""

    def __init__(self, spreadsheet_safe: bool) -> None:
        self.spreadsheet_safe = spreadsheet_safe
        self.findings: list[Issue] = []
        #: field -> ids of the rows whose value there was changed
        self._changed: dict[str, list[str]] = {}

    def header(self, names: Sequence[str], rows_with: Mapping[str, Sequence[str]]) -> list[str]:
        """The header to write. ``rows_with`` gives, for a column that is a row field of its
        own (an unknown row key, a vendor's native key), the ids of the rows that have it."""
        written = []
        for name in names:
            if not formula_like(name):
                written.append(name)
                continue
            if self.spreadsheet_safe:
                written.append(neutralised(name))
                if rows_with.get(name):
                    self._changed.setdefault(name, []).extend(rows_with[name])
                continue
            written.append(name)
            self.findings.append(
                make_issue(
                    "spreadsheet-formula",
                    path=jsonpath.join("$.rows[*]", (name,)),
                    line=1,
                    where="the header",
                    column=name,
                    first=name[0],
                    text=_preview(name),
                )
            )
        return written

    def cell(
        self, text: str, *, column: str, field: str, row_index: int, row_id: str | None
    ) -> str:
        """The text to write in one cell; ``field`` is the canonical field it holds."""
        if not formula_like(text):
            return text
        if self.spreadsheet_safe:
            self._changed.setdefault(field, []).append(str(row_id))
            return neutralised(text)
        self.findings.append(
            make_issue(
                "spreadsheet-formula",
                path=jsonpath.row_path(row_index, *field.split(".")),
                row_index=row_index,
                row_id=row_id,
                where=f"row {row_index}",
                column=column,
                first=text[0],
                text=_preview(text),
            )
        )
        return text

    def lossy(self) -> list[LossyField]:
        """The changes made, as the export's loss list reports them."""
        return [
            LossyField(field, CHANGED_REASON, tuple(dict.fromkeys(ids)))
            for field, ids in self._changed.items()
        ]
