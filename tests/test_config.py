"""The project configuration: where it is found, what it accepts, and how settings resolve."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprint.formats.base import ReadOptions, reading_with
from blueprint.project.config import ConfigError, find_config, load_project, read_config
from blueprint.validation.stream import resolve_codes


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_found_in_a_parent_folder_pyproject(tmp_path: Path) -> None:
    config = write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[tool.blueprint]\n')
    nested = tmp_path / "evals" / "deep"
    nested.mkdir(parents=True)
    assert find_config(nested) == config.resolve()


def test_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    inner = write(tmp_path / "inner" / "pyproject.toml", "[tool.blueprint]\ninclude = []\n")
    assert find_config(tmp_path) != inner.resolve()  # a folder below is never looked in
    assert find_config(inner.parent) == inner.resolve()


def test_blueprint_toml_wins_in_its_folder(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.blueprint]\n")
    own = write(tmp_path / "blueprint.toml", "")
    assert find_config(tmp_path) == own.resolve()


def test_no_configuration_gives_defaults(tmp_path: Path) -> None:
    project = load_project(start=tmp_path)
    assert project.path is None
    settings = project.settings_for(tmp_path / "a.json")
    assert settings.canonical_roundtrip is True
    assert settings.roundtrip == ()
    assert settings.max_starter_rows is None


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ('include = ["a.json"]\nrountrip = ["csv"]\n', 2, "rountrip"),
        ('include = ["a.json"]\n\n[[set]]\npath = "a.json"\nformt = "csv"\n', 5, "set.0.formt"),
        ('max-starter-rows = "3"\n', 1, "max-starter-rows"),
        ('roundtrip = ["promptfu"]\n', 1, "roundtrip"),
        ('ignore = ["no-such-code"]\n', 1, "ignore"),
        ('[per-family-ignore]\npolicy = ["nope"]\n', 2, "per-family-ignore.policy"),
    ],
)
def test_bad_configuration_names_file_line_and_key(
    tmp_path: Path, text: str, line: int, key: str
) -> None:
    path = write(tmp_path / "blueprint.toml", text)
    with pytest.raises(ConfigError) as raised:
        read_config(path)
    assert f"blueprint.toml:{line}:" in str(raised.value)
    assert key in str(raised.value)
    assert raised.value.exit_code == 2


def test_pyproject_lines_are_those_of_the_file(tmp_path: Path) -> None:
    text = '[project]\nname = "x"\n\n[tool.blueprint]\nbad = 1\n'
    path = write(tmp_path / "pyproject.toml", text)
    with pytest.raises(ConfigError, match=r"pyproject.toml:5: bad"):
        read_config(path)


def test_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    path = write(tmp_path / "blueprint.toml", "include = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        read_config(path)


def test_prefixes_and_all() -> None:
    assert resolve_codes(["case"]) >= {"case-id-mismatch", "case-family-mismatch"}
    assert "duplicate-id" in resolve_codes(["duplicate"])
    assert resolve_codes(["ALL"]) >= {"schema", "parse"}
    # a prefix is whole words: "cas" is no code's first word
    with pytest.raises(ValueError, match="cas"):
        resolve_codes(["cas"])


def test_entry_settings_override_the_project(tmp_path: Path) -> None:
    write(
        tmp_path / "blueprint.toml",
        'select = ["schema", "starter-example"]\n'
        'ignore = ["inherited-evaluator"]\n'
        'roundtrip = ["deepeval"]\n'
        "max-starter-rows = 4\n"
        "[per-family-ignore]\n"
        'policy-lookup = ["conditional"]\n'
        "[[set]]\n"
        'path = "a.csv"\n'
        'select = ["case"]\n'
        'ignore = ["case-id-mismatch"]\n'
        'roundtrip = ["promptfoo"]\n'
        "allow-weakened = false\n"
        "per-family-ignore = {refunds = ['expected-shape']}\n",
    )
    project = load_project(start=tmp_path)
    entry = project.config.set[0]
    settings = project.settings_for(tmp_path / "a.csv", entry)
    assert settings.roundtrip == ("promptfoo",)
    assert settings.allow_weakened is False and settings.allow_lossy is True
    assert settings.max_starter_rows == 4
    options = settings.options
    assert options.select == resolve_codes(["case"])  # the entry's select replaces
    assert options.ignore == {"inherited-evaluator", "case-id-mismatch"}  # ignores add up
    assert not options.wants("conditional-evaluator", "policy-lookup")
    assert options.wants("case-family-mismatch", "refunds")
    assert not options.wants("expected-shape", "refunds")
    plain = project.settings_for(tmp_path / "b.csv")
    assert plain.roundtrip == ("deepeval",)
    assert plain.options.select == {"schema", "starter-example"}


def test_every_key_is_documented() -> None:
    from blueprint.project.config import ExportSpec, LimitsConfig, ProjectConfig, SetEntry

    page = (Path(__file__).parent.parent / "docs" / "ci.md").read_text(encoding="utf-8")
    for model in (ProjectConfig, SetEntry, ExportSpec, LimitsConfig):
        for name, info in model.model_fields.items():
            assert f"`{info.alias or name}`" in page, name


def test_limits_table_applies_and_environment_wins(tmp_path: Path, monkeypatch) -> None:
    from blueprint.io import limits

    (tmp_path / "blueprint.toml").write_text("[limits]\nmax-depth = 40\nmax-rows = 5\n")
    monkeypatch.setattr(limits, "_overrides", {})
    load_project(start=tmp_path)
    assert limits.current().max_depth == 40
    assert limits.current().max_rows == 5
    monkeypatch.setenv("BLUEPRINT_MAX_DEPTH", "300")
    assert limits.current().max_depth == 300
    assert limits.exceeded("max_rows", 6) and not limits.exceeded("max_cell_bytes", 10**6)


def test_bad_limit_names_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "blueprint.toml"
    path.write_text("[limits]\nmax-depht = 40\n")
    with pytest.raises(ConfigError) as raised:
        read_config(path)
    assert f"{path}:2" in str(raised.value) and "max-depht" in str(raised.value)
    path.write_text("[limits]\nmax-depth = -1\n")
    with pytest.raises(ConfigError):
        read_config(path)


def test_a_path_outside_the_project_names_its_pyproject_line(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.blueprint]\njudge-reports = ["../judge.json"]\n',
        encoding="utf-8",
    )
    project = load_project(tmp_path / "proj" / "pyproject.toml")
    with pytest.raises(ConfigError) as caught:
        project.refuse_outside_paths()
    assert caught.value.exit_code == 2
    assert "pyproject.toml:5" in str(caught.value) and "../judge.json" in str(caught.value)
    with reading_with(ReadOptions(allowed_paths=(tmp_path,))):
        project.refuse_outside_paths()


def test_a_number_too_long_to_read_is_a_configuration_error(tmp_path: Path) -> None:
    path = tmp_path / "blueprint.toml"
    path.write_text(f"[limits]\nmax-depth = {'9' * 5000}\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_project(path)
