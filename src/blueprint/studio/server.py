"""Starting a studio: the sets loaded (with progress), the socket bound, the address printed,
and uvicorn serving until interrupted."""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette

from blueprint.reports.judging import Thresholds
from blueprint.studio.app import create_app
from blueprint.studio.labelling import LabellingSession
from blueprint.studio.pages import Studio
from blueprint.studio.security import Guard, is_loopback
from blueprint.studio.workspace import Progress, Workspace

DEFAULT_PORT = 8765


@dataclass(frozen=True)
class StudioOptions:
    """What ``blueprint studio`` was asked for."""

    sets: Sequence[Path]
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    judge_results: Path | None = None
    labels: Path | None = None
    scale: tuple[int, int] | None = None
    thresholds: Thresholds | None = None
    #: the folder paths typed into the studio must stay in
    root: Path = Path()


def build_studio(
    options: StudioOptions, port: int, progress: Progress | None = None
) -> tuple[Studio, Starlette]:
    """The studio over the sets, and its app, for a server listening on ``port``."""
    workspace = Workspace(options.sets, progress)
    labelling = None
    if options.judge_results is not None:
        if not options.sets:
            raise ValueError("judge results need the set they are for")
        labelling = LabellingSession.open(
            options.sets[0],
            options.judge_results,
            options.labels,
            thresholds=options.thresholds,
            scale=options.scale,
        )
    studio = Studio(workspace, Guard.for_binding(options.host, port), labelling, options.root)
    return studio, create_app(studio)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port); OSError when the address is taken."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def address(host: str, port: int, token: str | None) -> str:
    shown = f"[{host.strip('[]')}]" if ":" in host.strip("[]") else host
    if host in ("0.0.0.0", "::"):
        shown = socket.gethostname()
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(
    options: StudioOptions,
    *,
    announce: Callable[[str], None],
    progress: Progress | None = None,
    open_browser: bool = False,
) -> None:
    """Serve the studio until interrupted (blocks)."""
    import uvicorn

    sock = bind(options.host, options.port)
    port = sock.getsockname()[1]
    studio, app = build_studio(options, port, progress)
    url = address(options.host, port, studio.guard.token)
    if not is_loopback(options.host):
        announce(
            f"serving beyond loopback on {options.host}: every request needs the token;"
            " anyone who has the address below can edit these sets"
        )
    announce(f"Blueprint Studio on {url} (Ctrl+C stops it)")
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
