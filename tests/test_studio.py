"""Blueprint Studio through its HTTP interface (Starlette's test client): pages, the guard,
saves that write what blueprint edit writes, conflicts, promote and accept, and labelling."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from blueprint.cli import app as cli_app
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.reports.judging import read_labels
from blueprint.studio.server import StudioOptions, build_studio
from curation_sets import rows_of
from studio_sets import FAMILIES as STUDIO_FAMILIES
from studio_sets import JUDGED, judge_label, judge_results, studio_rows, studio_set

runner = CliRunner()
BASE = "http://127.0.0.1:8765"


def client_for(*sets: Path, host: str = "127.0.0.1", **options) -> TestClient:
    _, app = build_studio(
        StudioOptions(sets=list(sets), host=host, root=sets[0].parent, **options), 8765
    )
    return TestClient(app, base_url=BASE)


def form_fields(html: str) -> dict[str, str]:
    """The hidden fields of the first form on a page that has them (csrf, version)."""
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))


def edit_form(client: TestClient, row_id: str) -> dict[str, str]:
    page = client.get(f"/sets/1/edit/{row_id}")
    assert page.status_code == 200
    fields = form_fields(page.text)
    return {"csrf": fields["csrf"], "version": fields["version"]}


class EditorForm(HTMLParser):
    """What a browser would send for the editor form of a page, as it is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {key: value or "" for key, value in attrs}
        name = found.get("name")
        if tag == "input" and name and found.get("type") != "submit":
            self.values[name] = found.get("value", "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.values[name] = ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in found:
            self.values[self._select] = found.get("value", "")

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self.values[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self._textarea is not None:
            text = self.values[self._textarea]
            # a newline right after the tag is not part of the value
            self.values[self._textarea] = text[1:] if text.startswith("\n") else text
            self._textarea = None
        elif tag == "select":
            self._select = None


def page_form(html: str) -> dict[str, str]:
    parser = EditorForm()
    parser.feed(html)
    return parser.values


def write_set(path: Path) -> Path:
    header = {
        "schemaVersion": "blueprint.eval-set/v1",
        "name": "studio-set",
        "caseFamilies": STUDIO_FAMILIES,
    }
    REGISTRY[path.suffix.lstrip(".")].write(
        header, iter(studio_rows()), path, WriteOptions(force=True)
    )
    return path


@pytest.fixture
def set_path(tmp_path: Path) -> Path:
    return studio_set(tmp_path)


def test_every_page_renders(set_path: Path) -> None:
    client = client_for(set_path)
    for url in [
        "/",
        "/sets/1",
        "/sets/1/rows",
        "/sets/1/rows?oracle=rubric&page=2",
        "/sets/1/rows/lookup-1",
        "/sets/1/edit/lookup-1",
        "/queues/starter",
        "/queues/derived",
        "/queues/behavior",
        "/queues/expertise",
        "/judge",
    ]:
        page = client.get(url)
        assert page.status_code == 200, url
        assert page.headers["content-security-policy"].startswith("default-src 'self'")
    assert client.get("/sets/9").status_code == 404
    assert client.get("/sets/1/rows/no-such-row").status_code == 404
    assert client.get("/queues/nope").status_code == 404


def test_filters_choose_the_rows(set_path: Path) -> None:
    client = client_for(set_path)

    def listed(query: str) -> set[str]:
        page = client.get(f"/sets/1/rows?{query}").text
        return set(re.findall(r'href="/sets/1/rows/([^"?/]+)\?', page))

    assert listed("provenance=starter-example") == {"starter-1"}
    assert listed("oracle=expected-behavior-only") == {"behaviour-1"}
    assert listed("family=lookup&q=hostile") == {"hostile-1"}
    assert len(listed("evaluator=llm-judge")) == 30  # the family's evaluator counts
    assert listed("evaluator=llm-judge&page=1") == listed("evaluator=llm-judge")
    # rows with findings: the imported row's derived value, the behaviour row's missing review
    flagged = listed("code=derived-value")
    assert flagged == {"imported-1"}


def test_rows_show_their_findings_inline(tmp_path: Path) -> None:
    path = studio_set(tmp_path)
    data = json.loads(path.read_text())
    data["rows"][0]["metadata"]["case"]["evaluator"] = "llm-judge"  # barred for this family
    path.write_text(json.dumps(data))
    client = client_for(path)
    page = client.get("/sets/1/rows?code=any").text
    assert "case-family-mismatch" in page
    validated = runner.invoke(cli_app, ["validate", str(path), "--report", "json"])
    codes = {
        issue["code"]
        for issue in json.loads(validated.stdout)["issues"]
        if issue["rowId"] == "lookup-1"
    }
    row_page = client.get("/sets/1/rows/lookup-1").text
    assert codes and all(code in row_page for code in codes)


def test_hostile_strings_stay_text(set_path: Path) -> None:
    client = client_for(set_path)
    for url in ["/sets/1/rows", "/sets/1/rows/hostile-1", "/sets/1/edit/hostile-1"]:
        page = client.get(url).text
        assert "<script>alert" not in page and "<img src=x" not in page, url
        assert "&lt;script&gt;" in page, url
        assert "49" not in re.sub(r"\d{3,}", "", page) or "{{ 7*7 }}" in page


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_a_save_writes_the_bytes_blueprint_edit_writes(tmp_path: Path, suffix: str) -> None:
    studio_file = write_set(tmp_path / f"studio{suffix}")
    (tmp_path / "cli").mkdir()
    cli_file = tmp_path / "cli" / studio_file.name
    for path in [studio_file, *tmp_path.glob("studio*.set.json")]:
        shutil.copy(path, tmp_path / "cli" / path.name)
    client = client_for(studio_file)
    form = edit_form(client, "lookup-1")
    saved = client.post(
        "/sets/1/edit/lookup-1",
        data={
            **form,
            "action": "save",
            "f.input": "How long do I have?\r\nFor shoes, please.",
            "k.input": "text",
            "f.metadata.case.scenario": "A shopper asks before buying",
            "f.metadata.case.linkedConcerns": "policy-drift\n\nrefund-window\n",
            "f.expected": '{"days": 30}',
            "k.expected": "json",
        },
        follow_redirects=False,
    )
    assert saved.status_code == 303, saved.text
    done = runner.invoke(
        cli_app,
        [
            "edit",
            str(cli_file),
            "lookup-1",
            "--text",
            "input=How long do I have?\nFor shoes, please.",
            "--set",
            'expected={"days": 30}',
            "--text",
            "metadata.case.scenario=A shopper asks before buying",
            "--set",
            'metadata.case.linkedConcerns=["policy-drift", "refund-window"]',
        ],
    )
    assert done.exit_code == 0, done.output
    assert studio_file.read_bytes() == cli_file.read_bytes()


def test_two_saves_from_one_version_one_wins_and_nothing_is_lost(set_path: Path) -> None:
    first = client_for(set_path)
    second = TestClient(first.app, base_url=BASE)  # another tab of the same studio
    form = edit_form(first, "lookup-1")
    won = first.post(
        "/sets/1/edit/lookup-1",
        data={**form, "action": "save", "f.metadata.case.scenario": "first"},
        follow_redirects=False,
    )
    assert won.status_code == 303
    lost = second.post(
        "/sets/1/edit/lookup-1",
        data={**form, "action": "save", "f.metadata.case.scenario": "second person's text"},
        follow_redirects=False,
    )
    assert lost.status_code == 409
    assert "second person&#39;s text" in lost.text  # what they typed is still on the page
    assert rows_of(set_path)["lookup-1"]["metadata"]["case"]["scenario"] == "first"


def test_saving_again_after_a_conflict_keeps_the_other_change(set_path: Path) -> None:
    client = client_for(set_path)
    mine = page_form(client.get("/sets/1/edit/lookup-1").text)
    theirs = page_form(client.get("/sets/1/edit/lookup-1").text)
    theirs.update({"action": "save", "f.metadata.case.scenario": "their scenario"})
    assert (
        client.post("/sets/1/edit/lookup-1", data=theirs, follow_redirects=False).status_code == 303
    )
    mine.update({"action": "save", "f.metadata.case.actor": "my actor"})
    refused = client.post("/sets/1/edit/lookup-1", data=mine, follow_redirects=False)
    assert refused.status_code == 409
    again = page_form(refused.text)
    assert again["f.metadata.case.scenario"] == "their scenario"  # shown as it is now
    assert again["f.metadata.case.actor"] == "my actor"  # with what I typed
    again["action"] = "save"
    saved = client.post("/sets/1/edit/lookup-1", data=again, follow_redirects=False)
    assert saved.status_code == 303
    case = rows_of(set_path)["lookup-1"]["metadata"]["case"]
    assert (case["scenario"], case["actor"]) == ("their scenario", "my actor")


def test_saving_an_untouched_editor_writes_nothing(set_path: Path) -> None:
    client = client_for(set_path)
    before = set_path.read_bytes()
    form = page_form(client.get("/sets/1/edit/multiline-1").text)
    form["action"] = "save"
    saved = client.post("/sets/1/edit/multiline-1", data=form, follow_redirects=False)
    assert saved.status_code == 303 and "done=unchanged" in saved.headers["location"]
    assert set_path.read_bytes() == before


def test_a_change_on_disk_makes_the_page_stale(set_path: Path) -> None:
    client = client_for(set_path)
    form = edit_form(client, "lookup-1")
    assert (
        runner.invoke(
            cli_app, ["edit", str(set_path), "lookup-1", "--text", "input=changed"]
        ).exit_code
        == 0
    )
    before = set_path.read_bytes()
    stale = client.post(
        "/sets/1/edit/lookup-1",
        data={**form, "action": "save", "f.metadata.case.scenario": "mine"},
        follow_redirects=False,
    )
    assert stale.status_code == 409
    assert "changed" in stale.text  # the current version is shown
    assert set_path.read_bytes() == before
    # an edit of another row is not held up by that change
    other = edit_form(client, "starter-1")
    assert (
        client.post(
            "/sets/1/edit/starter-1",
            data={**other, "action": "save", "f.metadata.case.scenario": "fine"},
            follow_redirects=False,
        ).status_code
        == 303
    )


def test_what_cannot_be_read_is_not_saved(set_path: Path) -> None:
    client = client_for(set_path)
    before = set_path.read_bytes()
    form = edit_form(client, "lookup-1")
    bad = client.post(
        "/sets/1/edit/lookup-1",
        data={**form, "action": "save", "f.expected": "{not json", "k.expected": "json"},
    )
    assert bad.status_code == 422
    assert set_path.read_bytes() == before


def test_a_check_shows_the_validators_findings_and_the_diff(set_path: Path) -> None:
    client = client_for(set_path)
    form = edit_form(client, "lookup-1")
    checked = client.post(
        "/sets/1/check/lookup-1",
        data={
            **form,
            "f.metadata.case.evaluator": "human-expert",
            "f.metadata.case.oracleType": "reference-answer",
        },
    )
    assert checked.status_code == 200
    assert "case-family-mismatch" in checked.text
    assert "human-expert" in checked.text  # in the diff
    assert "not in a git repository" in checked.text


def test_forms_need_the_token_and_the_studios_origin(set_path: Path) -> None:
    client = client_for(set_path)
    form = edit_form(client, "lookup-1")
    data = {**form, "action": "save", "f.metadata.case.scenario": "x"}
    before = set_path.read_bytes()
    assert client.post("/sets/1/edit/lookup-1", data={**data, "csrf": "guess"}).status_code == 403
    without = {key: value for key, value in data.items() if key != "csrf"}
    assert client.post("/sets/1/edit/lookup-1", data=without).status_code == 403
    for headers in (
        {"origin": "http://evil.example"},
        {"referer": "http://evil.example/page"},
        {"sec-fetch-site": "cross-site"},
        {"origin": "null"},
    ):
        refused = client.post("/sets/1/edit/lookup-1", data=data, headers=headers)
        assert refused.status_code == 403, headers
    assert set_path.read_bytes() == before
    # a name that resolves here but is not the studio's (DNS rebinding)
    rebound = TestClient(client.app, base_url="http://attacker.example:8765")
    assert rebound.get("/").status_code == 421
    assert TestClient(client.app, base_url="http://localhost:8765").get("/").status_code == 200


def test_beyond_loopback_every_request_needs_the_token(set_path: Path) -> None:
    studio, app = build_studio(StudioOptions(sets=[set_path], host="0.0.0.0"), 8765)
    token = studio.guard.token
    assert token
    client = TestClient(app, base_url="http://192.0.2.7:8765")
    assert client.get("/").status_code == 401
    assert client.get("/sets/1/rows").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    entered = client.get(f"/sets/1?token={token}", follow_redirects=False)
    assert entered.status_code == 303 and "token" not in entered.headers["location"]
    assert client.get("/sets/1").status_code == 200  # the cookie carries it now
    stranger = TestClient(app, base_url="http://192.0.2.7:8765")
    assert stranger.post("/sets/1/edit/lookup-1", data={"action": "save"}).status_code == 401


def test_promoting_a_row_of_a_csv_set_that_gains_a_column_says_every_line_changed(
    tmp_path: Path,
) -> None:
    rows = studio_rows()
    for data in rows:  # no row holds case.extensions, so the file has no such column yet
        data["metadata"]["case"].pop("extensions", None)
    target = tmp_path / "studio.csv"
    header = {"schemaVersion": "blueprint.eval-set/v1", "name": "studio-set"}
    REGISTRY["csv"].write(
        {**header, "caseFamilies": STUDIO_FAMILIES}, iter(rows), target, WriteOptions()
    )
    assert "case.extensions" not in target.read_text(encoding="utf-8").splitlines()[0]
    client = client_for(target)
    fields = form_fields(client.get("/sets/1/rows/starter-1").text)
    done = client.post(
        "/sets/1/review/promote/starter-1",
        data={
            "csrf": fields["csrf"],
            "version": fields["version"],
            "reviewer": "Dr. Rivera",
            "provenance": "expert-authored",
        },
        follow_redirects=False,
    )
    assert done.status_code == 303 and "done=promoted-new-column" in done.headers["location"]
    shown = client.get(done.headers["location"]).text
    assert "every line of it changed once" in shown


def test_promote_records_the_reviewer_as_the_command_does(set_path: Path) -> None:
    client = client_for(set_path)
    page = client.get("/sets/1/rows/starter-1").text
    fields = form_fields(page)
    done = client.post(
        "/sets/1/review/promote/starter-1",
        data={
            "csrf": fields["csrf"],
            "version": fields["version"],
            "reviewer": "Dr. Rivera",
            "provenance": "expert-authored",
        },
        follow_redirects=False,
    )
    assert done.status_code == 303
    case = rows_of(set_path)["starter-1"]["metadata"]["case"]
    review = case["extensions"]["blueprint-review"]
    assert case["provenance"] == "expert-authored"
    assert review["reviewer"] == "Dr. Rivera"
    assert review["previousProvenance"] == "starter-example"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", review["reviewedAt"])
    assert "starter-1" not in client.get("/queues/starter").text
    # the page it was promoted from is stale now
    again = client.post(
        "/sets/1/review/promote/starter-1",
        data={"csrf": fields["csrf"], "version": fields["version"], "reviewer": "x"},
    )
    assert again.status_code == 409


def test_accept_confirms_derived_values(set_path: Path) -> None:
    client = client_for(set_path)
    fields = form_fields(client.get("/sets/1/rows/imported-1").text)
    done = client.post("/sets/1/review/accept/imported-1", data=fields, follow_redirects=False)
    assert done.status_code == 303
    extensions = rows_of(set_path)["imported-1"]["metadata"]["case"]["extensions"]
    assert "derived" not in extensions["blueprint-import"]
    assert "imported-1" not in client.get("/queues/derived").text


def test_queues_hold_what_waits_for_a_person(set_path: Path) -> None:
    client = client_for(set_path)

    def queued(name: str) -> set[str]:
        return set(
            re.findall(r'href="/sets/1/rows/([^"?/]+)\?queue=', client.get(f"/queues/{name}").text)
        )

    assert queued("starter") == {"starter-1"}
    assert queued("derived") == {"imported-1"}
    assert queued("behavior") == {"behaviour-1"}
    assert queued("expertise") == {"behaviour-1"}


def test_a_vendor_file_is_served_read_only(tmp_path: Path) -> None:
    source = studio_set(tmp_path)
    exported = tmp_path / "tests.jsonl"
    assert runner.invoke(
        cli_app, ["convert", str(source), str(exported), "--to", "deepeval"]
    ).exit_code in (0, 1)
    client = client_for(exported)
    assert client.get("/sets/1").status_code == 200
    assert "read only" in client.get("/").text


def label_all(client: TestClient, *, disagree: int = 0) -> None:
    fields = form_fields(client.get("/judge").text)
    client.post("/judge/rater", data={"csrf": fields["csrf"], "rater": "alice"})
    for number in range(1, JUDGED + 1):
        label = judge_label(number)
        if number <= disagree:
            label = "pass" if label == "fail" else "fail"
        done = client.post(
            "/judge/label",
            data={"csrf": fields["csrf"], "case": f"tone-{number:02d}", "label": label},
            follow_redirects=False,
        )
        assert done.status_code == 303


def test_labelling_writes_the_labels_judge_report_reads(set_path: Path) -> None:
    results = judge_results(set_path.parent)
    client = client_for(set_path, judge_results=results)
    page = client.get("/judge").text
    assert "Start labelling" in page
    label_all(client, disagree=1)
    labels = set_path.parent / "judged.labels.csv"
    read = read_labels(labels)
    assert read.raters == ("alice",) and len(read.cases) == JUDGED
    page = client.get("/judge").text
    assert 'class="verdict pass"' in page
    made = runner.invoke(
        cli_app, ["judge-report", str(labels), "--set", str(set_path), "--report", "json"]
    )
    assert made.exit_code == 0
    family = json.loads(made.stdout)["families"][0]
    assert f"{family['agreement']['value']:.3f}" in page
    assert f"{family['kappa']['value']:.3f}" in page


def test_the_judge_label_is_hidden_until_asked_for(set_path: Path) -> None:
    client = client_for(set_path, judge_results=judge_results(set_path.parent))
    fields = form_fields(client.get("/judge").text)
    client.post("/judge/rater", data={"csrf": fields["csrf"], "rater": "bob"})
    hidden = client.get("/judge?case=tone-02").text
    assert "The judge said" not in hidden
    assert "The judge said <strong>pass</strong>" in client.get("/judge?case=tone-02&reveal=1").text


def test_writing_the_report_points_the_set_at_it(set_path: Path) -> None:
    client = client_for(set_path, judge_results=judge_results(set_path.parent))
    label_all(client)
    fields = form_fields(client.get("/judge").text)
    outside = client.post(
        "/judge/report",
        data={"csrf": fields["csrf"], "output": "/tmp/../etc/x.json", "point": "yes"},
    )
    assert outside.status_code == 422
    written = client.post(
        "/judge/report",
        data={"csrf": fields["csrf"], "output": "studio.judge.json", "point": "yes"},
        follow_redirects=False,
    )
    assert written.status_code == 303
    report = json.loads((set_path.parent / "studio.judge.json").read_text())
    assert report["verdict"] == "pass"
    validated = runner.invoke(cli_app, ["validate", str(set_path), "--report", "json"])
    codes = {issue["code"] for issue in json.loads(validated.stdout)["issues"]}
    assert "judge-validated" in codes and "conditional-evaluator" not in codes
    again = client.post(
        "/judge/report",
        data={"csrf": fields["csrf"], "output": "studio.judge.json", "point": "yes"},
    )
    assert again.status_code == 409  # it exists: replacing it needs the box ticked


def test_labels_are_taken_up_again(set_path: Path) -> None:
    results = judge_results(set_path.parent)
    label_all(client_for(set_path, judge_results=results))
    client = client_for(set_path, judge_results=results)
    fields = form_fields(client.get("/judge").text)
    client.post("/judge/rater", data={"csrf": fields["csrf"], "rater": "alice"})
    assert "alice has labelled 30 of 30" in client.get("/judge").text


def test_labelling_a_promptfoo_results_file(tmp_path: Path) -> None:
    from conftest import FIXTURES, document, row, write_json

    results = FIXTURES / "results" / "promptfoo-judged" / "results.json"
    rows = [
        row(f"tone-0{n}", "rubric", evaluator="llm-judge", evaluationCriteria=["kind"])
        for n in (1, 2, 3)
    ]
    path = write_json(tmp_path / "judged.json", document(*rows))
    client = client_for(path, judge_results=results, labels=tmp_path / "labels.csv")
    fields = form_fields(client.get("/judge").text)
    client.post("/judge/rater", data={"csrf": fields["csrf"], "rater": "alice"})
    page = client.get("/judge?case=tone-02&reveal=1").text
    assert "Please read the policy." in page and "The judge said <strong>fail</strong>" in page


def test_a_set_that_cannot_be_read_is_shown_with_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"schemaVersion": "blueprint.eval-set/v1", "rows": [', encoding="utf-8")
    client = client_for(broken)
    home = client.get("/")
    assert home.status_code == 200 and "broken.json" in home.text
    page = client.get("/sets/1")
    assert page.status_code == 200 and 'role="alert"' in page.text
    # fixed on disk: read again at the next page
    studio_set(tmp_path, "broken.json")
    assert "lookup-1" in client.get("/sets/1/rows").text


def test_rows_that_share_an_id_are_listed_but_not_edited(tmp_path: Path) -> None:
    path = studio_set(tmp_path)
    data = json.loads(path.read_text())
    data["rows"][1]["id"] = "lookup-1"
    path.write_text(json.dumps(data))
    client = client_for(path)
    assert "duplicate-id" in client.get("/sets/1/rows?code=duplicate-id").text
    assert client.get("/sets/1/edit/lookup-1").status_code == 404


def test_the_live_check_settles_judge_conditions_as_validate_does(tmp_path: Path) -> None:
    from conftest import EXAMPLES

    for name in ("support-judged.json", "support-judged.judge.json"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    set_path = tmp_path / "support-judged.json"
    client = client_for(set_path)
    row_page = client.get("/sets/1/rows/policy-01").text
    assert "judge-validated" in row_page
    form = page_form(client.get("/sets/1/edit/policy-01").text)
    unchanged = client.post("/sets/1/check/policy-01", data=form).text
    assert "judge-validated" in unchanged and "conditional-evaluator" not in unchanged
    form["f.metadata.case.scenario"] = "a change to a labelled row"
    edited = client.post("/sets/1/check/policy-01", data=form).text
    assert "judge-report-stale" in edited  # as validate would say once it is saved


def test_names_beyond_latin_1_are_kept(set_path: Path) -> None:
    client = client_for(set_path, judge_results=judge_results(set_path.parent))
    fields = form_fields(client.get("/sets/1/rows/starter-1").text)
    promoted = client.post(
        "/sets/1/review/promote/starter-1",
        data={"csrf": fields["csrf"], "version": fields["version"], "reviewer": "李明"},
        follow_redirects=False,
    )
    assert promoted.status_code == 303
    case = rows_of(set_path)["starter-1"]["metadata"]["case"]
    assert case["extensions"]["blueprint-review"]["reviewer"] == "李明"
    assert 'value="李明"' in client.get("/sets/1/rows/imported-1").text  # remembered
    client.post("/judge/rater", data={"csrf": fields["csrf"], "rater": "Zoë 李"})
    assert "Zoë 李 has labelled 0" in client.get("/judge").text


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/judge/label", {"case": "tone-01", "label": "²"}),
        ("/judge/label", {"case": "tone-01", "label": "--1"}),
        ("/judge/label", {"case": "tone-01", "label": "maybe"}),
        ("/judge/rater", {"rater": "judge"}),
        ("/judge/rater", {"rater": "a,b"}),
        ("/judge/report", {"output": "bad\x00name.json"}),
        ("/judge/report", {"output": "x" * 300 + ".json"}),
        ("/judge/report", {"output": "studio.json", "force": "yes"}),  # the set itself
        ("/judge/report", {"output": "judged.csv"}),
        ("/sets/1/review/delete/lookup-1", {}),
    ],
)
def test_hostile_forms_are_refused_with_a_page(set_path: Path, url: str, data: dict) -> None:
    client = client_for(set_path, judge_results=judge_results(set_path.parent))
    fields = form_fields(client.get("/judge").text)
    client.post("/judge/rater", data={"csrf": fields["csrf"], "rater": "ann"})
    before = set_path.read_bytes()
    answer = client.post(url, data={"csrf": fields["csrf"], **data})
    assert 400 <= answer.status_code < 500, answer.text
    assert set_path.read_bytes() == before


def test_another_loopback_address_and_port_80_are_answered(set_path: Path) -> None:
    _, app = build_studio(StudioOptions(sets=[set_path], host="127.0.0.2"), 80)
    assert TestClient(app, base_url="http://127.0.0.2").get("/").status_code == 200
    assert TestClient(app, base_url="http://127.0.0.1:80").get("/").status_code == 200
    assert TestClient(app, base_url="http://evil.example").get("/").status_code == 421


def test_the_token_cookie_survives_a_link_from_another_page(set_path: Path) -> None:
    studio, app = build_studio(StudioOptions(sets=[set_path], host="0.0.0.0"), 8765)
    client = TestClient(app, base_url="http://192.0.2.7:8765")
    entered = client.get(f"/?token={studio.guard.token}", follow_redirects=False)
    cookie = entered.headers["set-cookie"].lower()
    assert "samesite=lax" in cookie and "httponly" in cookie


def test_the_set_page_shows_each_familys_detectable_change(set_path: Path) -> None:
    from blueprint.reports.power import power_table
    from blueprint.reports.summary import summarize

    page = client_for(set_path).get("/sets/1").text
    assert "Detectable change" in page
    expected = {family.change_label for family in summarize(set_path).power.families}
    assert expected and all(label in page for label in expected)
    assert power_table([("f", 400, 400)]).families[0].change_label == "0.098"
