"""blueprint.reports.render: a self-contained, escaped, accessible page, and its Markdown twin."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from blueprint.core.errors import OutputExistsError, UsageError
from blueprint.reports.render import render_html, render_markdown, write_page
from blueprint.reports.summary import SummaryOptions, summarize
from conftest import EXAMPLES, document, row, write_json


def page_of(path: Path, **options: object) -> str:
    return render_html(summarize(path, SummaryOptions(exports=False, **options)))  # type: ignore[arg-type]


def hostile_set(folder: Path) -> Path:
    data = row("<script>alert('id')</script>", provenance="starter-example")
    data["metadata"]["case"]["caseId"] = data["id"]
    data["input"] = "<script>alert(1)</script> | *bold* [link](http://x)"
    return write_json(folder / "set.json", document(data, name="<b>name</b>"))


def test_markup_in_the_set_is_text(tmp_path: Path) -> None:
    html = page_of(hostile_set(tmp_path))
    assert "<script>" not in html and "<b>name" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_page_is_self_contained_and_accessible() -> None:
    html = render_html(summarize(EXAMPLES / "support-refunds.json"))
    assert '<html lang="en">' in html and 'name="viewport"' in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<link" not in html and "<script" not in html and "@import" not in html
    assert "<main" in html and "<nav" in html and "<header" in html
    levels = [int(level) for level in re.findall(r"<h([1-6])", html)]
    assert levels[0] == 1 and all(b - a <= 1 for a, b in itertools.pairwise(levels))
    assert html.count("<table") == html.count("<caption")
    assert '<th scope="col"' in html and '<th scope="row"' in html
    assert '<span class="muted">(none)</span>' in html  # the rows with no split


def test_starter_rows_carry_a_badge_and_words(tmp_path: Path) -> None:
    rows = [row("s1", provenance="starter-example"), row("g1")]
    path = write_json(tmp_path / "set.json", document(*rows))
    html = page_of(path)
    starter_row = html[html.index('<tr class="starter">') :]
    starter_row = starter_row[: starter_row.index("</tr>")]
    assert "s1" in starter_row and "Example" in starter_row and "not validated gold" in starter_row
    assert html.count('<tr class="starter">') == 1
    assert "not validated gold" in render_markdown(summarize(path, SummaryOptions(exports=False)))


def test_a_long_family_is_capped_and_says_so(tmp_path: Path) -> None:
    header = {"caseFamilies": [{"id": "f", "oracleType": "reference-answer"}]}
    path = write_json(
        tmp_path / "set.json", document(*[row(f"r{i}", caseFamily="f") for i in range(5)], **header)
    )
    html = page_of(path, rows_per_family=2)
    assert "the first 2 of 5" in html
    assert "r1" in html and ">r2<" not in html


def test_markdown_escapes_what_markdown_acts_on(tmp_path: Path) -> None:
    text = render_markdown(summarize(hostile_set(tmp_path), SummaryOptions(exports=False)))
    assert "<script>" not in text
    assert r"\<script\>alert(1)\</script\> \| \*bold\* \[link\](http://x)" in text


def test_written_atomically_never_over_a_file_without_force(tmp_path: Path) -> None:
    summary = summarize(EXAMPLES / "support-refunds.json", SummaryOptions(exports=False))
    target = tmp_path / "b.html"
    assert write_page(summary, target) == "html"
    target.write_text("mine", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        write_page(summary, target)
    assert target.read_text(encoding="utf-8") == "mine"
    assert write_page(summary, target, force=True) == "html"
    assert target.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert write_page(summary, tmp_path / "b.md") == "markdown"
    with pytest.raises(UsageError):
        write_page(summary, tmp_path / "b.pdf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.html", "b.md"]
