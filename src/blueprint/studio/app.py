"""The studio's pages and forms (Starlette, server-rendered with jinja2).

Every route reads the workspace (which reads a set again when its files changed) and renders a
template; every write goes through a library call that ``blueprint`` commands also make:
:func:`edit_row`, :func:`promote`, :func:`accept_derived`, :func:`point_at_judge_report`, and
the labels file of :mod:`.labelling`. A write that is refused shows why, and the file is as
it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from blueprint.authoring.curate import (
    GOLD_PROVENANCES,
    PROMOTABLE,
    PromoteRequest,
    accept_derived,
    promote,
)
from blueprint.authoring.editing import EditRefused
from blueprint.authoring.rowedit import (
    EditConflict,
    apply_changes,
    edit_row,
    point_at_judge_report,
)
from blueprint.core.errors import BlueprintError, UsageError
from blueprint.io import jsonvalues
from blueprint.studio import forms
from blueprint.studio.history import History, row_diff
from blueprint.studio.labelling import LabellingSession, default_report_path
from blueprint.studio.security import CSRF_FIELD, CSRF_HEADER, Guard, GuardMiddleware
from blueprint.studio.workspace import FILTERS, QUEUES, RowFilter, StudioSet, Workspace
from blueprint.validation.stream import ValidationOptions
from blueprint.validation.validate import validate_document

PAGE_SIZE: Final = 50
RATER_COOKIE: Final = "blueprint_studio_rater"
REVIEWER_COOKIE: Final = "blueprint_studio_reviewer"


@dataclass
class Studio:
    """What the app serves: the sets, their history, and a judge-labelling session."""

    workspace: Workspace
    guard: Guard
    labelling: LabellingSession | None = None
    #: the folder paths typed into the studio are confined to
    root: Path = Path()

    def __post_init__(self) -> None:
        self.history = History()


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("blueprint.studio", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["json"] = lambda value: jsonvalues.dumps_text(value, indent=True)
    environment.filters["query"] = lambda pairs: urlencode(
        [(key, value) for key, value in pairs if value not in (None, "")]
    )
    return environment


def create_app(studio: Studio) -> Starlette:
    """The studio's ASGI app."""
    templates = _environment()

    def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("flash", request.query_params.get("done"))
        page = templates.get_template(name).render(
            request=request,
            csrf=studio.guard.csrf,
            csrf_field=CSRF_FIELD,
            sets=list(studio.workspace),
            queues=QUEUES,
            labelling=studio.labelling,
            **context,
        )
        return HTMLResponse(page, status_code=status)

    async def form_of(request: Request) -> dict[str, str]:
        """The submitted form, refused (403) without the page's CSRF token."""
        form = await request.form()
        given = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
        if not isinstance(given, str) or not studio.guard.csrf_matches(given):
            raise _Refused(403, "the form is missing this studio's token: reload the page")
        return {key: value for key, value in form.items() if isinstance(value, str)}

    def the_set(request: Request) -> StudioSet:
        try:
            return studio.workspace.get(request.path_params["key"])
        except KeyError:
            raise _Refused(404, "no such set in this studio") from None

    # --- browsing ------------------------------------------------------------------------

    def home(request: Request) -> Response:
        counts = {
            name: sum(1 for loaded in studio.workspace for row in loaded.rows if queue.test(row))
            for name, queue in QUEUES.items()
        }
        return render(request, "home.html", queue_counts=counts)

    def set_page(request: Request) -> Response:
        loaded = the_set(request)
        members: dict[str | None, list[int]] = {}
        for row in loaded.rows:
            tally = members.setdefault(row.family, [0, 0])
            tally[0] += 1
            tally[1] += len(row.findings)
        return render(request, "set.html", current=loaded, members=members)

    def rows_page(request: Request) -> Response:
        loaded = the_set(request)
        query = dict(request.query_params)
        chosen = RowFilter.from_query(query)
        matching = [row for row in loaded.rows if chosen.matches(row)]
        page = _page_number(query.get("page"), len(matching))
        shown = matching[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        options = {name: loaded.values(attribute) for name, attribute in FILTERS.items()}
        context_query = urlencode({k: v for k, v in query.items() if k != "page" and v})
        return render(
            request,
            "rows.html",
            current=loaded,
            rows=shown,
            total=len(matching),
            page=page,
            pages=max(1, -(-len(matching) // PAGE_SIZE)),
            query=query,
            options=options,
            codes=loaded.codes(),
            context_query=context_query,
        )

    def _neighbours(loaded: StudioSet, row_id: str, request: Request) -> dict[str, Any]:
        """The rows before and after in the list the row was opened from (a filter or a
        queue), for the next/previous keys."""
        queue = request.query_params.get("queue")
        from_query = request.query_params.get("from", "")
        if queue in QUEUES:
            ids = [row.id for row in loaded.rows if QUEUES[queue].test(row)]
        else:
            chosen = RowFilter.from_query(dict(_parse_query(from_query)))
            ids = [row.id for row in loaded.rows if chosen.matches(row)]
        where = ids.index(row_id) if row_id in ids else None
        return {
            "previous": ids[where - 1] if where not in (None, 0) else None,
            "next": ids[where + 1] if where is not None and where + 1 < len(ids) else None,
            "position": None if where is None else where + 1,
            "of": len(ids),
            "carry": urlencode({"queue": queue} if queue in QUEUES else {"from": from_query}),
        }

    def row_page(request: Request) -> Response:
        loaded = the_set(request)
        row_id = request.path_params["row_id"]
        row = loaded.row(row_id)
        if row is None:
            raise _Refused(404, f"no single row has the id {row_id!r} in {loaded.path}")
        return render(
            request,
            "row.html",
            current=loaded,
            row=row,
            around=_neighbours(loaded, row_id, request),
            gold=GOLD_PROVENANCES,
            reviewer=request.cookies.get(REVIEWER_COOKIE, ""),
            promotable=row.provenance in PROMOTABLE,
        )

    def queue_page(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in QUEUES:
            raise _Refused(404, "no such review queue")
        queue = QUEUES[name]
        found = [
            (loaded, row) for loaded in studio.workspace for row in loaded.rows if queue.test(row)
        ]
        return render(
            request, "queue.html", queue=queue, found=found[: PAGE_SIZE * 4], total=len(found)
        )

    # --- editing -------------------------------------------------------------------------

    def _editor(
        request: Request,
        loaded: StudioSet,
        row_id: str,
        *,
        typed: dict[str, str] | None = None,
        status: int = 200,
        conflict: str | None = None,
        refused: str | None = None,
    ) -> Response:
        row = loaded.row(row_id)
        if row is None:
            raise _Refused(404, f"no single row has the id {row_id!r} in {loaded.path}")
        version = typed.get("version", row.version) if typed else row.version
        check = _check(loaded, row.data, typed) if typed is not None else None
        fields = forms.shown_fields(row.data, sorted(loaded.families), typed)
        return render(
            request,
            "edit.html",
            status=status,
            current=loaded,
            row=row,
            fields=fields,
            version=version,
            check=check,
            conflict=conflict,
            refused=refused,
            carry=request.query_params.get("carry", ""),
        )

    def _check(loaded: StudioSet, data: Any, typed: dict[str, str]) -> dict[str, Any]:
        """The edited row's findings (the validator on the set with the row as typed) and its
        diff against git HEAD."""
        changes, problems = forms.read_form(data, typed)
        try:
            edited = apply_changes(data, changes)
        except EditRefused as error:
            return {"problems": {"": str(error)}, "findings": [], "diff": [], "head": None}
        document = {**loaded.header, "rows": [row.data for row in loaded.rows]}
        row_id = data.get("id")
        position = loaded.by_id[row_id][0]
        document["rows"][position] = edited
        report = validate_document(document, options=ValidationOptions(row_ids=False))
        findings = [issue for issue in report.issues if issue.row_index == position]
        head = studio.history.head_row(loaded.path, str(row_id))
        before = head.row if head.unavailable is None else data
        label = "HEAD" if head.unavailable is None else "on disk"
        return {
            "problems": problems,
            "findings": findings,
            "changed": [change.dotted for change in changes],
            "diff": row_diff(
                before,
                edited,
                before_label=f"{row_id} ({label})",
                after_label=f"{row_id} (as edited)",
            ),
            "head": head,
        }

    def edit_page(request: Request) -> Response:
        return _editor(request, the_set(request), request.path_params["row_id"])

    async def edit_submit(request: Request) -> Response:
        loaded = the_set(request)
        row_id = request.path_params["row_id"]
        typed = await form_of(request)
        row = loaded.row(row_id)
        if row is None:
            raise _Refused(404, f"no single row has the id {row_id!r} in {loaded.path}")
        if typed.get("action") != "save":
            return _editor(request, loaded, row_id, typed=typed)
        if not loaded.editable:
            return _editor(
                request,
                loaded,
                row_id,
                typed=typed,
                status=409,
                refused=f"{loaded.path} is a {loaded.format} file: the studio edits canonical"
                " sets only (convert it to .json, .jsonl or .csv first)",
            )
        changes, problems = forms.read_form(row.data, typed)
        if problems:
            return _editor(request, loaded, row_id, typed=typed, status=422)
        if row.version != typed.get("version"):
            return _conflict(request, loaded, row_id, typed)
        try:
            edit_row(loaded.path, row_id, changes, expected_version=typed.get("version"))
        except EditConflict:
            return _conflict(request, studio.workspace.reload(loaded.key), row_id, typed)
        except (EditRefused, UsageError, BlueprintError) as error:
            return _editor(request, loaded, row_id, typed=typed, status=409, refused=str(error))
        studio.workspace.reload(loaded.key)
        done = "saved" if changes else "unchanged"
        return _see(
            f"/sets/{loaded.key}/rows/{_quote(row_id)}", done, request.query_params.get("carry", "")
        )

    def _conflict(
        request: Request, loaded: StudioSet, row_id: str, typed: dict[str, str]
    ) -> Response:
        row = loaded.row(row_id)
        message = (
            "This row changed since you opened it (in another tab, another program or by"
            " someone else). Nothing was saved. The row as it is now is below, with what you"
            " typed; copy what you need and save again."
        )
        if row is None:
            return render(
                request,
                "gone.html",
                status=409,
                current=loaded,
                row_id=row_id,
                message=message,
                typed=typed,
            )
        fields = forms.shown_fields(row.data, sorted(loaded.families), typed)
        return render(
            request,
            "edit.html",
            status=409,
            current=loaded,
            row=row,
            fields=fields,
            version=row.version,
            check=None,
            conflict=message,
            refused=None,
            carry=request.query_params.get("carry", ""),
        )

    async def check_fragment(request: Request) -> Response:
        loaded = the_set(request)
        row = loaded.row(request.path_params["row_id"])
        typed = await form_of(request)
        if row is None:
            raise _Refused(404, "no such row")
        return render(request, "_check.html", check=_check(loaded, row.data, typed), current=loaded)

    async def review_submit(request: Request) -> Response:
        loaded = the_set(request)
        row_id = request.path_params["row_id"]
        action = request.path_params["action"]
        typed = await form_of(request)
        row = loaded.row(row_id)
        if row is None or row.version != typed.get("version"):
            fresh = loaded.row(row_id)
            return render(
                request,
                "stale.html",
                status=409,
                current=loaded,
                row_id=row_id,
                row=fresh,
            )
        reviewer = typed.get("reviewer", "").strip()
        try:
            if action == "promote":
                promote(
                    loaded.path,
                    PromoteRequest(
                        (row_id,),
                        typed.get("provenance", "expert-authored"),
                        reviewer,
                        accept_derived=typed.get("accept_derived") == "yes",
                    ),
                )
            else:
                accept_derived(loaded.path, [row_id])
        except (BlueprintError, UsageError) as error:
            return render(
                request,
                "refused.html",
                status=409,
                current=loaded,
                row_id=row_id,
                message=str(error),
            )
        studio.workspace.reload(loaded.key)
        response = _see(
            f"/sets/{loaded.key}/rows/{_quote(row_id)}",
            "promoted" if action == "promote" else "accepted",
            typed.get("carry", ""),
        )
        if reviewer:
            response.set_cookie(REVIEWER_COOKIE, reviewer, samesite="strict", httponly=True)
        return response

    # --- judge labelling -----------------------------------------------------------------

    def judge_page(request: Request) -> Response:
        session = studio.labelling
        rater = request.cookies.get(RATER_COOKIE, "")
        if session is None:
            return render(request, "judge.html", session=None, rater=rater, item=None, report=None)
        wanted = request.query_params.get("case")
        index = session.index_of(wanted) if wanted else None
        if index is None and rater:
            index = session.next_for(rater)
        if index is None:
            index = 0
        item = session.items[index]
        loaded = next(
            (s for s in studio.workspace if s.path.resolve() == session.set_path.resolve()), None
        )
        row = loaded.row(item.case_id) if loaded is not None else None
        mine = session.labels.get(item.case_id, {}).get(rater) if rater else None
        reveal = request.query_params.get("reveal") == "1"
        return render(
            request,
            "judge.html",
            session=session,
            rater=rater,
            item=item,
            index=index,
            row=row,
            mine=mine,
            reveal=reveal,
            report=session.report(),
            default_report=default_report_path(session.set_path),
            previous=session.items[index - 1].case_id if index > 0 else None,
            following=session.items[index + 1].case_id if index + 1 < len(session.items) else None,
        )

    async def judge_rater(request: Request) -> Response:
        typed = await form_of(request)
        rater = typed.get("rater", "").strip()
        response = _see("/judge", None, "")
        if rater:
            response.set_cookie(RATER_COOKIE, rater, samesite="strict", httponly=True)
        return response

    async def judge_label(request: Request) -> Response:
        session = studio.labelling
        if session is None:
            raise _Refused(404, "no judge results are loaded")
        typed = await form_of(request)
        rater = request.cookies.get(RATER_COOKIE, "") or typed.get("rater", "")
        case_id = typed.get("case", "")
        given = typed.get("label", "")
        index = session.index_of(case_id)
        if index is None:
            raise _Refused(404, "no such judged output")
        if given != "skip":
            label: str | int | None = (
                None if given == "clear" else (int(given) if given.lstrip("-").isdigit() else given)
            )
            try:
                session.give(case_id, rater, label)
            except UsageError as error:
                raise _Refused(422, str(error)) from None
            following = session.next_for(rater, index)
        else:
            following = (index + 1) % len(session.items)
        target = (
            f"/judge?case={_quote(session.items[following].case_id)}"
            if following is not None
            else "/judge?done=all"
        )
        if typed.get("reveal") == "1":
            target += "&reveal=1"
        return RedirectResponse(target, status_code=303)

    async def judge_report(request: Request) -> Response:
        session = studio.labelling
        if session is None:
            raise _Refused(404, "no judge results are loaded")
        typed = await form_of(request)
        output = _inside(
            studio.root, typed.get("output", "") or str(default_report_path(session.set_path))
        )
        if output.suffix.lower() != ".json":
            raise _Refused(422, "the report the set points at is written as .json")
        try:
            session.write_report(output, force=typed.get("force") == "yes")
            family = typed.get("family") or None
            if typed.get("point") == "yes":
                point_at_judge_report(session.set_path, output, family=family)
        except (BlueprintError, UsageError) as error:
            return render(
                request, "refused.html", status=409, current=None, row_id=None, message=str(error)
            )
        for loaded in studio.workspace:
            if loaded.path.resolve() == session.set_path.resolve():
                studio.workspace.reload(loaded.key)
        return _see("/judge", "report-written", "")

    routes = [
        Route("/", home),
        Route("/sets/{key}", set_page),
        Route("/sets/{key}/rows", rows_page),
        Route("/sets/{key}/rows/{row_id:path}/edit", edit_page, methods=["GET"]),
        Route("/sets/{key}/rows/{row_id:path}/edit", edit_submit, methods=["POST"]),
        Route("/sets/{key}/rows/{row_id:path}/check", check_fragment, methods=["POST"]),
        Route("/sets/{key}/rows/{row_id:path}/{action:str}", review_submit, methods=["POST"]),
        Route("/sets/{key}/rows/{row_id:path}", row_page),
        Route("/queues/{name}", queue_page),
        Route("/judge", judge_page),
        Route("/judge/rater", judge_rater, methods=["POST"]),
        Route("/judge/label", judge_label, methods=["POST"]),
        Route("/judge/report", judge_report, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("blueprint.studio", "static")]), name="static"),
    ]

    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, _Refused)
        return render(
            request,
            "refused.html",
            status=error.status,
            current=None,
            row_id=None,
            message=error.message,
        )

    app = Starlette(routes=routes, exception_handlers={_Refused: refused})
    app.add_middleware(GuardMiddleware, guard=studio.guard)
    return app


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def _parse_query(text: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(text)


def _see(path: str, done: str | None, carry: str) -> RedirectResponse:
    parts = [part for part in (f"done={done}" if done else "", carry) if part]
    return RedirectResponse(path + ("?" + "&".join(parts) if parts else ""), status_code=303)


def _page_number(text: str | None, total: int) -> int:
    pages = max(1, -(-total // PAGE_SIZE))
    try:
        return min(max(1, int(text or 1)), pages)
    except ValueError:
        return 1


def _inside(root: Path, typed: str) -> Path:
    """A path typed into a form, refused outside the folder the studio was started in."""
    path = (root / typed).resolve() if not Path(typed).is_absolute() else Path(typed).resolve()
    if not path.is_relative_to(root.resolve()):
        raise _Refused(422, f"{typed}: the studio writes only inside {root.resolve()}")
    return path
