"""The pages that change a row: the editor (live findings and the diff against git HEAD),
saving through :func:`edit_row` with the version the page was made from, and promote and
accept as the commands do them. A page made from an older version of the row is refused,
the file untouched, and shows the row as it is now."""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from blueprint.authoring.curate import PromoteRequest, accept_derived, promote
from blueprint.authoring.editing import EditOutcome, EditRefused
from blueprint.authoring.rowedit import EditConflict, apply_changes, edit_row
from blueprint.core.errors import BlueprintError
from blueprint.formats import REGISTRY
from blueprint.studio import forms
from blueprint.studio.browse import REVIEWER_COOKIE
from blueprint.studio.history import row_diff
from blueprint.studio.pages import Pages, Refused, quoted, remember, see
from blueprint.studio.workspace import StudioRow, StudioSet
from blueprint.validation.judge_status import settle_judge_conditions
from blueprint.validation.stream import ValidationOptions
from blueprint.validation.validate import validate_document

CONFLICT: Final = (
    "This row changed since you opened it (in another tab, another program or by someone"
    " else). Nothing was saved. The row as it is now is below, with what you typed; copy what"
    " you need and save again."
)
REVIEW_ACTIONS: Final = ("promote", "accept")


class ReviewPages(Pages):
    def _row(self, loaded: StudioSet, row_id: str) -> StudioRow:
        row = loaded.row(row_id)
        if row is None:
            raise Refused(404, f"no single row has the id {row_id!r} in {loaded.path}")
        return row

    def editor(
        self,
        request: Request,
        loaded: StudioSet,
        row: StudioRow,
        *,
        typed: dict[str, str] | None = None,
        status: int = 200,
        conflict: str | None = None,
        refused: str | None = None,
    ) -> Response:
        """The editor; ``typed`` is a submitted form to show again as typed, with its check
        (unless it was refused for a conflict: then it is shown against the row as it is)."""
        version = row.version if typed is None or conflict else typed.get("version", row.version)
        return self.render(
            request,
            "edit.html",
            status=status,
            current=loaded,
            row=row,
            fields=forms.shown_fields(row.data, sorted(loaded.families), typed),
            version=version,
            check=self.check(loaded, row, typed) if typed is not None and not conflict else None,
            conflict=conflict,
            refused=refused,
            carry=request.query_params.get("carry", ""),
        )

    def check(self, loaded: StudioSet, row: StudioRow, typed: dict[str, str]) -> dict[str, Any]:
        """The row as typed: its findings (the validator over the set with the row replaced,
        so cross-row rules count too) and its diff against git HEAD."""
        changes, problems = forms.read_form(row.data, typed, sorted(loaded.families))
        try:
            edited = apply_changes(row.data, changes)
        except EditRefused as error:
            return {"problems": {"": str(error)}, "findings": [], "diff": [], "head": None}
        rows = [other.data for other in loaded.rows]
        rows[row.index] = edited
        options = ValidationOptions(row_ids=False)
        report = validate_document({**loaded.header, "rows": rows}, options=options)
        # as validate settles a set's judge conditions, over the rows as edited
        codec = REGISTRY[loaded.format]
        settle_judge_conditions(report, loaded.path, codec, loaded.header, options.wants, rows=rows)
        head = self.studio.history.head_row(loaded.path, str(row.id))
        before, label = (head.row, "HEAD") if head.unavailable is None else (row.data, "on disk")
        return {
            "problems": problems,
            "findings": [issue for issue in report.issues if issue.row_index == row.index],
            # what the edit would change about the set as a whole (a judge report gone stale)
            "set_findings": [
                issue
                for issue in report.issues
                if issue.row_index is None and issue not in loaded.findings
            ],
            "changed": [change.dotted for change in changes],
            "diff": row_diff(
                before,
                edited,
                before_label=f"{row.id} ({label})",
                after_label=f"{row.id} (as edited)",
            ),
            "head": head,
        }

    def edit_page(self, request: Request) -> Response:
        loaded = self.the_set(request)
        return self.editor(request, loaded, self._row(loaded, request.path_params["row_id"]))

    async def check_fragment(self, request: Request) -> Response:
        """The findings-and-diff panel for the row as typed (the editor's script asks)."""
        loaded = self.the_set(request)
        typed = await self.form_of(request)
        row = self._row(loaded, request.path_params["row_id"])
        return self.render(request, "_check.html", check=self.check(loaded, row, typed))

    async def edit_submit(self, request: Request) -> Response:
        loaded = self.the_set(request)
        typed = await self.form_of(request)
        row = self._row(loaded, request.path_params["row_id"])
        if typed.get("action") != "save":
            return self.editor(request, loaded, row, typed=typed)
        if not loaded.editable:
            message = (
                f"{loaded.path} is a {loaded.format} file: the studio edits canonical sets only"
                " (convert it to .json, .jsonl or .csv first)"
            )
            return self.editor(request, loaded, row, typed=typed, status=409, refused=message)
        changes, problems = forms.read_form(row.data, typed, sorted(loaded.families))
        if problems:
            return self.editor(request, loaded, row, typed=typed, status=422)
        row_id = str(row.id)
        carry = request.query_params.get("carry", "")
        if not changes:  # nothing typed differs from the row: nothing to write
            return see(f"/sets/{loaded.key}/rows/{quoted(row_id)}", "unchanged", carry)
        try:
            # the version the page was made from: a row changed since is a conflict
            outcome = edit_row(
                loaded.path, row_id, changes, expected_version=typed.get("version", "")
            )
        except EditConflict:
            return self.conflict(request, self.studio.workspace.reload(loaded.key), row_id, typed)
        except BlueprintError as error:
            return self.editor(request, loaded, row, typed=typed, status=409, refused=str(error))
        self.studio.workspace.reload(loaded.key)
        done = "saved-new-column" if added_column(outcome) else "saved"
        return see(f"/sets/{loaded.key}/rows/{quoted(row_id)}", done, carry)

    def conflict(
        self, request: Request, loaded: StudioSet, row_id: str, typed: dict[str, str]
    ) -> Response:
        row = loaded.row(row_id)
        if row is None:
            return self.render(
                request, "gone.html", status=409, row_id=row_id, message=CONFLICT, typed=typed
            )
        return self.editor(request, loaded, row, typed=typed, status=409, conflict=CONFLICT)

    async def review_submit(self, request: Request) -> Response:
        """Promote a row, or accept its derived values, as ``blueprint promote``/``accept``."""
        action = request.path_params["action"]
        if action not in REVIEW_ACTIONS:
            raise Refused(404, f"no such action: {action}")
        loaded = self.the_set(request)
        typed = await self.form_of(request)
        row_id = request.path_params["row_id"]
        row = loaded.row(row_id)
        if row is None or row.version != typed.get("version"):
            return self.render(
                request, "stale.html", status=409, current=loaded, row_id=row_id, row=row
            )
        reviewer = typed.get("reviewer", "").strip()
        # checked again under the set's lock: the row must still be the one on the page
        versions = {row_id: row.version}
        try:
            if action == "promote":
                request_ = PromoteRequest(
                    (row_id,),
                    typed.get("provenance", "expert-authored"),
                    reviewer,
                    accept_derived=typed.get("accept_derived") == "yes",
                    versions=versions,
                )
                outcome: EditOutcome = promote(loaded.path, request_)
            else:
                outcome = accept_derived(loaded.path, [row_id], versions=versions)
        except EditConflict:
            fresh = self.studio.workspace.reload(loaded.key)
            return self.render(
                request,
                "stale.html",
                status=409,
                current=fresh,
                row_id=row_id,
                row=fresh.row(row_id),
            )
        except BlueprintError as error:
            return self.refused(request, 409, str(error))
        self.studio.workspace.reload(loaded.key)
        done = "promoted" if action == "promote" else "accepted"
        done = f"{done}-new-column" if added_column(outcome) else done
        response = see(f"/sets/{loaded.key}/rows/{quoted(row_id)}", done, typed.get("carry", ""))
        if reviewer:
            remember(response, REVIEWER_COOKIE, reviewer)
        return response


def added_column(outcome: EditOutcome) -> bool:
    """Whether the edit gave a CSV set a column it lacked, so every line of it changed."""
    written = outcome.written
    return written is not None and any(
        issue.code == "csv-column-added" for issue in written.findings
    )
