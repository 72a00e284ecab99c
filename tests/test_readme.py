"""The README and the documentation pages (docs/) are part of the product: their code
runs, and the synopsis and variables are complete (a new user reads nothing else)."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.inputs.task_set import instances, load_tasks
from tests.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
PAGES = {
    p.relative_to(REPO / "docs").as_posix(): p.read_text(encoding="utf-8")
    for p in sorted((REPO / "docs").rglob("*.md"))
}
#: Everything a user reads: the README, then every documentation page.
DOCS = "\n".join([README, *PAGES.values()])
#: The README stays a front page: the reference lives in docs/.
README_MAX_LINES = 250


def code_blocks(language: str, text: str = README) -> list[str]:
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


def test_every_python_block_of_the_readme_runs(project_folder):
    """The README's Python runs in a folder laid out as after `make db` and `make publish
    VERSION=0.1.0`, offline (the docs' blocks run in tests/test_docs_run.py)."""
    blocks = code_blocks("python")
    assert blocks, "the README has a Python example"
    printed = []
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README", "exec"), {"__name__": "readme"})
        printed.append(out.getvalue())
    assert any("omop-" in text for text in printed)  # the release's test split's ids


def test_the_readme_is_a_front_page_that_links_the_four_parts() -> None:
    assert len(README.splitlines()) <= README_MAX_LINES
    for page in ("index.md", "tutorial.md", "how-to/index.md", "reference/index.md"):
        assert f"docs/{page}" in README, f"the README does not link docs/{page}"
    assert "docs/explanation/index.md" in README


def test_every_page_is_in_the_site_s_navigation() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("nav:", 1)[1]
    listed = set(re.findall(r"([a-z0-9/-]+\.md)", nav))
    assert listed == set(PAGES), (set(PAGES) - listed, listed - set(PAGES))


def test_the_generated_reference_pages_are_current() -> None:
    """commands, python-api, profiles, transpile-rules and configuration are made from the
    code (`make docs` writes them): a page that differs is stale."""
    from curate.cli.reference import reference_pages

    for name, text in reference_pages().items():
        path = REPO / "docs" / "reference" / name
        assert path.read_text(encoding="utf-8") == text, (
            f"docs/reference/{name} is stale: run `make docs` "
            "(python -m curate.cli.reference docs/reference)"
        )


def test_every_make_target_named_exists():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.MULTILINE))
    named = set(re.findall(r"`make ([a-z][a-z-]*)", DOCS)) | {
        line.split()[1] for block in code_blocks("bash", DOCS) for line in block.splitlines()
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


def test_source_records_say_format_is_required():
    schema = json.loads((REPO / "schemas" / "source.schema.json").read_text(encoding="utf-8"))
    table = PAGES["reference/file-formats.md"].split("## Source records")[1].split("\n## ")[0]
    rows = {r.split("|")[1].strip(): r.split("|")[2].strip() for r in table.splitlines()
            if r.startswith("| `")}  # fmt: skip
    for field in schema["required"]:
        assert rows[f"`{field}`"] == "yes", field
    assert [f for f, req in rows.items() if req == "yes"] == [f"`{f}`" for f in schema["required"]]


def test_the_docs_figures_are_the_bench_s() -> None:
    """A page's measured figures sit between bench markers and are the text of the file
    `make bench` wrote (`make docs` copies them in): none is typed by hand."""
    from curate.cli.reference import with_bench_figures

    included = [name for name, text in PAGES.items() if "<!-- bench: " in text]
    assert "explanation/test-suites.md" in included and "explanation/peers.md" in included
    for name in included:
        assert with_bench_figures(PAGES[name], REPO) == PAGES[name], (
            f"docs/{name}: its bench figures are not bench's: run `make docs`"
        )
