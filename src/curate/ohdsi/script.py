"""One query from a SQL Server script: temp tables become CTEs, no-op statements go.

Benchmark gold SQL must be one read-only SELECT, but OHDSI and SQL Server queries are
often scripts that fill ``#temp`` tables first.  :func:`to_single_query` reads the
script with sqlglot (one statement at a time) and, where that is sound, rewrites it as
one query with a CTE per temp table:

- ``SELECT ... INTO #t``, ``CREATE TABLE #t AS SELECT ...`` and ``CREATE TABLE #t (...)``
  followed by ``INSERT INTO #t ...`` (SELECT or VALUES; several INSERTs are a
  UNION ALL) define ``#t``, as long as that happens before anything reads it;
  values are CAST to the declared column types, as the INSERT would;
- ``DROP TABLE #t`` / ``TRUNCATE TABLE #t`` after the last read, the
  ``IF OBJECT_ID('tempdb..#t') IS NOT NULL DROP TABLE #t`` guard, ``USE``,
  ``SET NOCOUNT ON`` and the like, transactions and ``CREATE INDEX`` on temp tables
  change no result and are left out;
- ``DECLARE @v type = <literal>`` (or one ``SET @v = <literal>`` before use) is inlined
  as ``CAST(literal AS type)``.

Anything else raises :class:`SingleQueryError` with a reason from :data:`REASONS`.

>>> print(to_single_query('''
... SELECT person_id INTO #p FROM cdm.person WHERE year_of_birth < 1950;
... SELECT COUNT(*) AS n FROM #p;
... DROP TABLE #p;''').sql)
WITH p AS (
  SELECT
    person_id AS person_id
  FROM cdm.person
  WHERE
    year_of_birth < 1950
)
SELECT
  COUNT(*) AS n
FROM p
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import DialectType

from curate.ohdsi.statements import (
    NAME_CONFLICT,
    NO_QUERY,
    SEVERAL_QUERIES,
    SingleQueryError,
    parse_statements,
    temp_identifier,
    temp_name,
    temp_refs,
)
from curate.ohdsi.temp_tables import Body, Script, Temp, lift_with


@dataclass(frozen=True)
class SingleQuery:
    """The one query, and what was done to get it."""

    sql: str
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------
# Assembly.


def _cast(value: exp.Expr, to: exp.DataType) -> exp.Cast:
    return exp.Cast(this=value, to=to.copy())


def _fill(temp: Temp, body: Body) -> exp.Query:
    """An INSERT's rows as a SELECT of the table's columns, cast to their types."""
    assert temp.declared is not None
    names = [n for n, _ in temp.declared]
    given = body.columns if body.columns is not None else names
    at = {c.lower(): i for i, c in enumerate(given)}
    query = body.query
    if (
        isinstance(query, exp.Select)
        and not query.is_star
        and not query.args.get("order")
        and [g.lower() for g in given] == [n.lower() for n in names]
    ):
        filled = query.copy()
        filled.set(
            "expressions",
            [
                exp.alias_(_cast(sel.unalias().copy(), kind), name)
                for sel, (name, kind) in zip(query.selects, temp.declared, strict=True)
            ],
        )
        return filled
    source = "v" if isinstance(query, exp.Values) else "s"
    alias = exp.TableAlias(
        this=exp.to_identifier(source), columns=[exp.to_identifier(c) for c in given]
    )
    if isinstance(query, exp.Values):
        relation: exp.Expr = exp.Values(
            expressions=[r.copy() for r in query.expressions], alias=alias
        )
    else:
        relation = exp.Subquery(this=query.copy(), alias=alias)
    projections = [
        exp.alias_(
            _cast(exp.column(given[at[name.lower()]], table=source), kind)
            if name.lower() in at
            else _cast(exp.Null(), kind),
            name,
        )
        for name, kind in temp.declared
    ]
    return exp.select(*projections).from_(relation)


def _temp_query(temp: Temp) -> exp.Query:
    if temp.declared is None:
        query = temp.bodies[0].query
        if query.args.get("order") and not query.args.get("limit") and not query.args.get("offset"):
            query.set("order", None)
        return query
    if not temp.bodies:
        empty = [exp.alias_(_cast(exp.Null(), kind), name) for name, kind in temp.declared]
        return exp.select(*empty).where(exp.false())
    filled = [_fill(temp, body) for body in temp.bodies]
    return filled[0] if len(filled) == 1 else exp.union(*filled, distinct=False)


def _names(node: exp.Expr) -> set[str]:
    """Lower-case names a CTE could clash with: unqualified tables and CTE aliases."""
    out = {
        t.name.lower()
        for t in node.find_all(exp.Table)
        if not t.args.get("db") and temp_name(t) is None
    }
    out |= {c.alias.lower() for c in node.find_all(exp.CTE)}
    return out


def _rename_temps(node: exp.Expr, names: dict[str, str]) -> exp.Expr:
    def swap(n: exp.Expr) -> exp.Expr:
        if isinstance(n, exp.Table) and (name := temp_name(n)) in names:
            n.set("this", exp.to_identifier(names[name]))
        elif isinstance(n, exp.Column) and isinstance(ident := n.args.get("table"), exp.Identifier):
            key = temp_identifier(ident)
            if key in names:
                n.set("table", exp.to_identifier(names[key]))
        return n

    return node.transform(swap, copy=False)


def _body_query(body: Body) -> exp.Query:
    """The query that filled a table, with its WITH clauses, as a result of its own.

    A table has no order: an ORDER BY without TOP / OFFSET is left out.
    """
    query = body.query
    if query.args.get("order") and not query.args.get("limit") and not query.args.get("offset"):
        query.set("order", None)
    if body.ctes:
        query.set("with_", exp.With(expressions=list(body.ctes)))
    return query


def _written_result(script: Script) -> exp.Query:
    """The result of a script without a final SELECT: the table its last write fills.

    OHDSI scripts (Achilles analyses) end by writing their result to a temp or scratch
    table that nothing later reads; that table's rows are the script's answer.
    """
    if script.table_result is not None:
        target, body = script.table_result
        script.note(
            f"the script ends with SELECT INTO {target.sql('tsql')}: its query is the result"
        )
        return _body_query(body)
    if not script.writes:
        raise SingleQueryError(NO_QUERY, "the script has no final SELECT and fills no table")
    name = script.writes[-1]
    temp = script.temps[name]
    if temp.dropped or temp.truncated:
        raise SingleQueryError(
            NO_QUERY, f"the script has no final SELECT and empties its last table {name}"
        )
    if temp.read:
        raise SingleQueryError(
            NO_QUERY,
            f"the script has no final SELECT and its last table {name} is read before it is filled",
        )
    script.note(f"the script ends by filling {name}, which nothing reads: its rows are the result")
    if temp.declared is None and len(temp.bodies) == 1:
        del script.temps[name]
        return _body_query(temp.bodies[0])
    ident = exp.Identifier(
        this=temp.display,
        temporary=name.startswith("#") and not name.startswith("##"),
        global_=name.startswith("##"),
    )
    return exp.select("*").from_(exp.Table(this=ident))


def _assemble(script: Script) -> exp.Query:
    if len(script.finals) > 1:
        raise SingleQueryError(
            SEVERAL_QUERIES, f"the script has {len(script.finals)} SELECTs that return results"
        )
    final = script.finals[0] if script.finals else _written_result(script)
    needed: set[str] = set()
    pending = list(temp_refs(final))
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            for body in script.temps[name].bodies:
                pending.extend(temp_refs(body.query))
                for cte in body.ctes:
                    pending.extend(temp_refs(cte))
    for name in script.temps:
        if name not in needed:
            script.note(f"{name} is not used by the final query: left out")
    temps = [t for n, t in script.temps.items() if n in needed]

    parts = [final] + [b.query for t in temps for b in t.bodies]
    names_of = [_names(p) for p in parts]  # each part walked once (a script may have hundreds)
    taken = set().union(*names_of)
    for temp in temps:
        for body in temp.bodies:
            for cte in body.ctes:
                taken |= _names(cte)
    names: dict[str, str] = {}
    for temp in temps:
        base = candidate = temp.display
        n = 1
        while candidate.lower() in taken:
            candidate = f"{base}_tmp" if n == 1 else f"{base}_tmp{n}"
            n += 1
        taken.add(candidate.lower())
        names[temp.name] = candidate
        script.note(f"{temp.name} became CTE {candidate}")

    for temp in temps:
        for body in temp.bodies:
            if not body.ctes:
                continue
            others = set().union(
                *(n for p, n in zip(parts, names_of, strict=True) if p is not body.query)
            )
            clash = [c.alias for c in body.ctes if c.alias.lower() in others]
            if clash:
                raise SingleQueryError(
                    NAME_CONFLICT, f"WITH {clash[0]} of {temp.name} would hide another {clash[0]}"
                )

    # every tree here was parsed for this script and is read once: assembled in place
    ctes: list[exp.CTE] = []
    for temp in temps:
        lifted = [cte for body in temp.bodies for cte in body.ctes]
        ctes.extend(_rename_temps(cte, names) for cte in lifted)
        body = _rename_temps(_temp_query(temp), names)
        alias = exp.TableAlias(this=exp.to_identifier(names[temp.name]))
        ctes.append(exp.CTE(this=body, alias=alias))
    final = _rename_temps(final, names)
    if not ctes:
        return final
    ctes.extend(lift_with(final))
    seen: set[str] = set()
    for cte in ctes:
        if cte.alias.lower() in seen:
            raise SingleQueryError(NAME_CONFLICT, f"two CTEs would be named {cte.alias}")
        seen.add(cte.alias.lower())
    final.set("with_", exp.With(expressions=ctes))
    return final


def to_single_query(sql: str, *, dialect: str = "tsql", pretty: bool = True) -> SingleQuery:
    """One query equivalent to a SQL Server script, as ``dialect`` text.

    Raises :class:`SingleQueryError` when that is not sound (see :data:`REASONS`).

    >>> to_single_query("USE cdm; SET NOCOUNT ON; SELECT 1 AS one;").notes
    ('USE cdm left out', 'SET NOCOUNT ON left out')
    """
    query, notes = single_query_tree(sql, dialect)
    # the assembled tree is not used again: the generator may change it instead of a copy
    return SingleQuery(query.sql(dialect=dialect, pretty=pretty, copy=False), notes)


def single_query_tree(sql: str, dialect: DialectType = "tsql") -> tuple[exp.Expr, tuple[str, ...]]:
    """:func:`to_single_query`'s query as a tree, parsed by ``dialect``'s reader (the
    transpiler's own SQL Server reader reads it as it would read the query's text), and
    its notes.  The tree is the caller's to change."""
    script = Script()
    for _, stmt in parse_statements(sql, dialect):
        script.step(stmt)
    return _assemble(script), tuple(script.notes)
