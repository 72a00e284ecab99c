"""Retrieval for ``--mode rag``: chunks of the grounding documents and of the train
split's verified examples, ranked by BM25.

**Chunks.**  Each grounding document (``data/grounding/*.md``) is cut at its ``##``
headings, so a chunk is one table, one vocabulary pattern or one DuckDB difference; a
section longer than :data:`MAX_CHUNK_CHARS` is cut again between paragraphs.  A chunk's
id is ``<file>#<heading slug>`` (``omop_schema.md#cdm-person``).  The worked examples
are made here from the task file, one chunk per answerable task on the **train** side of
the split (``example:<task id>``: every language of its question and its verified gold
SQL), instead of read from ``examples.md``: so the examples always follow the split the
run uses, and ``examples.md`` (the same text for the default split) is not indexed twice.

**Leakage** (seed 000): a held-out task must never retrieve its own answer.  Example
chunks come only from the train side; :func:`leaked_chunks` then checks every chunk of
the index, grounding documents included, for the id, gold SQL or reference answer of any
held-out task, and :func:`build_index` refuses an index that holds one.  A task asked
that is itself on the train side (``--split train`` or ``all``) never retrieves its own
example either (:meth:`Index.search` leaves it out).

**Ranking.**  BM25 (Lucene variant, k1 1.5, b 0.75) from ``bm25s``, a maintained
library (sparse-matrix scoring, numpy only); the scores of every chunk are computed and
sorted by score, then by chunk id, so ties never depend on the library's partial sort
and the same question always gets the same chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from score.generate.errors import GenerationError, require

#: Grounding documents not indexed: examples are made from the task file and split.
SKIPPED_DOCUMENTS = frozenset({"examples.md"})
MAX_CHUNK_CHARS = 3000
DEFAULT_TOP_K = 5
EXAMPLE_PREFIX = "example:"


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    task_id: str | None = None  # the task an example chunk shows


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    score: float


def slug(heading: str) -> str:
    """A heading as an id part.

    >>> slug("cdm.person"), slug("Example 6: Maps to: from a code to its standard concept")
    ('cdm-person', 'example-6-maps-to-from-a-code-to-its-standard-concept')
    """
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"


def _split_long(text: str, limit: int = MAX_CHUNK_CHARS) -> list[str]:
    """``text`` in pieces of at most about ``limit`` characters, cut between paragraphs
    (or between lines, inside a paragraph longer than ``limit``)."""
    if len(text) <= limit:
        return [text]
    units: list[tuple[str, str]] = []  # (separator before it, text)
    for paragraph in re.split(r"\n{2,}", text):
        if len(paragraph) <= limit:
            units.append(("\n\n", paragraph))
        else:
            lines = paragraph.split("\n")
            units += [("\n\n", lines[0])] + [("\n", line) for line in lines[1:]]
    pieces, current = [], ""
    for separator, unit in units:
        if current and len(current) + len(separator) + len(unit) > limit:
            pieces.append(current)
            current = unit
        else:
            current = f"{current}{separator}{unit}" if current else unit
    if current:
        pieces.append(current)
    return pieces


def document_chunks(name: str, text: str) -> list[Chunk]:
    """A Markdown document cut at its ``##`` headings (the part before the first is
    ``#intro``); every chunk starts with the document's title for context.

    >>> [c.id for c in document_chunks("d.md", "# T\\nintro\\n## A b\\nx\\n## A b\\ny")]
    ['d.md#intro', 'd.md#a-b', 'd.md#a-b-2']
    """
    title_match = re.search(r"(?m)^# (.+)$", text)
    title = title_match.group(1).strip() if title_match else name
    sections = re.split(r"(?m)^## ", text)
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for i, section in enumerate(sections):
        if i == 0:
            heading, body = "intro", re.sub(r"(?m)^# .+$", "", section, count=1)
        else:
            heading, _, body = section.partition("\n")
        body = body.strip()
        if not body:
            continue
        base = slug(heading)
        for piece in _split_long(body):
            seen[base] = seen.get(base, 0) + 1
            chunk_id = f"{name}#{base}" if seen[base] == 1 else f"{name}#{base}-{seen[base]}"
            header = title if i == 0 else f"{title}: {heading.strip()}"
            chunks.append(Chunk(chunk_id, f"{header}\n\n{piece}"))
    return chunks


def grounding_chunks(folder: str | Path) -> list[Chunk]:
    """The chunks of every ``*.md`` in ``folder`` (file name order), examples.md left out."""
    folder = Path(folder)
    if not folder.is_dir():
        raise GenerationError(
            "no grounding folder (generate it with `sqlgold grounding`)", path=str(folder)
        )
    chunks: list[Chunk] = []
    for path in sorted(folder.glob("*.md")):
        if path.name not in SKIPPED_DOCUMENTS:
            chunks += document_chunks(path.name, path.read_text(encoding="utf-8"))
    if not chunks:
        raise GenerationError("the grounding folder holds no documents", path=str(folder))
    return chunks


def example_chunks(train_tasks: Iterable[Mapping[str, Any]]) -> list[Chunk]:
    """One chunk per answerable train task: its question in every language and its gold.

    >>> task = {"id": "t1", "answerable": True, "gold_sql": "SELECT 1",
    ...         "questions": {"en": "One?", "ko": "하나?"}}
    >>> print(example_chunks([task])[0].text)
    Worked example (task t1): One?
    (ko) 하나?
    ```sql
    SELECT 1
    ```
    """
    chunks = []
    for task in sorted(train_tasks, key=lambda t: str(t["id"])):
        if not task.get("answerable", True) or not task.get("gold_sql"):
            continue
        questions = dict(task["questions"])
        first = questions.pop("en", None) or questions.pop(sorted(questions)[0])
        lines = [f"Worked example (task {task['id']}): {' '.join(first.split())}"]
        lines += [f"({lang}) {' '.join(questions[lang].split())}" for lang in sorted(questions)]
        lines += ["```sql", task["gold_sql"].strip(), "```"]
        chunks.append(Chunk(f"{EXAMPLE_PREFIX}{task['id']}", "\n".join(lines), str(task["id"])))
    return chunks


def _squash(sql: str) -> str:
    return " ".join(sql.split()).lower()


def leaked_chunks(
    chunks: Sequence[Chunk], held_out: Iterable[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(chunk id, task id) for every chunk that shows a held-out task: its example, or
    its gold SQL or reference answer (compared with whitespace and case squashed)."""
    answers: dict[str, str] = {}
    ids: set[str] = set()
    for task in held_out:
        ids.add(str(task["id"]))
        for key in ("gold_sql", "answer_sql"):
            if task.get(key):
                answers[_squash(task[key])] = str(task["id"])
    found = []
    for chunk in chunks:
        if chunk.task_id is not None and chunk.task_id in ids:
            found.append((chunk.id, chunk.task_id))
            continue
        text = _squash(chunk.text)
        found += [(chunk.id, tid) for sql, tid in answers.items() if sql in text]
    return sorted(set(found))


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-case word tokens (``bm25s``' pattern), English stop words dropped."""
    bm25s = require("bm25s")
    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


class Index:
    """BM25 over a fixed list of chunks."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            raise GenerationError("nothing to retrieve from: the index has no chunks")
        ids = [c.id for c in chunks]
        if len(set(ids)) != len(ids):
            raise GenerationError("two retrieval chunks share an id")
        bm25s = require("bm25s")
        self.chunks = tuple(chunks)
        self._bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        self._bm25.index(tokenize([c.text for c in chunks]), show_progress=False)

    def search(self, query: str, k: int, *, exclude_task: str | None = None) -> list[Hit]:
        """The ``k`` best chunks for ``query`` (score, then id), none showing
        ``exclude_task``; chunks that share no word with the query are never returned."""
        (tokens,) = tokenize([query])
        if not tokens:
            return []
        scores = self._bm25.get_scores(tokens)
        ranked = sorted(
            (
                (-float(s), c.id, c)
                for s, c in zip(scores, self.chunks, strict=True)
                if s > 0 and (exclude_task is None or c.task_id != exclude_task)
            ),
            key=lambda x: (x[0], x[1]),
        )
        return [Hit(c, -neg) for neg, _, c in ranked[:k]]


def build_index(
    grounding_dir: str | Path,
    train_tasks: Sequence[Mapping[str, Any]],
    held_out_tasks: Sequence[Mapping[str, Any]],
) -> Index:
    """The index of ``grounding_dir``'s chunks and the train tasks' examples; refused if
    any chunk shows a held-out task's answer."""
    chunks = grounding_chunks(grounding_dir) + example_chunks(train_tasks)
    leaks = leaked_chunks(chunks, held_out_tasks)
    if leaks:
        shown = ", ".join(f"{c} shows {t}" for c, t in leaks[:5])
        raise GenerationError(
            f"retrieval would show held-out answers: {shown}"
            + (f" (+{len(leaks) - 5} more)" if len(leaks) > 5 else ""),
            path=str(grounding_dir),
        )
    return Index(chunks)
