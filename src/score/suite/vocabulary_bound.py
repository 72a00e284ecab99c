"""Near misses no variant can tell apart because every variant keeps the vocabulary.

A suite's variants share the base database's vocabulary tables (``concept``,
``concept_ancestor``, ...) and generate only the clinical rows.  A neighbour is
*vocabulary-bound* when its difference from its gold lives in the vocabulary alone:

* it reads vocabulary tables only; or
* its one edit is a LIKE pattern on a column of a vocabulary table (``LOWER(c.concept_name)
  LIKE '%biops%'`` for ``'%biopsy%'``), and no row of that table in the base vocabulary
  matches one pattern and not the other.

Such a neighbour is a near miss on some other vocabulary, but on this one it selects the
very same concepts: a person reads it in the build report, the suite cannot kill it.

>>> like_change("SELECT 1 FROM cdm.concept c WHERE LOWER(c.concept_name) LIKE '%biopsy%'",
...             "SELECT 1 FROM cdm.concept c WHERE LOWER(c.concept_name) LIKE '%biops%'")
('concept', 'LOWER(concept_name) LIKE $1', '%biopsy%', '%biops%')
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.cdm.duckdb_file import quote, use_cdm_schema
from score.cdm.schema import CDM_TABLES
from score.suite.row_guarantees import owner, sources
from score.suite.suite_file import VOCABULARY_TABLES

#: The CDM's tables a variant generates: a query that names none of them in its text is
#: parsed to see whether it reads the vocabulary only (one that does is not).
_GENERATED = tuple(sorted(set(CDM_TABLES) - set(VOCABULARY_TABLES)))


def reads_only_vocabulary(sql: str, dialect: str | None = None) -> bool:
    """Whether a query (written for ``dialect``, default DuckDB's) reads vocabulary
    tables only: it names at least one table, and every table it names is a vocabulary
    table, unqualified or in the ``cdm`` schema (as a variant holds it).  Every variant
    returns such a query's result on the base database's own vocabulary rows.

    >>> reads_only_vocabulary("SELECT concept_name FROM cdm.concept WHERE concept_id = 1")
    True
    >>> reads_only_vocabulary("SELECT COUNT(*) FROM cdm.person")
    False
    >>> reads_only_vocabulary("SELECT 1 FROM other.concept"), reads_only_vocabulary("SELECT 1")
    (False, False)
    """
    text = sql.lower()
    if any(name in text for name in _GENERATED):
        return False
    try:
        tables = list(parse_one(sql, read=dialect or "duckdb").find_all(exp.Table))
    except SqlglotError:
        return False
    return bool(tables) and all(
        isinstance(t.this, exp.Identifier)
        and t.name.lower() in VOCABULARY_TABLES
        and not t.catalog
        and t.db.lower() in ("", "cdm")
        for t in tables
    )


def like_change(gold_sql: str, neighbour_sql: str) -> tuple[str, str, str, str] | None:
    """(vocabulary table, the test as SQL with ``$1`` for the pattern, the gold's pattern,
    the neighbour's) when the one difference of the two queries is the pattern of a LIKE
    on a column of a vocabulary table; else None."""
    try:
        gold = parse_one(gold_sql, read="duckdb")
        near = parse_one(neighbour_sql, read="duckdb")
    except SqlglotError:
        return None
    likes = list(gold.find_all(exp.Like, exp.ILike)), list(near.find_all(exp.Like, exp.ILike))
    if len(likes[0]) != len(likes[1]):
        return None
    pairs = list(zip(*likes, strict=True))
    changed = [(a, b) for a, b in pairs if a.expression.sql() != b.expression.sql()]
    if len(changed) != 1 or not all(
        isinstance(x.expression, exp.Literal) and x.expression.is_string for x in changed[0]
    ):
        return None
    node, other = changed[0]
    copy = gold.copy()
    _replace_pattern(copy, node, other.expression)
    if copy.sql(dialect="duckdb") != near.sql(dialect="duckdb"):
        return None  # something else differs too
    columns = list(node.this.find_all(exp.Column))
    select = node.find_ancestor(exp.Select)
    found = sources(select) if select is not None else None
    if not columns or not found:
        return None
    aliases = {owner(c, found) for c in columns}
    if len(aliases) != 1 or None in aliases:
        return None
    table = found[aliases.pop()][0]  # type: ignore[index]
    if not isinstance(table, str) or table not in VOCABULARY_TABLES:
        return None
    test = node.copy()
    for c in test.find_all(exp.Column):
        c.set("table", None)
    test.set("expression", exp.Placeholder(this="1"))
    text = test.sql(dialect="duckdb").replace("?", "$1").replace(":1", "$1")
    return table, text, node.expression.name, other.expression.name


def _replace_pattern(tree: exp.Expr, node: exp.Expr, pattern: exp.Expr) -> None:
    for candidate in tree.find_all(type(node)):
        if candidate == node:
            candidate.set("expression", pattern.copy())
            return


def vocabulary_bound(
    base_db: str | Path, schema: str | None, pairs: list[tuple[str, str]]
) -> list[bool]:
    """For each (gold, neighbour), whether the neighbour is vocabulary-bound on the base
    database's vocabulary (see the module's docstring)."""
    out = [reads_only_vocabulary(n) for _, n in pairs]
    changes = {i: like_change(g, n) for i, (g, n) in enumerate(pairs) if not out[i]}
    if not any(changes.values()):
        return out
    con = duckdb.connect(str(base_db), read_only=True)
    try:
        use_cdm_schema(con, schema)
        for i, change in changes.items():
            if change is None:
                continue
            table, test, pattern, altered = change
            one, two = test.replace("$1", "$p"), test.replace("$1", "$q")
            try:
                differ = con.execute(
                    f"SELECT count(*) FROM {quote(table)} WHERE ({one}) IS DISTINCT FROM ({two})",
                    {"p": pattern, "q": altered},
                ).fetchall()[0][0]
            except duckdb.Error:
                continue
            out[i] = differ == 0
    finally:
        con.close()
    return out
