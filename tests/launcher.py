"""Starts ``blueprint`` commands as real child processes, fast: imported once, then forked.

Run as a script, it imports the command line once and then reads requests, one JSON object a
line, on stdin, answering each with one JSON line on stdout:

- ``{"start": [arguments], "tmpdir": path, "stderr": path, "gated": bool}`` forks a child
  that runs ``blueprint <arguments>`` (as the console script does, signal handlers and all)
  with TMPDIR set and its stderr in a file; answers ``{"pid": n}``. A gated child waits for
  ``{"open": true}``, so that two commands start at the same instant.
- ``{"wait": pid}`` answers ``{"code": n}``: the exit code, or minus the signal that killed it.

A fault test needs dozens of commands killed at random moments; starting each from a fresh
interpreter would spend its seconds importing, where nothing on disk happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from typing import Any

import blueprint.cli


def _child(request: dict[str, Any], gate: tuple[int, int] | None) -> None:
    code = 3
    try:
        if gate is not None:
            os.close(gate[1])
            os.read(gate[0], 1)  # returns once the launcher closes its end
        os.environ["TMPDIR"] = request["tmpdir"]
        tempfile.tempdir = None  # chosen again, from TMPDIR
        errors = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        nowhere = os.open(os.devnull, os.O_RDWR)
        os.dup2(errors, 2)
        os.dup2(nowhere, 1)
        os.dup2(nowhere, 0)
        sys.argv = ["blueprint", *request["start"]]
        blueprint.cli.main()
        code = 0
    except SystemExit as exiting:
        code = exiting.code if isinstance(exiting.code, int) else 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


def serve() -> None:
    gate: tuple[int, int] | None = None
    for line in sys.stdin:
        request = json.loads(line)
        reply: dict[str, Any]
        if "start" in request:
            if request.get("gated") and gate is None:
                gate = os.pipe()
            pid = os.fork()
            if pid == 0:
                _child(request, gate if request.get("gated") else None)
            reply = {"pid": pid}
        elif "open" in request:
            if gate is not None:
                os.close(gate[0])
                os.close(gate[1])
                gate = None
            reply = {}
        else:
            _, status = os.waitpid(request["wait"], 0)
            reply = {"code": os.waitstatus_to_exitcode(status)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    serve()
