"""The studio's ASGI app (Starlette, pages rendered on the server with jinja2).

Every page reads the workspace, which reads a set again when its files changed; every write
goes through a library call a ``blueprint`` command also makes (:func:`edit_row`,
:func:`promote`, :func:`accept_derived`, :func:`point_at_judge_report`) or writes the labels
file ``judge-report`` reads. A write that is refused shows why, and the file is as it was.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from blueprint.studio.browse import BrowsePages
from blueprint.studio.labelpages import LabelPages
from blueprint.studio.pages import Refused, Studio, environment
from blueprint.studio.review import ReviewPages
from blueprint.studio.security import GuardMiddleware


def create_app(studio: Studio) -> Starlette:
    """The studio's app over ``studio``'s sets, behind its guard."""
    templates = environment()
    browse = BrowsePages(studio, templates)
    review = ReviewPages(studio, templates)
    labels = LabelPages(studio, templates)
    # the row id comes last, so that any id (one ending in /edit too) names one row
    routes = [
        Route("/", browse.home),
        Route("/sets/{key}", browse.set_page),
        Route("/sets/{key}/rows", browse.rows_page),
        Route("/sets/{key}/rows/{row_id:path}", browse.row_page),
        Route("/sets/{key}/edit/{row_id:path}", review.edit_page, methods=["GET"]),
        Route("/sets/{key}/edit/{row_id:path}", review.edit_submit, methods=["POST"]),
        Route("/sets/{key}/check/{row_id:path}", review.check_fragment, methods=["POST"]),
        Route("/sets/{key}/review/{action}/{row_id:path}", review.review_submit, methods=["POST"]),
        Route("/queues/{name}", browse.queue_page),
        Route("/judge", labels.judge_page),
        Route("/judge/rater", labels.judge_rater, methods=["POST"]),
        Route("/judge/label", labels.judge_label, methods=["POST"]),
        Route("/judge/report", labels.judge_report, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("blueprint.studio", "static")]), name="static"),
    ]

    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, Refused)
        return browse.refused(request, error.status, error.message)

    app = Starlette(routes=routes, exception_handlers={Refused: refused})
    app.add_middleware(GuardMiddleware, guard=studio.guard)
    return app
