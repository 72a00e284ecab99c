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

from collections.abc import Iterator
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from score.errors import SqlgoldError

# Reasons a script cannot be made one query.
PARSE_ERROR = "sql_parse_error"
NO_QUERY = "no_final_select"
SEVERAL_QUERIES = "several_final_selects"
TEMP_UNDEFINED = "temp_table_used_before_definition"
TEMP_REDEFINED = "temp_table_defined_twice"
TEMP_MODIFIED = "temp_table_modified"
TEMP_SELF_REFERENCE = "temp_table_reads_itself"
TEMP_COLUMNS = "temp_table_columns"
WRITES_DATABASE = "writes_to_database"
CONTROL_FLOW = "control_flow"
VARIABLE = "unresolved_variable"
UNSUPPORTED = "unsupported_statement"
NAME_CONFLICT = "cte_name_conflict"

REASONS: tuple[str, ...] = (
    PARSE_ERROR, NO_QUERY, SEVERAL_QUERIES, TEMP_UNDEFINED, TEMP_REDEFINED, TEMP_MODIFIED,
    TEMP_SELF_REFERENCE, TEMP_COLUMNS, WRITES_DATABASE, CONTROL_FLOW, VARIABLE, UNSUPPORTED,
    NAME_CONFLICT,
)

_CONTROL_WORDS = frozenset({"WHILE", "END", "GOTO", "RETURN", "BREAK", "CONTINUE", "WAITFOR"})
_HARMLESS_OPTIONS = frozenset({"NOCOUNT", "XACT_ABORT"})
_DEFAULT_ON_OPTIONS = frozenset({
    "ANSI_NULLS", "QUOTED_IDENTIFIER", "ANSI_WARNINGS", "ANSI_PADDING", "ANSI_NULL_DFLT_ON",
    "CONCAT_NULL_YIELDS_NULL", "ARITHABORT",
})


#: Column constraints that do not change what an INSERT puts in a column.
_PLAIN_CONSTRAINTS = (
    exp.NotNullColumnConstraint, exp.PrimaryKeyColumnConstraint, exp.UniqueColumnConstraint,
    exp.CollateColumnConstraint,
)


class SingleQueryError(SqlgoldError):
    """A script that cannot soundly be made one query; ``reason`` is one of REASONS."""

    stage = "ohdsi"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class SingleQuery:
    """The one query, and what was done to get it."""

    sql: str
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------
# Statements.


def split_statements(sql: str, dialect: str = "tsql") -> list[str]:
    """The statements of a script as text, split at ``;`` and ``GO`` lines (by tokens).

    >>> split_statements("SELECT ';' AS x; SELECT 2\\nGO\\nSELECT 3")
    ["SELECT ';' AS x", 'SELECT 2', 'SELECT 3']
    """
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except TokenError as e:
        raise SingleQueryError(PARSE_ERROR, f"cannot tokenize: {e}") from None
    out: list[str] = []
    start = 0  # where the current statement's text begins
    has_tokens = False
    for i, tok in enumerate(tokens):
        is_go = (
            tok.text.upper() == "GO"
            and (i == 0 or tokens[i - 1].line < tok.line)
            and (i + 1 == len(tokens) or tokens[i + 1].line > tok.line)
        )
        if tok.token_type == sqlglot.TokenType.SEMICOLON or is_go:
            if has_tokens:
                out.append(sql[start : tok.start].strip())
            start, has_tokens = tok.end + 1, False
        else:
            has_tokens = True
    if has_tokens:
        out.append(sql[start:].strip())
    return out


def parse_statements(sql: str, dialect: str = "tsql") -> list[exp.Expr]:
    """Each statement of a script parsed on its own (so an IF takes only its own)."""
    statements: list[exp.Expr] = []
    tokenizer = Dialect.get_or_raise(dialect)
    for text in split_statements(sql, dialect):
        words = [t.text.upper() for t in tokenizer.tokenize(text)[:2]] + ["", ""]
        if words[0] in _CONTROL_WORDS or (
            words[0] == "BEGIN" and words[1] not in ("TRAN", "TRANSACTION")
        ):
            raise SingleQueryError(CONTROL_FLOW, f"control flow: {_short(text)}")
        try:
            parsed = sqlglot.parse(text, read=dialect)
        except ParseError as e:
            detail = e.errors[0] if e.errors else {}
            where = f" (line {detail['line']})" if detail.get("line") else ""
            what = detail.get("description") or str(e).splitlines()[0]
            if "<Token" in what and detail.get("highlight"):
                what = f"{what.split('<Token')[0].rstrip()} {detail['highlight']!r}"
            raise SingleQueryError(
                PARSE_ERROR, f"cannot parse {_short(text)!r}{where}: {what}"
            ) from None
        statements.extend(s for s in parsed if s is not None)
    return statements


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


# ---------------------------------------------------------------------------------------
# Temp tables and variables.


def temp_name(table: exp.Expr) -> str | None:
    """``#t`` / ``##t`` (lower case) if ``table`` is a temp table reference, else None."""
    if not isinstance(table, exp.Table) or table.args.get("db"):
        return None
    return _temp_identifier(table.this)


def _temp_identifier(ident: exp.Expr | None) -> str | None:
    if not isinstance(ident, exp.Identifier):
        return None
    if ident.args.get("global_"):
        return "##" + ident.name.lower()
    if ident.args.get("temporary"):
        return "#" + ident.name.lower()
    return None


def _temp_refs(node: exp.Expr) -> Iterator[str]:
    for table in node.find_all(exp.Table):
        if (name := temp_name(table)) is not None:
            yield name


@dataclass
class _Body:
    query: exp.Expr  # a Query, or Values for INSERT ... VALUES
    columns: list[str] | None  # INSERT column list (None: all declared, or SELECT INTO)
    ctes: list[exp.CTE]  # WITH clauses lifted off the statement


@dataclass
class _Temp:
    name: str  # "#t"
    display: str  # the name as first written, without '#'
    declared: list[tuple[str, exp.DataType]] | None  # CREATE TABLE columns
    bodies: list[_Body] = field(default_factory=list)
    read: bool = False
    dropped: bool = False
    truncated: bool = False


@dataclass
class _Variable:
    type: exp.DataType
    value: exp.Expr | None = None
    used: bool = False


def _is_constant(node: exp.Expr) -> bool:
    if isinstance(node, exp.Literal | exp.Null | exp.Boolean):
        return True
    if isinstance(node, exp.Neg | exp.Paren):
        return _is_constant(node.this)
    if isinstance(node, exp.Cast):
        return _is_constant(node.this)
    return False


def _variable_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Parameter) and isinstance(node.this, exp.Var | exp.Identifier):
        return "@" + node.this.name.lower()
    return None


def _into(query: exp.Expr) -> exp.Select | None:
    """The SELECT carrying ``INTO`` in a query (leftmost of a set operation)."""
    while isinstance(query, exp.SetOperation):
        query = query.this
    if isinstance(query, exp.Select) and query.args.get("into"):
        return query
    return None


def _lift_with(node: exp.Expr) -> list[exp.CTE]:
    with_ = node.args.get("with_")
    if not with_:
        return []
    node.set("with_", None)
    return list(with_.expressions)


class _Script:
    """Walks the statements in order, keeping what each temp table and variable holds."""

    def __init__(self) -> None:
        self.temps: dict[str, _Temp] = {}
        self.variables: dict[str, _Variable] = {}
        self.finals: list[exp.Query] = []
        self.notes: dict[str, None] = {}

    def note(self, text: str) -> None:
        self.notes.setdefault(text, None)

    # -- variables

    def _declare(self, stmt: exp.Declare) -> None:
        for item in stmt.expressions:
            names = item.this if isinstance(item.this, list) else [item.this]
            kind = item.args.get("kind")
            default = item.args.get("default")
            for node in names:
                name = _variable_name(node)
                if name is None or not isinstance(kind, exp.DataType):
                    shown = _short(stmt.sql("tsql"))
                    raise SingleQueryError(VARIABLE, f"cannot read DECLARE {shown}")
                if name in self.variables:
                    raise SingleQueryError(VARIABLE, f"variable {name} declared twice")
                self.variables[name] = _Variable(kind)
                if default:
                    self._assign(name, default)

    def _assign(self, name: str, value: exp.Expr) -> None:
        var = self.variables.get(name)
        if var is None:
            raise SingleQueryError(VARIABLE, f"variable {name} is not declared")
        if var.value is not None or var.used:
            raise SingleQueryError(VARIABLE, f"variable {name} is assigned more than once")
        if not _is_constant(value):
            raise SingleQueryError(VARIABLE, f"variable {name} is set to a non-constant "
                                   f"{_short(value.sql('tsql'))}")
        var.value = exp.Cast(this=value.copy(), to=var.type.copy())
        self.note(f"variable {name} inlined as {var.value.sql('tsql')}")

    def _inline_variables(self, stmt: exp.Expr) -> exp.Expr:
        def swap(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.Parameter):
                name = _variable_name(node)
                var = self.variables.get(name) if name else None
                if var is None or var.value is None:
                    shown = name or node.sql("tsql")
                    raise SingleQueryError(VARIABLE, f"variable {shown} has no known value")
                var.used = True
                return var.value.copy()
            return node

        return stmt.transform(swap, copy=True)

    # -- temp tables

    def _read(self, node: exp.Expr, defining: str | None = None) -> None:
        for name in _temp_refs(node):
            if name == defining:
                raise SingleQueryError(TEMP_SELF_REFERENCE, f"{name} is read while it is filled")
            temp = self.temps.get(name)
            if temp is None:
                raise SingleQueryError(TEMP_UNDEFINED, f"{name} is used before it is defined")
            if temp.dropped:
                raise SingleQueryError(TEMP_UNDEFINED, f"{name} is used after DROP TABLE")
            if temp.truncated:
                raise SingleQueryError(TEMP_MODIFIED, f"{name} is used after TRUNCATE")
            temp.read = True

    def _new_temp(self, table: exp.Table, declared: list[tuple[str, exp.DataType]] | None) -> _Temp:
        name = temp_name(table)
        assert name is not None
        if name in self.temps:
            raise SingleQueryError(TEMP_REDEFINED, f"{name} is defined more than once")
        temp = _Temp(name, table.this.name, declared)
        self.temps[name] = temp
        return temp

    def _define(self, target: exp.Table, query: exp.Expr, ctes: list[exp.CTE]) -> None:
        name = temp_name(target)
        self._read(query, defining=name)
        for cte in ctes:
            self._read(cte, defining=name)
        temp = self._new_temp(target, None)
        temp.bodies.append(_Body(query, None, ctes))

    def _create(self, stmt: exp.Create) -> None:
        kind = (stmt.args.get("kind") or "").upper()
        if "INDEX" in kind:
            table = stmt.this.args.get("table") if isinstance(stmt.this, exp.Index) else None
            if table is not None and temp_name(table):
                self.note(f"CREATE INDEX on {temp_name(table)} left out")
                return
            raise SingleQueryError(WRITES_DATABASE, f"CREATE {kind} writes to the database")
        target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
        if kind != "TABLE" or not isinstance(target, exp.Table) or not temp_name(target):
            raise SingleQueryError(WRITES_DATABASE, f"CREATE {kind} writes to the database")
        if stmt.expression is not None:  # CREATE TABLE #t AS SELECT
            query = stmt.expression.copy()
            ctes = _lift_with(query)
            self._define(target, query, ctes)
            return
        columns: list[tuple[str, exp.DataType]] = []
        for column in stmt.this.expressions if isinstance(stmt.this, exp.Schema) else []:
            if not isinstance(column, exp.ColumnDef):
                self.note(f"table constraint on {temp_name(target)} left out")
                continue
            kind_type = column.args.get("kind")
            extra = [
                c.kind for c in column.args.get("constraints") or []
                if not isinstance(c.kind, _PLAIN_CONSTRAINTS)
            ]
            if not isinstance(kind_type, exp.DataType) or extra:
                raise SingleQueryError(
                    TEMP_COLUMNS,
                    f"column {column.name} of {temp_name(target)} is generated or defaulted",
                )
            columns.append((column.name, kind_type))
        if not columns:
            raise SingleQueryError(TEMP_COLUMNS, f"{temp_name(target)} has no columns")
        self._new_temp(target, columns)

    def _insert(self, stmt: exp.Insert) -> None:
        target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
        name = temp_name(target) if isinstance(target, exp.Table) else None
        if name is None:
            raise SingleQueryError(WRITES_DATABASE, "INSERT writes to the database")
        temp = self.temps.get(name)
        if temp is None or temp.dropped:
            raise SingleQueryError(TEMP_UNDEFINED, f"INSERT into {name} before CREATE TABLE")
        if temp.declared is None:
            raise SingleQueryError(TEMP_MODIFIED, f"INSERT into {name} after SELECT INTO")
        if temp.read or temp.truncated:
            raise SingleQueryError(TEMP_MODIFIED, f"{name} is filled after it was read")
        query = stmt.expression
        if not isinstance(query, exp.Query | exp.Values):
            raise SingleQueryError(UNSUPPORTED, f"INSERT into {name} without SELECT or VALUES")
        query = query.copy()
        ctes = _lift_with(stmt.copy()) + _lift_with(query)
        self._read(query, defining=name)
        for cte in ctes:
            self._read(cte, defining=name)
        declared = [c.lower() for c, _ in temp.declared]
        columns = None
        if isinstance(stmt.this, exp.Schema):
            columns = [c.name for c in stmt.this.expressions]
            unknown = [c for c in columns if c.lower() not in declared]
            if unknown:
                raise SingleQueryError(TEMP_COLUMNS, f"{name} has no column {unknown[0]}")
        width = len(columns) if columns is not None else len(declared)
        if isinstance(query, exp.Values):
            widths = {len(row.expressions) for row in query.expressions}
        elif query.is_star:
            widths = {width}
        else:
            widths = {len(query.selects)}
        if widths != {width}:
            raise SingleQueryError(TEMP_COLUMNS, f"INSERT into {name} gives {sorted(widths)} "
                                   f"values for {width} columns")
        temp.bodies.append(_Body(query, columns, ctes))

    def _drop(self, tables: list[exp.Expr], verb: str) -> None:
        names = [temp_name(t) for t in tables]
        if not all(names):
            raise SingleQueryError(WRITES_DATABASE, f"{verb} of a database table")
        for name in names:
            temp = self.temps.get(name)
            if temp is None:
                self.note(f"{verb} {name} before it exists left out")
            elif verb == "DROP TABLE":
                temp.dropped = True
            else:
                temp.truncated = True

    def _set(self, stmt: exp.Set) -> None:
        for item in stmt.expressions:
            eq = item.this
            if isinstance(eq, exp.EQ) and (name := _variable_name(eq.this)):
                self._assign(name, eq.expression)
                continue
            option = eq.this.name.upper() if isinstance(eq, exp.EQ) else ""
            value = eq.expression.name.upper() if isinstance(eq, exp.EQ) else ""
            if option in _HARMLESS_OPTIONS or (option in _DEFAULT_ON_OPTIONS and value == "ON"):
                self.note(f"SET {option} {value} left out")
                continue
            raise SingleQueryError(UNSUPPORTED, f"{_short(stmt.sql('tsql'))} changes how "
                                   "the query runs")

    def _guarded_drop(self, stmt: exp.IfBlock) -> list[exp.Expr] | None:
        """Tables of ``IF OBJECT_ID(...) IS NOT NULL DROP TABLE #t``, else None."""
        block = stmt.args.get("true")
        if stmt.args.get("false") or not isinstance(block, exp.Block):
            return None
        if not stmt.this.find(exp.ObjectId) or len(block.expressions) != 1:
            return None
        drop = block.expressions[0]
        if isinstance(drop, exp.Drop) and (drop.args.get("kind") or "").upper() == "TABLE":
            return list(drop.args.get("tables") or [drop.this])
        return None

    # -- one statement

    def step(self, stmt: exp.Expr) -> None:
        if isinstance(stmt, exp.Declare):
            self._declare(stmt)
            return
        if isinstance(stmt, exp.Set):
            self._set(stmt)
            return
        if isinstance(stmt, exp.Query) and any(
            isinstance(p, exp.EQ) and _variable_name(p.this) for p in stmt.selects
        ):
            raise SingleQueryError(VARIABLE, "SELECT assigns a variable")
        stmt = self._inline_variables(stmt)
        if isinstance(stmt, exp.Use):
            self.note(f"{stmt.sql('tsql')} left out")
        elif isinstance(stmt, exp.Transaction | exp.Commit):
            self.note("transaction statements left out")
        elif isinstance(stmt, exp.IfBlock):
            tables = self._guarded_drop(stmt)
            if tables is None:
                raise SingleQueryError(CONTROL_FLOW, f"control flow: {_short(stmt.sql('tsql'))}")
            self._drop(tables, "DROP TABLE")
        elif isinstance(stmt, exp.Drop):
            if (stmt.args.get("kind") or "").upper() != "TABLE":
                raise SingleQueryError(WRITES_DATABASE, "DROP of a database object")
            self._drop(list(stmt.args.get("tables") or [stmt.this]), "DROP TABLE")
        elif isinstance(stmt, exp.TruncateTable):
            self._drop(list(stmt.expressions), "TRUNCATE TABLE")
        elif isinstance(stmt, exp.Create):
            self._create(stmt)
        elif isinstance(stmt, exp.Insert):
            self._insert(stmt)
        elif isinstance(stmt, exp.Update | exp.Delete | exp.Merge | exp.Alter):
            target = stmt.this
            name = temp_name(target) if isinstance(target, exp.Table) else None
            verb = type(stmt).__name__.upper()
            if name is not None:
                raise SingleQueryError(TEMP_MODIFIED, f"{verb} changes {name}")
            raise SingleQueryError(WRITES_DATABASE, f"{verb} writes to the database")
        elif isinstance(stmt, exp.Query):
            self._query(stmt)
        elif isinstance(stmt, exp.Block | exp.WhileBlock):
            raise SingleQueryError(CONTROL_FLOW, f"control flow: {_short(stmt.sql('tsql'))}")
        else:
            raise SingleQueryError(UNSUPPORTED, f"unsupported statement {_short(stmt.sql('tsql'))}")

    def _query(self, query: exp.Query) -> None:
        holder = _into(query)
        if holder is None:
            self._read(query)
            self.finals.append(query)
            return
        target = holder.args["into"].this
        if not isinstance(target, exp.Table) or not temp_name(target):
            raise SingleQueryError(WRITES_DATABASE, "SELECT INTO a database table")
        query = query.copy()
        _into(query).set("into", None)
        ctes = _lift_with(query)
        self._define(target, query, ctes)


# ---------------------------------------------------------------------------------------
# Assembly.


def _cast(value: exp.Expr, to: exp.DataType) -> exp.Cast:
    return exp.Cast(this=value, to=to.copy())


def _fill(temp: _Temp, body: _Body) -> exp.Query:
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
        filled.set("expressions", [
            exp.alias_(_cast(sel.unalias().copy(), kind), name)
            for sel, (name, kind) in zip(query.selects, temp.declared, strict=True)
        ])
        return filled
    source = "v" if isinstance(query, exp.Values) else "s"
    alias = exp.TableAlias(this=exp.to_identifier(source),
                           columns=[exp.to_identifier(c) for c in given])
    if isinstance(query, exp.Values):
        relation: exp.Expr = exp.Values(expressions=[r.copy() for r in query.expressions],
                                        alias=alias)
    else:
        relation = exp.Subquery(this=query.copy(), alias=alias)
    projections = [
        exp.alias_(
            _cast(exp.column(given[at[name.lower()]], table=source), kind)
            if name.lower() in at else _cast(exp.Null(), kind),
            name,
        )
        for name, kind in temp.declared
    ]
    return exp.select(*projections).from_(relation)


def _temp_query(temp: _Temp) -> exp.Query:
    if temp.declared is None:
        query = temp.bodies[0].query.copy()
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
            key = _temp_identifier(ident)
            if key in names:
                n.set("table", exp.to_identifier(names[key]))
        return n

    return node.transform(swap, copy=True)


def _assemble(script: _Script) -> exp.Query:
    if not script.finals:
        raise SingleQueryError(NO_QUERY, "the script has no final SELECT")
    if len(script.finals) > 1:
        raise SingleQueryError(SEVERAL_QUERIES, f"the script has {len(script.finals)} SELECTs "
                               "that return results")
    final = script.finals[0]
    needed: set[str] = set()
    pending = list(_temp_refs(final))
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            for body in script.temps[name].bodies:
                pending.extend(_temp_refs(body.query))
                for cte in body.ctes:
                    pending.extend(_temp_refs(cte))
    for name in script.temps:
        if name not in needed:
            script.note(f"{name} is not used by the final query: left out")
    temps = [t for n, t in script.temps.items() if n in needed]

    taken = _names(final)
    for temp in temps:
        for body in temp.bodies:
            taken |= _names(body.query)
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

    parts = [final] + [b.query for t in temps for b in t.bodies]
    for temp in temps:
        for body in temp.bodies:
            others = set().union(*(_names(p) for p in parts if p is not body.query))
            clash = [c.alias for c in body.ctes if c.alias.lower() in others]
            if clash:
                raise SingleQueryError(
                    NAME_CONFLICT, f"WITH {clash[0]} of {temp.name} would hide another {clash[0]}"
                )

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
    ctes.extend(_lift_with(final))
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
    script = _Script()
    for stmt in parse_statements(sql, dialect):
        script.step(stmt)
    query = _assemble(script)
    return SingleQuery(query.sql(dialect=dialect, pretty=pretty), tuple(script.notes))
