"""The pages that show sets: the sets, a set's case families, rows with filters and their
findings, one row, and the review queues."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import Response

from blueprint.authoring.curate import GOLD_PROVENANCES, PROMOTABLE
from blueprint.studio.pages import PAGE_SIZE, Pages, Refused, page_number, remembered
from blueprint.studio.workspace import FILTERS, QUEUES, RowFilter, StudioSet

REVIEWER_COOKIE = "blueprint_studio_reviewer"


class BrowsePages(Pages):
    def home(self, request: Request) -> Response:
        sets = list(self.studio.workspace)
        counts = {
            name: sum(1 for loaded in sets for row in loaded.rows if queue.test(row))
            for name, queue in QUEUES.items()
        }
        return self.render(request, "home.html", queue_counts=counts)

    def set_page(self, request: Request) -> Response:
        loaded = self.the_set(request)
        from blueprint.reports.power import power_table
        from blueprint.reports.summary import scored_row

        members: dict[str | None, list[int]] = {}
        for row in loaded.rows:
            tally = members.setdefault(row.family, [0, 0, 0])
            tally[0] += 1
            tally[1] += len(row.findings)
            tally[2] += scored_row(row.data, loaded.families.get(row.family or ""))
        power = power_table((family, tally[0], tally[2]) for family, tally in members.items())
        detectable = {family.id: family.change_label for family in power.families}
        return self.render(
            request,
            "set.html",
            current=loaded,
            members=members,
            detectable=detectable,
            power=power,
        )

    def rows_page(self, request: Request) -> Response:
        loaded = self.the_set(request)
        query = dict(request.query_params)
        chosen = RowFilter.from_query(query)
        matching = [row for row in loaded.rows if chosen.matches(row)]
        page = page_number(query.get("page"), len(matching))
        return self.render(
            request,
            "rows.html",
            current=loaded,
            rows=matching[(page - 1) * PAGE_SIZE : page * PAGE_SIZE],
            total=len(matching),
            page=page,
            pages=max(1, -(-len(matching) // PAGE_SIZE)),
            query=query,
            options={name: loaded.values(attribute) for name, attribute in FILTERS.items()},
            codes=loaded.codes(),
            context_query=urlencode({k: v for k, v in query.items() if k != "page" and v}),
        )

    def row_page(self, request: Request) -> Response:
        loaded = self.the_set(request)
        row_id = request.path_params["row_id"]
        row = loaded.row(row_id)
        if row is None:
            raise Refused(404, f"no single row has the id {row_id!r} in {loaded.path}")
        return self.render(
            request,
            "row.html",
            current=loaded,
            row=row,
            around=neighbours(loaded, row_id, request),
            gold=GOLD_PROVENANCES,
            reviewer=remembered(request, REVIEWER_COOKIE),
            promotable=row.provenance in PROMOTABLE,
        )

    def queue_page(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in QUEUES:
            raise Refused(404, "no such review queue")
        queue = QUEUES[name]
        found = [
            (loaded, row)
            for loaded in self.studio.workspace
            for row in loaded.rows
            if queue.test(row)
        ]
        return self.render(
            request, "queue.html", queue=queue, found=found[: PAGE_SIZE * 4], total=len(found)
        )


def neighbours(loaded: StudioSet, row_id: str, request: Request) -> dict[str, Any]:
    """The rows before and after in the list the row was opened from (a filter or a queue),
    for the next and previous keys; ``carry`` keeps that list in the links."""
    queue = request.query_params.get("queue")
    from_query = request.query_params.get("from", "")
    if queue in QUEUES:
        ids = [row.id for row in loaded.rows if QUEUES[queue].test(row)]
    else:
        chosen = RowFilter.from_query(dict(parse_qsl(from_query)))
        ids = [row.id for row in loaded.rows if chosen.matches(row)]
    where = ids.index(row_id) if row_id in ids else None
    return {
        "previous": ids[where - 1] if where not in (None, 0) else None,
        "next": ids[where + 1] if where is not None and where + 1 < len(ids) else None,
        "position": None if where is None else where + 1,
        "of": len(ids),
        "carry": urlencode({"queue": queue} if queue in QUEUES else {"from": from_query}),
    }
