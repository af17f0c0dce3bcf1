"""What every page of the studio shares: the studio's state, rendering, reading a form
(refused without the CSRF token), finding a set, and refusals shown as pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, unquote, urlencode

from jinja2 import Environment, PackageLoader
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from blueprint.io import jsonvalues
from blueprint.studio.history import History
from blueprint.studio.labelling import LabellingSession
from blueprint.studio.security import CSRF_FIELD, CSRF_HEADER, Guard
from blueprint.studio.workspace import QUEUES, StudioSet, Workspace

PAGE_SIZE: Final = 50


@dataclass
class Studio:
    """What the app serves: the sets, their history at git HEAD, a judge-labelling session,
    and the folder that paths typed into a form must stay in."""

    workspace: Workspace
    guard: Guard
    labelling: LabellingSession | None = None
    root: Path = field(default_factory=Path.cwd)
    history: History = field(default_factory=History)


class Refused(Exception):
    """A request the studio will not serve: shown as a page with the status and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def environment() -> Environment:
    """The templates, autoescaped: nothing from a set is ever read as markup."""
    made = Environment(
        loader=PackageLoader("blueprint.studio", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    made.filters["json"] = lambda value: jsonvalues.dumps_text(value, indent=True)
    made.filters["shown"] = shown_path
    made.filters["query"] = lambda pairs: urlencode(
        [(key, value) for key, value in pairs if value not in (None, "")]
    )
    return made


class Pages:
    """The base of each group of pages: the studio, and the helpers every page uses."""

    def __init__(self, studio: Studio, templates: Environment) -> None:
        self.studio = studio
        self.templates = templates

    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("flash", request.query_params.get("done"))
        page = self.templates.get_template(name).render(
            request=request,
            csrf=self.studio.guard.csrf,
            csrf_field=CSRF_FIELD,
            sets=list(self.studio.workspace),
            queues=QUEUES,
            labelling=self.studio.labelling,
            **context,
        )
        return HTMLResponse(page, status_code=status)

    def refused(
        self, request: Request, status: int, message: str, *, written: bool = False
    ) -> Response:
        """A refusal as a page; ``written`` says a part of the request was done (the page
        does not then say that nothing was written)."""
        return self.render(request, "refused.html", status=status, message=message, written=written)

    def writable_folders(self) -> list[Path]:
        """Where a path typed into a form may point: the folder the studio was started in,
        and the folders of the sets it serves."""
        return [self.studio.root, *(served.path.parent for served in self.studio.workspace)]

    async def form_of(self, request: Request) -> dict[str, str]:
        """The submitted form, refused (403) without the page's CSRF token. No studio form
        sends a file: one in a form is refused (400) before it is written anywhere."""
        form = await request.form(max_files=0)
        given = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
        if not isinstance(given, str) or not self.studio.guard.csrf_matches(given):
            raise Refused(403, "the form is missing this studio's token: reload the page")
        return {key: value for key, value in form.items() if isinstance(value, str)}

    def the_set(self, request: Request) -> StudioSet:
        try:
            return self.studio.workspace.get(request.path_params["key"])
        except KeyError:
            raise Refused(404, "no such set in this studio") from None

    def set_of(self, path: Path) -> StudioSet | None:
        """The served set whose file is ``path``."""
        wanted = path.resolve()
        return next((s for s in self.studio.workspace if s.path.resolve() == wanted), None)


def shown_path(path: Path) -> str:
    """A path as a person would type it: relative to the working folder when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def remembered(request: Request, name: str) -> str:
    """A name the studio keeps in a cookie (a reviewer's, a rater's)."""
    return unquote(request.cookies.get(name, ""))


def remember(response: Response, name: str, value: str) -> None:
    """Keep a name in a cookie, percent-encoded (a header holds Latin-1 only: 李明 too)."""
    response.set_cookie(name, quote(value, safe=""), samesite="strict", httponly=True)


def quoted(text: str) -> str:
    """A row id as one part of a URL path."""
    return quote(text, safe="")


def see(path: str, done: str | None = None, carry: str = "") -> RedirectResponse:
    """Redirect after a form (303), with what was done for the next page to say."""
    parts = [part for part in (f"done={done}" if done else "", carry) if part]
    return RedirectResponse(path + ("?" + "&".join(parts) if parts else ""), status_code=303)


def page_number(text: str | None, total: int) -> int:
    pages = max(1, -(-total // PAGE_SIZE))
    try:
        return min(max(1, int(text or 1)), pages)
    except ValueError:
        return 1


def inside(folders: list[Path], typed: str) -> Path:
    """A path typed into a form (relative to the first folder), refused outside them all."""
    try:
        given = Path(typed)
        path = (given if given.is_absolute() else folders[0] / given).resolve()
    except (ValueError, OSError) as error:
        raise Refused(422, f"{typed!r} is not a path: {error}") from None
    if not any(path.is_relative_to(folder.resolve()) for folder in folders):
        where = ", ".join(str(folder.resolve()) for folder in folders)
        raise Refused(422, f"{typed}: the studio writes only inside {where}")
    return path
