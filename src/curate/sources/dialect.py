"""Which SQL dialect a page was written in: SQL Server (OHDSI SQL), PostgreSQL or Oracle.

OHDSI QueryLibrary pages are meant to be OHDSI SQL (SQL Server plus SqlRender), but some
were written for Oracle or PostgreSQL.  Read as SQL Server they would be given SQL
Server's semantics silently (AVG of integers truncated, ``+`` as concatenation), so an
importer asks :func:`detect_dialect` first.  It looks only at tokens (string literals
and comments never count) for constructs one dialect has and SQL Server has not:

- Oracle: ``SYSDATE``, ``SYSTIMESTAMP``, ``NVL``, ``NVL2``, ``DECODE``, ``ADD_MONTHS``,
  ``MONTHS_BETWEEN``, ``ROWNUM``, ``FROM DUAL``, ``MINUS``, the ``(+)`` outer join;
- PostgreSQL: ``::`` casts, ``ILIKE``, ``DATE_PART``, ``AGE``, ``NOW()``,
  ``GENERATE_SERIES``, ``LIMIT``;
- either: ``||``, ``TO_DATE``, ``TO_CHAR``, ``TO_NUMBER``, ``EXTRACT``;
- SQL Server's own: ``TOP``, ``GETDATE``, ``DATEADD``, ``DATEDIFF``, ``ISNULL``,
  ``CHARINDEX``, ``LEN``, ``COUNT_BIG``, ``IIF``, ``[name]``, ``#temp``.

A page with no foreign construct is OHDSI SQL; with PostgreSQL's (and no SQL Server or
Oracle one) it is PostgreSQL; with Oracle's only, Oracle; anything else is ``mixed``,
and :func:`candidates` names the dialects whose readers must then agree on it (curation
reads it with each, and keeps it only if they give the same DuckDB query).

>>> detect_dialect("SELECT TOP 5 * FROM @cdm.person WHERE x = 'SYSDATE'")
Detected(dialect='ohdsi', markers=())
>>> detect_dialect("SELECT person_id::text FROM @cdm.person LIMIT 5")
Detected(dialect='postgres', markers=('::', 'LIMIT'))
>>> detect_dialect("SELECT NVL(x, 0) FROM t WHERE d < SYSDATE")
Detected(dialect='oracle', markers=('NVL', 'SYSDATE'))
>>> detect_dialect("SELECT TOP 1 a || b FROM t")
Detected(dialect='mixed', markers=('TOP', '||'))
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

_ORACLE_WORDS = frozenset(
    {
        "SYSDATE",
        "SYSTIMESTAMP",
        "NVL",
        "NVL2",
        "DECODE",
        "ADD_MONTHS",
        "MONTHS_BETWEEN",
        "ROWNUM",
        "MINUS",
    }
)
_POSTGRES_WORDS = frozenset({"ILIKE", "DATE_PART", "AGE", "GENERATE_SERIES", "LIMIT"})
_EITHER_WORDS = frozenset({"TO_DATE", "TO_CHAR", "TO_NUMBER", "EXTRACT"})
_TSQL_WORDS = frozenset(
    {
        "TOP",
        "GETDATE",
        "DATEADD",
        "DATEDIFF",
        "ISNULL",
        "CHARINDEX",
        "LEN",
        "COUNT_BIG",
        "IIF",
    }
)


@dataclass(frozen=True)
class Detected:
    dialect: str  # "ohdsi", "postgres", "oracle" or "mixed"
    markers: tuple[str, ...]  # the constructs that decided it, in order of appearance


_TEXT = frozenset(
    {
        TokenType.STRING,
        TokenType.NATIONAL_STRING,
        TokenType.IDENTIFIER,
        TokenType.RAW_STRING,
        TokenType.BIT_STRING,
        TokenType.HEX_STRING,
        TokenType.BYTE_STRING,
    }
)


def _marker(tokens: list[Token], i: int) -> tuple[str, str] | None:
    """(side, marker) for the token at ``i``: side is oracle, postgres, either or tsql."""
    tok = tokens[i]
    if tok.token_type in _TEXT:
        return None
    word = tok.text.upper()
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    before = tokens[i - 1] if i else None
    calls = after is not None and after.token_type == TokenType.L_PAREN
    if tok.token_type == TokenType.DCOLON:
        return "postgres", "::"
    if tok.token_type == TokenType.DPIPE:
        return "either", "||"
    if (
        tok.token_type == TokenType.L_BRACKET
        and before is not None
        and before.token_type
        in (TokenType.FROM, TokenType.JOIN, TokenType.DOT, TokenType.COMMA, TokenType.SELECT)
    ):
        return "tsql", "[name]"
    if tok.token_type == TokenType.HASH and after is not None and after.token_type == TokenType.VAR:
        return "tsql", "#temp"
    if (
        tok.token_type == TokenType.PLUS
        and before is not None
        and before.token_type == TokenType.L_PAREN
        and after is not None
        and after.token_type == TokenType.R_PAREN
    ):
        return "oracle", "(+)"
    if word == "DUAL" and before is not None and before.token_type == TokenType.FROM:
        return "oracle", "FROM DUAL"
    if word == "NOW" and calls:
        return "postgres", "NOW()"
    if word in _ORACLE_WORDS and (calls or word in ("SYSDATE", "SYSTIMESTAMP", "ROWNUM", "MINUS")):
        return "oracle", word
    if word in _POSTGRES_WORDS and (calls or word in ("ILIKE", "LIMIT")):
        return "postgres", word
    if word in _EITHER_WORDS and calls:
        return "either", word
    if word in _TSQL_WORDS and (calls or word == "TOP"):
        return "tsql", word
    return None


def detect_dialect(sql: str) -> Detected:
    """The dialect ``sql`` is written in (see the module doc); ``ohdsi`` if it cannot tell."""
    try:
        tokens = Tokenizer().tokenize(sql)
    except TokenError:
        return Detected("ohdsi", ())
    found: dict[str, list[str]] = {"oracle": [], "postgres": [], "either": [], "tsql": []}
    order: list[str] = []
    for i in range(len(tokens)):
        hit = _marker(tokens, i)
        if hit is not None and hit[1] not in order:
            found[hit[0]].append(hit[1])
            order.append(hit[1])
    foreign = found["oracle"] or found["postgres"] or found["either"]
    if not foreign:
        return Detected("ohdsi", ())
    if found["tsql"] or (found["oracle"] and found["postgres"]):
        return Detected("mixed", tuple(order))
    markers = tuple(m for m in order if m not in found["tsql"])
    if found["oracle"]:
        return Detected("oracle", markers)
    if found["postgres"]:
        return Detected("postgres", markers)
    return Detected("mixed", markers)  # only constructs both foreign dialects share


#: Which reader each marker's side calls for.
_SIDES = {
    "tsql": ("tsql",),
    "oracle": ("oracle",),
    "postgres": ("postgres",),
    "either": ("oracle", "postgres"),
}


def candidates(sql: str) -> tuple[str, ...]:
    """The dialects ``sql`` may be read in: every one whose constructs it uses.

    >>> candidates("SELECT TOP 1 a || b FROM t")
    ('tsql', 'oracle', 'postgres')
    >>> candidates("SELECT TO_CHAR(d, 'YYYY') FROM t")
    ('oracle', 'postgres')
    >>> candidates("SELECT 1")
    ('tsql',)
    """
    try:
        tokens = Tokenizer().tokenize(sql)
    except TokenError:
        return ("tsql",)
    found: list[str] = []
    for i in range(len(tokens)):
        hit = _marker(tokens, i)
        if hit is not None:
            found.extend(d for d in _SIDES[hit[0]] if d not in found)
    order = ("tsql", "oracle", "postgres")
    return tuple(d for d in order if d in found) or ("tsql",)
