"""One instance's prompt: the chat messages and the hashes that pin them.

:func:`build_prompt` is pure: the same question, database text, today and retrieved
chunks always give byte-identical messages.  A :class:`Prompt` carries three sha256s:
the template's (the fixed wording, :data:`~.template.TEMPLATE_SHA256`), the schema
text's (the database part) and the whole prompt's, so a prediction says exactly what the
model saw.

>>> p = build_prompt("How many persons?", "CREATE TABLE cdm.person (...);", today="2025-12-31")
>>> p.messages[1]["content"].splitlines()[-1]
'Question: How many persons?'
>>> "Today is 2025-12-31" in p.messages[1]["content"]
True
>>> p.prompt_sha256 == build_prompt("How many persons?", "CREATE TABLE cdm.person (...);",
...                                 today="2025-12-31").prompt_sha256
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from score.generate.retrieval import Hit
from score.generate.schema_text import schema_sha256
from score.generate.template import (
    CHUNK,
    CONTEXT,
    SYSTEM,
    TEMPLATE_ID,
    TEMPLATE_SHA256,
    TODAY,
    USER,
)

ZERO_SHOT = "zero-shot"
RAG = "rag"
MODES = (ZERO_SHOT, RAG)


@dataclass(frozen=True)
class Prompt:
    messages: tuple[dict[str, str], ...]
    template_id: str
    template_sha256: str
    schema_sha256: str
    prompt_sha256: str
    today: str | None
    context_ids: tuple[str, ...]  # retrieved chunk ids, best first (empty in zero-shot)


def _context_block(hits: Sequence[Hit]) -> str:
    if not hits:
        return ""
    chunks = "\n\n".join(
        CHUNK.substitute(number=i, chunk_id=h.chunk.id, text=h.chunk.text.strip())
        for i, h in enumerate(hits, start=1)
    )
    return CONTEXT.substitute(chunks=chunks)


def build_prompt(
    question: str,
    schema: str,
    *,
    today: str | None = None,
    hits: Sequence[Hit] = (),
) -> Prompt:
    """The messages asking ``question`` about the database described by ``schema``."""
    user = USER.substitute(
        schema=schema,
        context=_context_block(hits),
        today=TODAY.substitute(today=today) if today else "",
        question=" ".join(question.split()),
    )
    messages = ({"role": "system", "content": SYSTEM}, {"role": "user", "content": user})
    encoded = json.dumps(messages, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return Prompt(
        messages=messages,
        template_id=TEMPLATE_ID,
        template_sha256=TEMPLATE_SHA256,
        schema_sha256=schema_sha256(schema),
        prompt_sha256=hashlib.sha256(encoded).hexdigest(),
        today=today,
        context_ids=tuple(h.chunk.id for h in hits),
    )


def render_text(prompt: Prompt) -> str:
    """The prompt as plain text (what ``sqlgold prompt`` prints), one section per message."""
    parts = [f"=== {m['role']} ===\n{m['content']}" for m in prompt.messages]
    return "\n\n".join(parts) + "\n"
