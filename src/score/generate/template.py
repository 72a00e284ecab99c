"""The fixed wording of every prompt, pinned by sha256.

A prompt is two messages (seed 004): the system message says what to write and how to
answer (one ```sql block, or ``ABSTAIN`` when the data cannot answer); the user
message holds the database text (:mod:`.schema_text`), in ``rag`` mode the retrieved
chunks, the fixed today when there is one, and the question.  Any change to a text here
changes :data:`TEMPLATE_SHA256`, and every prediction records it, so two runs can tell
whether they saw the same prompt wording.
"""

from __future__ import annotations

import hashlib
from string import Template

TEMPLATE_ID = "sqlgold-omop-p1"

SYSTEM = """\
You write SQL for an OMOP CDM v5.4 database stored in DuckDB. You are given the \
database: a CREATE TABLE statement with three example rows for every table that has \
rows, the tables that are empty, the columns that are NULL in every row, how many \
concepts each domain and vocabulary has, and a note on this database. Then you are \
asked one question.

Answer with exactly one DuckDB SQL query in one ```sql code block, and name every table \
as cdm.<table>. If the database cannot answer the question, because the data it needs \
would be in empty tables or in columns that are NULL in every row, answer with the \
single word ABSTAIN in a code block instead of a query."""

USER = Template("""\
$schema

$context${today}Question: $question""")

CONTEXT = Template("""\
Reference material retrieved for this question (it may or may not help):

$chunks

""")

CHUNK = Template("""\
[$number] $chunk_id
$text""")

TODAY = Template("""\
Today is $today: read "today", "now" and "this year" as of that date.

""")


def _template_sha256() -> str:
    parts = [TEMPLATE_ID, SYSTEM, USER.template, CONTEXT.template, CHUNK.template, TODAY.template]
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


#: sha256 over every fixed text of the prompt, recorded with every prediction.
TEMPLATE_SHA256 = _template_sha256()
