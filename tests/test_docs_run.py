"""Every command and Python block in docs/ runs as written, from a folder outside the
checkout, against sqlgold installed from its wheel into a fresh virtual environment.

Each page runs top to bottom in an empty folder of its own (:mod:`tests.docs_blocks`
says how a page marks its blocks).  The environment is a user's: ``HOME`` is a fresh
folder (so the user cache folder starts empty and the embedded database is built in
it), the wheel's ``bin`` first on ``PATH``.  A page that names ``$CDM_URL`` or
``$SPARK_URL`` gets this session's PostgreSQL or Spark CDM there.  ``pip install
sqlgold`` (with an extra or not) installs the wheel built here, as it would install a
release.  Afterwards nothing may have been written outside the page's folder and the
user's cache folder: the checkout's files are as they were, and ``HOME`` holds only
``.cache``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs_blocks import Block, page_blocks, page_files, shown_lines_printed
from tests.paths import REPO, SHARED

DOCS = REPO / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
RUNNABLE = [p for p in PAGES if page_blocks(DOCS / p, p)]
#: ``pip install sqlgold`` or ``pip install 'sqlgold[spark]'`` in a page.
_PIP_SQLGOLD = re.compile(r"""pip install (?P<q>['"]?)sqlgold(?P<extra>\[[a-z,]+\])?(?P=q)""")
#: How long one command of a page may take (the tutorial's longest step is about 1 min).
COMMAND_TIMEOUT = 600


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    home: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"


def _git_state() -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return done.stdout if done.returncode == 0 else ""


def _outside_env() -> dict[str, str]:
    """This process's environment without what points Python at this checkout or its
    virtual environment (PYTHONPATH would let pip see the checkout's sqlgold as
    installed)."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "PYTHON", "VIRTUAL_ENV", "SQLGOLD"))
    }


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built from this checkout, installed into a fresh virtual environment."""
    root = tmp_path_factory.mktemp("wheel")
    env = _outside_env()
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root), str(REPO)]
    subprocess.run(build, check=True, capture_output=True, env=env)
    (wheel,) = root.glob("sqlgold-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    constraints = ["-c", str(REPO / "constraints.txt")]
    subprocess.run([*pip, *constraints, str(wheel)], check=True, capture_output=True, env=env)
    home = root / "home"
    home.mkdir()
    return Installed(wheel, venv, home)


def _environment(installed: Installed, request: pytest.FixtureRequest, text: str) -> dict:
    env = _outside_env()
    real_home = Path(os.environ.get("HOME", "~")).expanduser()
    env |= {
        "HOME": str(installed.home),
        "PATH": f"{installed.bin}{os.pathsep}{env.get('PATH', '')}",
        "VIRTUAL_ENV": str(installed.venv),
        # pip's own cache stays the machine's: installing is not what a page writes
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(real_home / ".cache" / "pip")),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    if "$CDM_URL" in text:
        env["CDM_URL"] = request.getfixturevalue("pg_cdm").reader_url
    if "$SPARK_URL" in text:
        env["SPARK_URL"] = request.getfixturevalue("spark_url")
    return env


def _as_run(command: str, installed: Installed) -> str:
    """A page's command as the test runs it: ``pip install sqlgold`` installs the wheel."""

    def wheel(m: re.Match) -> str:
        constraints = REPO / "constraints.txt"
        home = Path(os.environ.get("HOME", "~")).expanduser()  # pip's own files stay the machine's
        return f"HOME='{home}' pip install -c '{constraints}' '{installed.wheel}{m['extra'] or ''}'"

    return _PIP_SQLGOLD.sub(wheel, command)


def _run_block(block: Block, folder: Path, env: dict, installed: Installed) -> None:
    if block.file is not None:
        (folder / block.file).parent.mkdir(parents=True, exist_ok=True)
        (folder / block.file).write_text(block.body, encoding="utf-8")
        return
    if block.language == "python":
        done = subprocess.run(
            [str(installed.bin / "python"), "-c", block.body],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        assert done.returncode == 0, f"{block.where}: the Python block failed:\n{done.stderr}"
        return
    for i, command in enumerate(block.commands):
        last = i == len(block.commands) - 1
        done = subprocess.run(
            ["bash", "-c", _as_run(command.text, installed)],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        want = block.exit_code if last else 0
        assert done.returncode == want, (
            f"{block.where}: `{command.text}` exited {done.returncode}, not {want}:\n"
            f"{done.stdout}\n{done.stderr}"
        )
        missing = shown_lines_printed(command.shown, done.stdout + done.stderr)
        assert missing is None, (
            f"{block.where}: `{command.text}` did not print {missing!r}; it printed:\n"
            f"{done.stdout}{done.stderr}"
        )


@pytest.mark.parametrize("page", RUNNABLE)
def test_every_block_of_the_page_runs_as_written(page, installed, tmp_path, request) -> None:
    path = DOCS / page
    text = path.read_text(encoding="utf-8")
    folder = tmp_path / "work"
    folder.mkdir()
    for dest, source in page_files(path):
        if not (SHARED / source).exists():
            pytest.skip(f"../shared/{source} is absent")
        target = folder / dest
        if (SHARED / source).is_dir():
            shutil.copytree(SHARED / source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(SHARED / source, target)
    env = _environment(installed, request, text)
    before = _git_state()
    ran = 0
    for block in page_blocks(path, page):
        if block.not_run is None:
            _run_block(block, folder, env, installed)
            ran += 1
    assert ran, f"{page}: every block is marked not run"
    assert _git_state() == before, "the page's commands changed files in the checkout"
    home = sorted(p.name for p in installed.home.iterdir())
    assert home in ([], [".cache"]), f"the page wrote into HOME: {home}"


def test_the_blocks_not_run_say_why_and_are_few() -> None:
    """A block is left out only for a reason the test cannot stand in for."""
    left_out = [b for p in PAGES for b in page_blocks(DOCS / p, p) if b.not_run is not None]
    for block in left_out:
        assert len(block.not_run) > 10, f"{block.where}: say why it is not run"
    runnable = [b for p in PAGES for b in page_blocks(DOCS / p, p) if b.not_run is None]
    assert len(left_out) <= len(runnable) // 4, [b.where for b in left_out]
