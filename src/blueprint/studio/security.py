"""What keeps a local studio local: the Host it answers to, the access token beyond loopback,
forms that only its own pages can send, and pages that load nothing from elsewhere.

- **Host**: on loopback the studio answers only to ``127.0.0.1``, ``localhost`` and ``[::1]``
  at its port, so a web page whose name resolves to this machine (DNS rebinding) is refused.
- **Token**: bound beyond loopback, every request needs the token printed at start, given
  once as ``?token=`` (then kept in an HTTP-only cookie).
- **Forms**: a POST must come from the studio's own origin (``Origin``/``Referer``,
  ``Sec-Fetch-Site``) and carry the process's CSRF token, which only its pages hold. A body
  is a form (URL-encoded, or multipart without files) of at most ``max_body`` bytes: a
  request from another site, one with another kind of body, or one declared larger is
  refused before any of its body is read, and a body that grows past the bound while it is
  read (sent in chunks, with no length declared) is refused there.
- **Pages**: a Content-Security-Policy that allows scripts, styles, images and requests from
  the studio itself only.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from starlette.datastructures import URL, QueryParams
from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_COOKIE: Final = "blueprint_studio_token"
CSRF_FIELD: Final = "csrf"
CSRF_HEADER: Final = "x-csrf-token"
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
#: the bodies a studio form sends: a page's form, and the editor's live check (FormData)
FORM_TYPES: Final = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})
#: the largest request body the studio reads: a row's editor sends each field twice (as
#: typed and as first shown), and rows are far smaller than this
MAX_BODY_BYTES: Final = 16 * 1024 * 1024

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none';"
    " object-src 'none'"
)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class Guard:
    """The studio's secrets and where it listens."""

    host: str
    port: int
    #: the access token, required beyond loopback (None on loopback)
    token: str | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    #: the largest request body read
    max_body: int = MAX_BODY_BYTES

    @classmethod
    def for_binding(cls, host: str, port: int) -> Guard:
        token = None if is_loopback(host) else secrets.token_urlsafe(24)
        return cls(host, port, token)

    def allowed_hosts(self) -> set[str] | None:
        """The Host headers answered to (None: any, beyond loopback where the token guards):
        the loopback names and the address bound, at the port (or without it, on port 80)."""
        if self.token is not None:
            return None
        bound = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        ports = [f":{self.port}", ""] if self.port == 80 else [f":{self.port}"]
        return {name + port for name in {*LOOPBACK_NAMES, bound} for port in ports}

    def csrf_matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.csrf.encode())

    def token_matches(self, given: str | None) -> bool:
        return self.token is None or (
            given is not None and hmac.compare_digest(given.encode(), self.token.encode())
        )


def _refused(status: int, why: str) -> Response:
    return PlainTextResponse(f"{status}: {why}\n", status_code=status)


class GuardMiddleware:
    """Host, token and cross-origin checks before any route; security headers on every reply.
    The CSRF token itself is checked where the form is read (:func:`check_csrf`)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]
        }
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS:
            receive = _bounded(receive, self.guard.max_body)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [
                    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"),
                    (b"cross-origin-resource-policy", b"same-origin"),
                ]
                if not scope["path"].startswith("/static/"):
                    extra.append((b"cache-control", b"no-store"))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        host = headers.get("host", "")
        allowed = self.guard.allowed_hosts()
        if allowed is not None and host not in allowed:
            return _refused(421, f"this studio answers to {sorted(allowed)[0]}, not {host!r}")
        if self.guard.token is not None:
            url = URL(scope=scope)
            given = QueryParams(url.query).get("token")
            if given is not None and self.guard.token_matches(given):
                # keep the token in a cookie and take it out of the address bar
                response = RedirectResponse(url.remove_query_params("token"), status_code=303)
                # Lax: the printed link may be opened from another page (a chat, a mail); forms
                # still need the CSRF token and the studio's own origin
                response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="lax", path="/")
                return response
            cookie = _cookie(headers.get("cookie", ""), TOKEN_COOKIE)
            if not self.guard.token_matches(cookie):
                return _refused(
                    401,
                    "this studio needs its access token: open the address it printed when it"
                    " started (it ends in ?token=...)",
                )
        if scope["method"] not in SAFE_METHODS:
            origin = f"{scope.get('scheme', 'http')}://{host}"
            if headers.get("sec-fetch-site") not in (None, "same-origin", "none"):
                return _refused(403, "a request from another site cannot change anything here")
            sent = headers.get("origin") or _origin_of(headers.get("referer"))
            if sent is not None and sent != origin:
                return _refused(403, f"a request from {sent} cannot change anything here")
            return self._body_refusal(headers)
        return None

    def _body_refusal(self, headers: dict[str, str]) -> Response | None:
        """A body the studio will not read: not a form, or declared larger than it takes."""
        kind = headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind and kind not in FORM_TYPES:
            return _refused(415, f"the studio takes forms, not {kind}")
        length = headers.get("content-length")
        if length is not None:
            if not length.strip().isdigit():
                return _refused(400, f"Content-Length {length!r} is not a number of bytes")
            if int(length) > self.guard.max_body:
                return _refused(
                    413,
                    f"a form of {int(length):,} bytes is more than the studio takes"
                    f" ({self.guard.max_body:,})",
                )
        return None


def _bounded(receive: Receive, limit: int) -> Receive:
    """``receive`` that stops a body at ``limit`` bytes: past it, a 413 (raised where the
    form is read, so nothing more of it is read or kept)."""
    taken = 0

    async def bounded() -> Message:
        nonlocal taken
        message = await receive()
        if message["type"] == "http.request":
            taken += len(message.get("body", b""))
            if taken > limit:
                raise HTTPException(
                    413, f"a form of more than {limit:,} bytes is more than the studio takes"
                )
        return message

    return bounded


def _origin_of(referer: str | None) -> str | None:
    if not referer:
        return None
    parts = urlsplit(referer)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else "null"


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None
