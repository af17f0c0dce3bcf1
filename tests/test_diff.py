"""blueprint diff: rows matched by id, types kept apart, set-level fields when both carry them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from blueprint.diff import ABSENT, diff_files, value_changes
from blueprint.formats import REGISTRY, WriteOptions
from conftest import document, row, write_json


def test_identical_sets(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", document(row("x"), row("y")))
    assert diff_files(a, a).identical


def test_added_removed_changed(tmp_path: Path) -> None:
    changed = row("y", scenario="new")
    a = write_json(tmp_path / "a.json", document(row("x"), row("y")))
    b = write_json(tmp_path / "b.json", document(changed, row("z")))
    result = diff_files(a, b)
    assert result.removed == ["x"]
    assert result.added == ["z"]
    assert [(c.id, c.paths) for c in result.changed] == [("y", ["$.metadata.case.scenario"])]
    assert not result.identical


def test_types_are_kept_apart(tmp_path: Path) -> None:
    for before, after in [("1", 1), (1, 1.0), (1, True), (None, ""), ([1], [1, 1])]:
        assert value_changes({"v": before}, {"v": after}), (before, after)
    assert value_changes({"a": 1, "b": 2}, {"b": 2, "a": 1}) == []


def test_absent_versus_null() -> None:
    (change,) = value_changes({"a": 1}, {"a": 1, "b": None})
    assert (change.path, change.kind, change.before) == ("$.b", "added", ABSENT)


def test_set_level_fields(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", document(row("x"), version="1"))
    b = write_json(tmp_path / "b.json", document(row("x"), version="2", description="d"))
    result = diff_files(a, b)
    assert [(c.path, c.kind) for c in result.header] == [
        ("$.version", "changed"),
        ("$.description", "added"),
    ]


def test_across_formats_and_without_a_set_file(tmp_path: Path) -> None:
    doc = document(row("x"), row("y"))
    a = write_json(tmp_path / "a.json", doc)
    csv_path = tmp_path / "b.csv"
    REGISTRY["csv"].write(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "other"},
        iter(doc["rows"]),
        csv_path,
        WriteOptions(),
    )
    result = diff_files(a, csv_path)
    assert [c.path for c in result.header] == ["$.name"]
    (tmp_path / "b.csv.set.json").unlink()
    result = diff_files(a, csv_path)
    assert result.identical
    assert any("not compared" in note for note in result.not_compared)


def test_order_change_is_reported(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", document(row("x"), row("y")))
    b = write_json(tmp_path / "b.json", document(row("y"), row("x")))
    result = diff_files(a, b)
    assert result.order_changed and not result.changed and not result.identical


def test_rows_without_usable_ids_match_by_position(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", document(row("x"), row("x"), {"input": 1}))
    result = diff_files(a, a)
    assert result.identical
    assert result.not_compared


def test_positional_keys_never_collide_with_real_ids(tmp_path: Path) -> None:
    left = write_json(tmp_path / "a.json", document({"id": "#1", "v": "LEFT"}, {"v": "no id"}))
    right = write_json(tmp_path / "b.json", document({"id": "#1", "v": "RIGHT"}, {"v": "no id"}))
    result = diff_files(left, right)
    assert [c.id for c in result.changed] == ["#1"]


def test_repeated_ids_match_by_occurrence(tmp_path: Path) -> None:
    a1, a2, b = {"id": "a", "v": 1}, {"id": "a", "v": 2}, {"id": "b"}
    left = write_json(tmp_path / "l.json", document(a1, a2, b))
    right = write_json(tmp_path / "r.json", document(a1, b, a2))
    result = diff_files(left, right)
    assert not result.changed and not result.added and not result.removed
    assert result.order_changed


def test_structurally_broken_documents_are_refused(tmp_path: Path) -> None:
    import pytest

    from blueprint.core.errors import ParseError

    broken = tmp_path / "x.json"
    broken.write_text('{"name": "x", "rows": "oops"}', encoding="utf-8")
    with pytest.raises(ParseError):
        diff_files(broken, broken)


def test_case_families_are_compared_by_id(tmp_path) -> None:
    import json as jsonlib

    from blueprint.diff import diff_files
    from conftest import EXAMPLES

    data = jsonlib.loads((EXAMPLES / "support-refunds.json").read_text(encoding="utf-8"))
    families = data["caseFamilies"]
    assert len(families) >= 3
    before = tmp_path / "before.json"
    before.write_text(jsonlib.dumps(data), encoding="utf-8")
    first = families.pop(0)
    families[0]["title"] = "Renamed"
    data["rows"] = [
        r for r in data["rows"] if r["metadata"]["case"].get("caseFamily") != first["id"]
    ]
    after = tmp_path / "after.json"
    after.write_text(jsonlib.dumps(data), encoding="utf-8")
    header = {(c.path, c.kind) for c in diff_files(before, after).header}
    assert header == {
        (f"$.caseFamilies['{first['id']}']", "removed"),
        (f"$.caseFamilies['{families[0]['id']}'].title", "changed"),
    }
    families.reverse()
    after.write_text(jsonlib.dumps(data), encoding="utf-8")
    kinds = {c.kind for c in diff_files(before, after).header}
    assert "reordered" in kinds


def test_comparing_values_leaves_the_dataframe_libraries_unimported() -> None:
    # deepdiff would import pandas (some 70 MiB) for dataframes a JSON value never is; it is
    # imported without, and pandas still imports afterwards for whoever wants it
    script = (
        "import sys\n"
        "from blueprint.diff import value_changes\n"
        "changes = value_changes({'a': [1, {'b': 2}]}, {'a': [1, {'b': 3}], 'c': 4})\n"
        "print(sorted((change.path, change.kind) for change in changes))\n"
        "print('pandas' in sys.modules, 'deepdiff' in sys.modules)\n"
        "import pandas\n"
        "print(pandas.DataFrame({'x': [1]}).shape)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "[('$.a[1].b', 'changed'), ('$.c', 'added')]"
    assert lines[1:] == ["False True", "(1, 1)"]
