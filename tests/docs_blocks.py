"""The runnable blocks of a documentation page, and how a test runs them.

A page's ``console`` blocks hold commands after ``$ `` (a line ending in ``\\`` goes
on), each followed by the lines of output the page shows; its ``python`` blocks hold
code.  The test runs a page's blocks top to bottom, in one folder of the page's own,
and checks that every output line the page shows is printed, in order (``...`` in a
shown line stands for any text).  An HTML comment right before a block can say:

- ``<!-- not run: REASON -->``: the block is not run (the network, a model server);
- ``<!-- exit: N -->``: its last command exits with N (a command that reports a
  finding with exit code 3, say);
- ``<!-- file: NAME -->``: the block (of any language) is a file the page has the user
  write: it is written to NAME in the page's folder, in its place among the blocks.

A page's ``<!-- files: DEST <- SHARED -->`` comment copies ``../shared/SHARED`` to
``DEST`` in the page's folder before it runs (what the page tells a user to download).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(
    r"(?P<before>(?:^<!--[^\n]*-->\n)*)^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```\n",
    re.MULTILINE | re.DOTALL,
)
_COMMENT = re.compile(r"<!--\s*(?P<key>[a-z ]+):\s*(?P<value>.*?)\s*-->")
_FILES = re.compile(r"<!--\s*files:\s*(?P<dest>\S+)\s*<-\s*(?P<src>\S+)\s*-->")


@dataclass(frozen=True)
class Command:
    text: str  # the command, continuation lines joined
    shown: tuple[str, ...]  # the output lines the page shows after it


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # the fence's line in the page
    language: str  # "console" and "python" run; another is run only as a file written
    body: str
    not_run: str | None = None  # why the block is not run
    file: str | None = None  # the file the block is (written, not run)
    exit_code: int = 0
    commands: tuple[Command, ...] = field(default=())

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def parse_commands(body: str) -> tuple[Command, ...]:
    r"""The commands of a console block and the output each shows.

    >>> [(c.text, c.shown) for c in parse_commands("$ a \\\n  b\nout\n$ c\n")]
    [('a b', ('out',)), ('c', ())]
    """
    commands: list[Command] = []
    text: list[str] = []
    shown: list[str] = []
    going_on = False
    for line in body.splitlines():
        if going_on:
            text.append(line.strip().removesuffix("\\").strip())
            going_on = line.endswith("\\")
        elif line.startswith("$ "):
            if text:
                commands.append(Command(" ".join(text), tuple(shown)))
            text, shown = [line[2:].removesuffix("\\").strip()], []
            going_on = line.endswith("\\")
        elif text and line.strip():
            shown.append(line.rstrip())
    if text:
        commands.append(Command(" ".join(text), tuple(shown)))
    return tuple(commands)


def page_blocks(path: Path, name: str) -> list[Block]:
    """The blocks of the page at ``path`` that run: its console and python blocks, and
    the blocks it has the user write as files."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for found in _FENCE.finditer(text):
        notes = dict(
            (m.group("key").strip(), m.group("value")) for m in _COMMENT.finditer(found["before"])
        )
        line = text.count("\n", 0, found.start("lang")) + 1
        body = found["body"]
        if found["lang"] not in ("console", "python") and "file" not in notes:
            continue
        blocks.append(
            Block(
                page=name,
                line=line,
                language=found["lang"],
                body=body,
                not_run=notes.get("not run"),
                exit_code=int(notes.get("exit", "0")),
                file=notes.get("file"),
                commands=parse_commands(body) if found["lang"] == "console" else (),
            )
        )
    return blocks


def page_files(path: Path) -> list[tuple[str, str]]:
    """The ``(DEST, SHARED)`` copies a page asks for."""
    text = path.read_text(encoding="utf-8")
    return [(m["dest"], m["src"]) for m in _FILES.finditer(text)]


def shown_lines_printed(shown: tuple[str, ...], printed: str) -> str | None:
    """None when every shown line is printed, in order; else the first one that is not.

    >>> shown_lines_printed(("kept ... tasks", "done"), "a\\nkept 5 tasks\\nb\\ndone\\n")
    >>> shown_lines_printed(("done", "kept ..."), "kept 5\\ndone\\n")
    'kept ...'
    """
    lines = [line.rstrip() for line in printed.splitlines()]
    at = 0
    for want in shown:
        pattern = re.compile(
            r"\s+".join(
                ".*".join(re.escape(part) for part in word.split("..."))
                for word in want.strip().split()
            )
        )
        while at < len(lines) and not pattern.fullmatch(lines[at].strip()):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None
