"""The studio against forged forms and hostile requests: a value a field cannot take, a
report written over a set, a request from another site, a body too large or not a form.
Each is refused with a 4xx and a reason, and no file changes."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from blueprint.studio.server import StudioOptions, build_studio
from studio_sets import judge_results, studio_set

BASE = "http://127.0.0.1:8765"


@pytest.fixture
def set_path(tmp_path: Path) -> Path:
    return studio_set(tmp_path)


def client_for(set_path: Path, **options: Any) -> TestClient:
    _, app = build_studio(StudioOptions(sets=[set_path], root=set_path.parent, **options), 8765)
    return TestClient(app, base_url=BASE)


def hidden(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))


def editor(client: TestClient, row_id: str) -> dict[str, str]:
    fields = hidden(client.get(f"/sets/1/edit/{row_id}").text)
    return {"csrf": fields["csrf"], "version": fields["version"], "action": "save"}


# --- a value a field cannot take ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("metadata.case.oracleType", "../../evil"),
        ("metadata.case.oracleType", "reference-answr"),
        ("metadata.case.evaluator", "gpt-4-as-judge"),
        ("metadata.case.provenance", "<script>"),
        ("metadata.case.reversibility", "R9"),
        ("metadata.case.blastRadius", "B4"),
        ("metadata.case.caseFamily", "no-such-family"),
    ],
)
def test_a_choice_takes_only_the_values_it_offers(set_path: Path, field: str, value: str) -> None:
    client = client_for(set_path)
    before = set_path.read_bytes()
    answer = client.post(
        "/sets/1/edit/lookup-1", data={**editor(client, "lookup-1"), f"f.{field}": value}
    )
    assert answer.status_code == 422, answer.text
    assert "is not a value of" in answer.text
    assert set_path.read_bytes() == before


def test_a_choice_it_offers_is_saved(set_path: Path) -> None:
    client = client_for(set_path)
    form = {**editor(client, "lookup-1"), "f.metadata.case.reversibility": "R1"}
    assert (
        client.post("/sets/1/edit/lookup-1", data=form, follow_redirects=False).status_code == 303
    )
    assert '"reversibility": "R1"' in set_path.read_text(encoding="utf-8")


def test_a_rows_own_value_that_is_no_longer_offered_may_stay(tmp_path: Path) -> None:
    """A row whose family the set no longer defines keeps it when another field is saved,
    from a form sent without the values first shown too."""
    path = studio_set(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["rows"][0]["metadata"]["case"]["caseFamily"] = "gone"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    client = client_for(path)
    row_id = document["rows"][0]["id"]
    form = {
        **editor(client, row_id),
        "f.metadata.case.caseFamily": "gone",
        "f.metadata.case.actor": "a customer",
    }
    saved = client.post(f"/sets/1/edit/{row_id}", data=form, follow_redirects=False)
    assert saved.status_code == 303, saved.text
    case = json.loads(path.read_text(encoding="utf-8"))["rows"][0]["metadata"]["case"]
    assert case["caseFamily"] == "gone" and case["actor"] == "a customer"


# --- the report is never written over a set -----------------------------------------------------


def labelled(set_path: Path) -> tuple[TestClient, str]:
    client = client_for(set_path, judge_results=judge_results(set_path.parent))
    csrf = hidden(client.get("/judge").text)["csrf"]
    client.post("/judge/rater", data={"csrf": csrf, "rater": "ann"})
    for number in range(1, 31):
        label = "pass" if number % 2 == 0 else "fail"
        client.post(
            "/judge/label", data={"csrf": csrf, "case": f"tone-{number:02d}", "label": label}
        )
    return client, csrf


def test_the_report_is_not_written_over_another_set_in_the_folder(set_path: Path) -> None:
    client, csrf = labelled(set_path)
    other = studio_set(set_path.parent, "other.json")  # a set the studio does not serve
    os.link(set_path, set_path.parent / "hard.json")  # the served set, by another name
    (set_path.parent / "notes.json").write_text('{"mine": true}\n', encoding="utf-8")
    files = {path.name: path.read_bytes() for path in set_path.parent.iterdir()}
    for output in ("other.json", "hard.json", "notes.json"):
        answer = client.post("/judge/report", data={"csrf": csrf, "output": output, "force": "yes"})
        assert answer.status_code == 422, (output, answer.text)
    assert {path.name: path.read_bytes() for path in set_path.parent.iterdir()} == files
    assert other.exists()


def test_a_report_replaces_the_report_it_wrote(set_path: Path) -> None:
    client, csrf = labelled(set_path)
    data = {"csrf": csrf, "output": "studio.judge.json"}
    assert client.post("/judge/report", data=data, follow_redirects=False).status_code == 303
    again = client.post("/judge/report", data={**data, "force": "yes"}, follow_redirects=False)
    assert again.status_code == 303


# --- requests from elsewhere, and bodies the studio does not read -------------------------------


def asgi_post(set_path: Path, headers: dict[str, str], body: bytes) -> tuple[int, int]:
    """POST to the app directly: the status, and how many times the body was asked for."""
    _, app = build_studio(StudioOptions(sets=[set_path], root=set_path.parent), 8765)
    asked = 0
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/judge/rater",
        "raw_path": b"/judge/rater",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8765"),
            *((key.encode(), value.encode()) for key, value in headers.items()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    asyncio.run(app(scope, receive, send))
    return status, asked


FORM = "application/x-www-form-urlencoded"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"origin": "http://evil.example", "content-type": FORM}, 403),
        ({"sec-fetch-site": "cross-site", "content-type": FORM}, 403),
        ({"referer": "http://evil.example/x", "content-type": FORM}, 403),
        ({"content-type": FORM, "content-length": str(10**9)}, 413),
        ({"content-type": "text/plain", "content-length": "5"}, 415),
        ({"content-type": FORM, "content-length": "many"}, 400),
    ],
)
def test_a_refused_request_is_refused_before_its_body_is_read(
    set_path: Path, headers: dict[str, str], status: int
) -> None:
    answer, asked = asgi_post(set_path, headers, b"rater=x")
    assert answer == status
    assert asked == 0  # not a byte of it was read, let alone written to disk


def test_a_body_sent_in_chunks_stops_at_the_bound(set_path: Path) -> None:
    studio, app = build_studio(StudioOptions(sets=[set_path], root=set_path.parent), 8765)
    studio.guard.max_body = 64 * 1024  # lowered, so that the test sends little
    client = TestClient(app, base_url=BASE)
    csrf = hidden(client.get("/sets/1/edit/lookup-1").text)["csrf"]
    before = set_path.read_bytes()

    def chunks():
        yield f"csrf={csrf}&rater=".encode()
        for _ in range(100):
            yield b"x" * 4096

    answer = client.post("/judge/rater", content=chunks(), headers={"content-type": FORM})
    assert answer.status_code == 413
    assert set_path.read_bytes() == before


def test_a_form_with_a_file_is_refused(set_path: Path) -> None:
    client = client_for(set_path)
    csrf = hidden(client.get("/sets/1/edit/lookup-1").text)["csrf"]
    answer = client.post(
        "/judge/rater",
        data={"csrf": csrf, "rater": "ann"},
        files={"upload": ("big.bin", b"\0" * 100_000, "application/octet-stream")},
    )
    assert answer.status_code == 400


def test_the_editors_live_check_still_sends_its_form(set_path: Path) -> None:
    """The page's script sends the editor as multipart FormData: that is a form too."""
    client = client_for(set_path)
    fields = editor(client, "lookup-1")
    answer = client.post(
        "/sets/1/check/lookup-1",
        headers={"content-type": "multipart/form-data; boundary=b"},
        content=(
            b'--b\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n'
            + fields["csrf"].encode()
            + b'\r\n--b\r\nContent-Disposition: form-data; name="f.metadata.case.oracleType"'
            b"\r\n\r\n../../evil\r\n--b--\r\n"
        ),
    )
    assert answer.status_code == 200
    assert "is not a value of" in answer.text
