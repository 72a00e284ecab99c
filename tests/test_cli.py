"""Every command has --help; errors are one line with exit code 1."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from curate.cli import main


def all_commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name)
        if isinstance(command, click.Group):
            yield from all_commands(command, (*prefix, name))


COMMANDS = list(all_commands(main))


def test_the_command_tree_is_complete():
    names = {" ".join(c) for c in COMMANDS}
    assert {
        "db build",
        "db info",
        "curate",
        "verify",
        "grounding",
        "publish",
        "diff",
        "score run",
        "score report",
        "score compare",
    } <= names


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help(command):
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: ")
    assert len(result.output.splitlines()) > 3


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_takes_dash_h_even_run_on_its_own(command):
    """A command reached without the top group (from Python, a test) still knows -h, and the
    help option click keeps for it is the same whichever way it was first asked for."""
    node: click.Command = main
    for name in command:
        node = node.commands[name]  # type: ignore[attr-defined]
    alone = CliRunner().invoke(node, ["-h"])
    assert alone.exit_code == 0, alone.output
    assert "-h, --help" in alone.output
    assert "-h, --help" in CliRunner().invoke(main, [*command, "-h"]).output


def test_version_and_top_level_help():
    assert CliRunner().invoke(main, ["--version"]).output.startswith("sqlgold, version ")
    assert "curate" in CliRunner().invoke(main, ["-h"]).output


def test_a_library_error_is_one_line_and_exit_code_one(tmp_path):
    result = CliRunner().invoke(main, ["db", "info", "--db", str(tmp_path / "missing.duckdb")])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert result.output.startswith("error: [database] ") and "missing.duckdb" in result.output


#: What a command's start-up must not import: each command imports its machinery when
#: it runs, so `sqlgold --help` and `sqlgold verify` start at once.
HEAVY_MODULES = (
    "duckdb",
    "sqlglot",
    "pyarrow",
    "numpy",
    "scipy",
    "pandas",
    "datasets",
    "huggingface_hub",
    "jsonschema",
    "openai",
    "bm25s",
    "psycopg",
    "pyspark",
)


def _imported_by(args: list[str]) -> set[str]:
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from curate.cli import main\n"
        f"result = CliRunner().invoke(main, {args!r})\n"
        "assert result.exit_code == 0, result.output\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return {name.split(".")[0] for name in json.loads(out)}


@pytest.mark.parametrize(
    "args", [["--help"], ["verify", "--help"], ["score", "run", "--help"], ["curate", "--help"]]
)
def test_help_imports_nothing_heavy(args):
    heavy = sorted(set(HEAVY_MODULES) & _imported_by(args))
    assert heavy == [], f"`sqlgold {' '.join(args)}` imports {heavy}"


#: What a trivial `sqlgold verify` may not import in its own process: the query runs in a
#: query process, the comparator needs neither pandas nor statistics nor publishing.
VERIFY_UNUSED = (
    "duckdb",
    "pandas",
    "scipy",
    "datasets",
    "huggingface_hub",
    "jsonschema",
    "openai",
    "bm25s",
    "psycopg",
    "pyspark",
)


def test_a_trivial_verify_imports_only_what_it_uses(omop_db):
    args = [
        "verify",
        "--db",
        str(omop_db),
        "--gold-dialect",
        "duckdb",
        "--gold",
        "SELECT count(*) FROM cdm.person",
        "--answer",
        "SELECT count(*) FROM cdm.person",
    ]
    unused = sorted(set(VERIFY_UNUSED) & _imported_by(args))
    assert unused == [], f"`sqlgold verify` of a trivial pair imports {unused}"


def test_pyarrow_still_converts_to_pandas_after_verify_spared_its_import():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from score.execution.arrow_pandas import answer_without_pandas\n"
        "assert answer_without_pandas()\n"
        "import numpy as np, pyarrow as pa\n"
        "assert pa.array(np.arange(3)).to_pylist() == [0, 1, 2]\n"
        "assert 'pandas' not in sys.modules\n"
        "frame = pa.table({'a': [1, 2]}).to_pandas()\n"
        "assert list(frame['a']) == [1, 2] and 'pandas' in sys.modules\n"
        "import pandas as pd\n"
        "assert pa.Array.from_pandas(pd.Series([1.5])).to_pylist() == [1.5]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
