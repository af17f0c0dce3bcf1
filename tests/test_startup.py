"""Start-up: the command line imports no heavy library until a command needs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parent.parent / "examples" / "support-refunds.json"
#: what no start-up needs: deepdiff (which pulls in numpy and pandas), jinja2 (reports),
#: datasketch (near-duplicates)
HEAVY = ("pandas", "numpy", "deepdiff", "jinja2", "datasketch")

PROGRAM = """
import json, sys
{setup}
print(json.dumps([name for name in {heavy!r} if name in sys.modules]))
"""


def _loaded(setup: str) -> list[str]:
    program = PROGRAM.format(setup=setup, heavy=HEAVY)
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_importing_the_command_line_loads_no_heavy_library():
    assert _loaded("import blueprint.cli") == []


def test_importing_the_package_loads_no_heavy_library():
    assert _loaded("import blueprint") == []


@pytest.mark.parametrize(
    "arguments",
    [["--help"], ["validate", str(EXAMPLE)], ["validate", "--report", "json", str(EXAMPLE)]],
)
def test_a_command_that_needs_none_loads_none(arguments):
    setup = (
        "import contextlib, io\n"
        "from blueprint.cli import app\n"
        "quiet = io.StringIO()\n"
        "with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):\n"
        f"    app({arguments!r}, standalone_mode=False)\n"
    )
    assert _loaded(setup) == []


MODULES_PROGRAM = """
import contextlib, io, json, sys
from blueprint.cli import app
quiet = io.StringIO()
with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
    try:
        app({arguments!r}, prog_name="blueprint")
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after(arguments: list[str]) -> set[str]:
    program = MODULES_PROGRAM.format(arguments=arguments)
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    return set(json.loads(completed.stdout.strip().splitlines()[-1]))


#: what listing the commands needs none of: every command's module, the format registry and
#: its codecs, the models, and the libraries behind them
NOT_FOR_HELP = (
    "blueprint.cli._common",
    "blueprint.cli.validate",
    "blueprint.cli.build",
    "blueprint.cli.curate",
    "blueprint.formats",
    "blueprint.core.model",
    "blueprint.validation.validate",
    "pydantic",
    "jsonschema",
    "yaml",
    "importlib.metadata",
)
#: what validating a canonical JSON file needs none of: the other commands, and the codecs
#: of formats that do not read .json files (those that do are asked whether the file fits)
NOT_FOR_VALIDATE = (
    "blueprint.cli.build",
    "blueprint.cli.check",
    "blueprint.cli.convert",
    "blueprint.cli.curate",
    "blueprint.cli.diff",
    "blueprint.cli.hygiene",
    "blueprint.cli.judge",
    "blueprint.cli.reference",
    "blueprint.cli.reports",
    "blueprint.formats.apollia",
    "blueprint.formats.canonical_csv",
    "blueprint.formats.canonical_jsonl",
    "blueprint.formats.huggingface",
    "blueprint.formats.openai_evals",
    "rich.markdown",
    # a set that names no judge-validation report needs no statistics; a named file, no
    # configuration; checking reads the shipped schemas, so no pack model generates them
    "blueprint.reports.judging",
    "blueprint.project.config",
    "blueprint.authoring.packs",
)


def test_help_imports_no_command_and_no_codec():
    for arguments in (["--help"], []):
        loaded = _modules_after(arguments)
        assert "blueprint.cli._commands" in loaded
        assert sorted(loaded.intersection(NOT_FOR_HELP)) == []


def test_validating_a_json_file_imports_only_its_command_and_the_codecs_that_read_json():
    loaded = _modules_after(["validate", str(EXAMPLE)])
    assert {"blueprint.cli.validate", "blueprint.formats.canonical_json"} <= loaded
    assert sorted(loaded.intersection(NOT_FOR_VALIDATE)) == []


def test_a_set_with_its_set_file_is_read_without_asking_the_vendor_codecs(tmp_path):
    # the set file beside it says what it is: no vendor codec (nor YAML) is imported to agree
    data = tmp_path / "set.jsonl"
    data.write_text('{"id": "a", "input": "q", "metadata": {"case": {}}}\n', encoding="utf-8")
    (tmp_path / "set.jsonl.set.json").write_text('{"name": "s"}', encoding="utf-8")
    loaded = _modules_after(["validate", str(data)])
    vendors = {f"blueprint.formats.{name}" for name in ("braintrust", "promptfoo", "langsmith")}
    assert sorted(loaded & (vendors | {"yaml"})) == []


def test_listing_the_formats_imports_no_codec():
    loaded = _modules_after(["formats"])
    codecs = {f"blueprint.formats.{name}" for name in ("promptfoo", "omk", "apollia", "ome")}
    assert sorted(loaded & codecs) == []


def test_the_public_names_still_resolve():
    import blueprint

    for name in blueprint.__all__:
        assert getattr(blueprint, name) is not None
    # importing the submodule does not hide the function of the same name
    from blueprint.convert import convert

    assert blueprint.convert is convert


def test_the_command_table_summarises_every_command_as_its_own_help_does():
    import inspect

    from blueprint.cli._commands import COMMANDS, build_command

    for name, entry in COMMANDS.items():
        command = build_command(name)
        assert command.name == name
        assert (command.hidden, command.deprecated, command.short_help) == (False, False, None)
        assert entry.summary == inspect.cleandoc(command.help).split("\n\n")[0], name


def test_the_lazy_root_help_is_what_registering_every_command_prints():
    import importlib

    import typer
    from typer.testing import CliRunner

    from blueprint import cli
    from blueprint.cli._commands import COMMANDS, TidyGroup

    # registered eagerly, with the help tidying the lazy group does too
    eager = typer.Typer(
        cls=TidyGroup,
        name="blueprint",
        help=cli.app.info.help,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        add_completion=True,
    )
    eager.callback()(cli._root)
    for name, entry in COMMANDS.items():
        target = getattr(importlib.import_module(entry.module), entry.attribute)
        if isinstance(target, typer.Typer):
            eager.add_typer(target, name=name)
        else:
            eager.command(name)(target)
    for arguments in (["--help"], [], ["vaildate"]):
        lazy, registered = (
            CliRunner().invoke(app, arguments, env={"COLUMNS": "100"}) for app in (cli.app, eager)
        )
        assert (lazy.exit_code, lazy.output) == (registered.exit_code, registered.output)


def test_the_format_table_holds_each_codecs_own_facts():
    from blueprint.formats import FORMATS, REGISTRY

    assert [facts.name for facts in FORMATS] == list(REGISTRY)
    for facts in FORMATS:
        codec = REGISTRY[facts.name]
        assert type(codec).__module__ == f"blueprint.formats.{facts.module}"
        assert type(codec).__name__ == facts.codec_class
        for attribute in ("name", "title", "lossless", "can_read", "can_write"):
            assert getattr(codec, attribute) == getattr(facts, attribute), attribute
        assert codec.read_extensions == facts.read_extensions
        assert codec.extensions == facts.extensions == tuple(codec.write_forms)
        assert getattr(codec, "named_only", False) == facts.named_only
