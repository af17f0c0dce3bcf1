"""The judge-labelling pages: one judged output at a time, the rater's own label (blind to
the judge's unless asked), the report as labels come in, and writing it with the set pointed
at it."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from blueprint.authoring.rowedit import point_at_judge_report
from blueprint.core.errors import BlueprintError
from blueprint.formats.setfile import set_file_for
from blueprint.io import jsonvalues
from blueprint.io.samefile import same_file
from blueprint.reports.judging import REPORT_VERSION
from blueprint.studio.labelling import (
    Label,
    LabellingSession,
    check_rater,
    default_report_path,
)
from blueprint.studio.pages import Pages, Refused, inside, quoted, remember, remembered, see

RATER_COOKIE: Final = "blueprint_studio_rater"
SCORE: Final = re.compile(r"-?[0-9]{1,9}")
#: the largest file the studio reads to see whether it is a judge report it may replace
_REPORT_BYTES: Final = 64 * 1024 * 1024


def _not_a_report(output: Path) -> str | None:
    """Why the report may not be written over what ``output`` is now, or None: an existing
    file is replaced only when it is a judge report (a set in the folder, or any other file,
    never), and only a regular file."""
    try:
        mode = output.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{output}: cannot look at it ({error.strerror})"
    why = f"{output} is there and is not a judge report: the studio replaces only a report"
    if not stat.S_ISREG(mode) or output.stat().st_size > _REPORT_BYTES:
        return why
    try:
        document = jsonvalues.loads(output.read_bytes())
    except (OSError, ValueError):
        return why
    version = document.get("reportVersion") if isinstance(document, dict) else None
    family = REPORT_VERSION.rsplit("/", 1)[0] + "/"  # any version of the report
    if not (isinstance(version, str) and version.startswith(family)):
        return why
    return None


class LabelPages(Pages):
    def _session(self) -> LabellingSession:
        if self.studio.labelling is None:
            raise Refused(404, "no judge results are loaded (blueprint studio --judge-results)")
        return self.studio.labelling

    def judge_page(self, request: Request) -> Response:
        session = self.studio.labelling
        rater = remembered(request, RATER_COOKIE)
        if session is None:
            return self.render(request, "judge.html", session=None, rater=rater, report=None)
        wanted = request.query_params.get("case")
        index = session.index_of(wanted) if wanted else None
        if index is None and rater:
            index = session.next_for(rater)
        index = index or 0
        item = session.items[index]
        loaded = self.set_of(session.set_path)
        count = len(session.items)
        return self.render(
            request,
            "judge.html",
            session=session,
            rater=rater,
            item=item,
            index=index,
            row=loaded.row(item.case_id) if loaded is not None else None,
            mine=session.labels.get(item.case_id, {}).get(rater) if rater else None,
            reveal=request.query_params.get("reveal") == "1",
            report=session.report(),
            default_report=default_report_path(session.set_path),
            previous=session.items[index - 1].case_id if index > 0 else None,
            following=session.items[index + 1].case_id if index + 1 < count else None,
        )

    async def judge_rater(self, request: Request) -> Response:
        typed = await self.form_of(request)
        try:
            rater = check_rater(typed.get("rater", ""))
        except BlueprintError as error:
            raise Refused(422, str(error)) from None
        response = see("/judge")
        remember(response, RATER_COOKIE, rater)
        return response

    async def judge_label(self, request: Request) -> Response:
        """One label (or a skip, or a label withdrawn), then the rater's next open case."""
        session = self._session()
        typed = await self.form_of(request)
        rater = remembered(request, RATER_COOKIE)
        if not rater:
            raise Refused(422, "say who you are first: give your name as the rater")
        case_id = typed.get("case", "")
        index = session.index_of(case_id)
        if index is None:
            raise Refused(404, f"{case_id!r} is not among the judged outputs")
        given = typed.get("label", "")
        if given == "skip":
            following: int | None = (index + 1) % len(session.items)
        else:
            label: Label | None = None
            if given != "clear":
                label = int(given) if SCORE.fullmatch(given) else given
            try:
                session.give(case_id, rater, label)
            except BlueprintError as error:
                raise Refused(422, str(error)) from None
            following = session.next_for(rater, index)
        target = "/judge?done=all"
        if following is not None:
            target = f"/judge?case={quoted(session.items[following].case_id)}"
            if typed.get("reveal") == "1":
                target += "&reveal=1"
        return RedirectResponse(target, status_code=303)

    async def judge_report(self, request: Request) -> Response:
        """Write the report as ``judge-report -o`` does, and point the set (or a family) at
        it as ``judge-report --point`` does."""
        session = self._session()
        typed = await self.form_of(request)
        output = inside(
            self.writable_folders(),
            typed.get("output", "").strip() or str(default_report_path(session.set_path)),
        )
        if output.suffix.lower() != ".json":
            raise Refused(422, "the report a set points at is written as .json")
        kept = {session.results_path, session.labels_path}
        for served in self.studio.workspace:
            kept |= {served.path, set_file_for(served.path)}
        if any(same_file(output, path) for path in kept):
            raise Refused(422, f"{output} is a set, the judge results or the labels: not a report")
        refusal = _not_a_report(output)
        if refusal is not None:
            raise Refused(422, refusal)
        try:
            session.write_report(output, force=typed.get("force") == "yes")
        except (BlueprintError, OSError) as error:
            return self.refused(request, 409, str(error))
        if typed.get("point") == "yes":
            family = typed.get("family") or None
            try:
                point_at_judge_report(session.set_path, output, family=family)
            except BlueprintError as error:
                message = (
                    f"The report is written to {output}, but the set was not pointed at it: {error}"
                )
                return self.refused(request, 409, message, written=True)
        loaded = self.set_of(session.set_path)
        if loaded is not None:
            self.studio.workspace.reload(loaded.key)
        return see("/judge", "report-written")
