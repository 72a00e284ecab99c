"""The README and the documentation pages (docs/) are part of the product: their code
runs, and the synopsis and variables are complete (a new user reads nothing else)."""

from __future__ import annotations

import contextlib
import io
import json
import re

import click
import pytest
from click.testing import CliRunner

from curate.cli import main
from score.inputs.task_set import instances, load_tasks
from tests.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
PAGES = {p.name: p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))}
#: Everything a user reads: the README, then every documentation page.
DOCS = "\n".join([README, *PAGES.values()])
#: The README stays a front page: the reference lives in docs/.
README_MAX_LINES = 250


def code_blocks(language: str, text: str = DOCS) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


@pytest.fixture
def project_folder(tmp_path, omop_db, monkeypatch):
    """A folder laid out like the repository after `make db`: the database, the task
    file, and a predictions file (reference answers for half the instances)."""
    (tmp_path / "data" / "omop").mkdir(parents=True)
    (tmp_path / "data" / "omop" / "synthea1k.duckdb").symlink_to(omop_db)
    (tmp_path / "data" / "benchmark").mkdir()
    tasks_file = REPO / "data" / "benchmark" / "omop_tasks.jsonl"
    for name in ("omop_tasks.jsonl", "omop_report.json"):
        source = REPO / "data" / "benchmark" / name
        (tmp_path / "data" / "benchmark" / name).write_bytes(source.read_bytes())
    lines = []
    for inst in instances(load_tasks(tasks_file))[::2]:
        answer = inst.task["answer_sql"]
        output = f"```sql\n{answer}\n```" if answer else "ABSTAIN"
        lines.append({"task_id": inst.task_id, "language": inst.language, "output": output})
    (tmp_path / "preds.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.chdir(tmp_path)
    published = CliRunner().invoke(
        main,
        ["publish", "data/benchmark/omop_tasks.jsonl", "--version", "0.1.0",
         "--db", "data/omop/synthea1k.duckdb", "--out", "data/benchmark/releases"],
    )  # fmt: skip
    assert published.exit_code == 0, published.output
    return tmp_path


def test_every_python_block_runs(project_folder):
    """The issue: the "From Python" example failed (it used the executor after its
    `with` block closed it).  Every block runs in a folder laid out as after `make db`
    and `make publish VERSION=0.1.0`, offline."""
    blocks = code_blocks("python")
    assert len(blocks) >= 2, "the README and docs have Python examples"
    printed = []
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "docs", "exec"), {"__name__": "readme"})
        printed.append(out.getvalue())
    assert any("Verdict(match=True" in text for text in printed)
    assert any("omop-" in text for text in printed)  # the release's test split's ids


def test_the_readme_is_a_front_page_and_every_page_is_linked() -> None:
    assert len(README.splitlines()) <= README_MAX_LINES
    for name in PAGES:
        assert f"docs/{name}" in README or name == "index.md", f"the README does not link {name}"


def test_every_make_target_named_exists():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.MULTILINE))
    named = set(re.findall(r"`make ([a-z][a-z-]*)", DOCS)) | {
        line.split()[1] for block in code_blocks("bash") for line in block.splitlines()
        if line.startswith("make ")
    }  # fmt: skip
    assert named and named <= targets, named - targets


def test_every_makefile_variable_a_user_sets_is_in_the_readme():
    """The issue: the synopsis missed the Makefile's REPO_ID."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    internal = {
        "PYTHON", "VENV", "BIN", "STAMP", "GENSTAMP", "SPARK_STAMP", "DOCSTAMP", "PAGESTAMP",
        "SQLGOLD", "MAKEFILE_LIST", "DBARG", "DBFILE",
    }  # fmt: skip
    used = set(re.findall(r"\$\((?:or |if )?\$?\(?([A-Z_]+)\)", makefile)) - internal
    assert {"REPO_ID", "PREDICTIONS", "OUT", "VERSION"} <= used
    missing = sorted(v for v in used if f"{v}=" not in DOCS)
    assert not missing, f"Makefile variables the README does not mention: {missing}"


def _synopsis() -> dict[str, str]:
    """Command -> its synopsis text (continuation lines joined), bundles expanded."""
    (block,) = [b for b in code_blocks("text") if b.startswith("sqlgold ")]
    bundles = dict(re.findall(r"^([A-Z]+) += (.*)$", block, re.MULTILINE))
    entries: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        if line.startswith("sqlgold "):
            words = line.split()
            name = " ".join(words[1:3]) if words[1] in ("db", "score", "suite") else words[1]
            current = name
            entries[name] = line
        elif line.startswith(" ") and current:
            entries[current] += " " + line.strip()
        else:
            current = None
    for name, text in entries.items():
        for bundle, expansion in bundles.items():
            text = text.replace(f"[{bundle}]", expansion)
        entries[name] = text
    return entries


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _leaves(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


@pytest.mark.parametrize(("name", "command"), list(_leaves(main)), ids=lambda v: str(v)[:20])
def test_the_synopsis_lists_every_option(name, command):
    """The issue: it missed --lenient, --manifest, --today and --run."""
    synopsis = _synopsis()
    assert name in synopsis, f"`sqlgold {name}` is not in the synopsis (docs/commands.md)"
    for param in command.params:
        if isinstance(param, click.Argument):
            continue
        assert any(re.search(rf"{re.escape(o)}\b", synopsis[name]) for o in param.opts), (
            f"`sqlgold {name}` {param.opts[0]} is not in the synopsis (docs/commands.md)"
        )


def test_source_records_say_format_is_required():
    schema = json.loads((REPO / "schemas" / "source.schema.json").read_text(encoding="utf-8"))
    paragraph = PAGES["curation.md"].split("Source records are JSONL")[1].split("\n\n")[0]
    required, optional = paragraph.split("**Optional**")
    for field in schema["required"]:
        assert f"`{field}`" in required and f"`{field}`" not in optional
