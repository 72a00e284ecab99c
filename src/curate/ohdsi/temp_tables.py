"""A script read statement by statement: what each temp table and variable holds.

:class:`Script` keeps, for every ``#temp`` table, the queries that fill it (``SELECT ...
INTO``, ``CREATE TABLE ... AS``, ``INSERT``), whether it was read, dropped or truncated,
and every ``DECLARE``/``SET`` variable's constant value; no-op statements are noted and
left out.  :mod:`curate.ohdsi.script` assembles the one query from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from curate.ohdsi.statements import (
    CONTROL_FLOW,
    TEMP_COLUMNS,
    TEMP_MODIFIED,
    TEMP_REDEFINED,
    TEMP_SELF_REFERENCE,
    TEMP_UNDEFINED,
    UNSUPPORTED,
    VARIABLE,
    WRITES_DATABASE,
    SingleQueryError,
    short,
    temp_name,
    temp_refs,
)

_HARMLESS_OPTIONS = frozenset({"NOCOUNT", "XACT_ABORT"})
_DEFAULT_ON_OPTIONS = frozenset(
    {
        "ANSI_NULLS",
        "QUOTED_IDENTIFIER",
        "ANSI_WARNINGS",
        "ANSI_PADDING",
        "ANSI_NULL_DFLT_ON",
        "CONCAT_NULL_YIELDS_NULL",
        "ARITHABORT",
    }
)


#: Column constraints that do not change what an INSERT puts in a column.
_PLAIN_CONSTRAINTS = (
    exp.NotNullColumnConstraint,
    exp.PrimaryKeyColumnConstraint,
    exp.UniqueColumnConstraint,
    exp.CollateColumnConstraint,
)


#: Statements that may follow a SELECT INTO a database table: they cannot read it.
_AFTER_RESULT = (
    exp.Drop,
    exp.TruncateTable,
    exp.IfBlock,
    exp.Use,
    exp.Transaction,
    exp.Commit,
    exp.Set,
)


@dataclass
class Body:
    query: exp.Expr  # a Query, or Values for INSERT ... VALUES
    columns: list[str] | None  # INSERT column list (None: all declared, or SELECT INTO)
    ctes: list[exp.CTE]  # WITH clauses lifted off the statement


@dataclass
class Temp:
    name: str  # "#t"
    display: str  # the name as first written, without '#'
    declared: list[tuple[str, exp.DataType]] | None  # CREATE TABLE columns
    bodies: list[Body] = field(default_factory=list)
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


def into_holder(query: exp.Expr) -> exp.Select | None:
    """The SELECT carrying ``INTO`` in a query (leftmost of a set operation)."""
    while isinstance(query, exp.SetOperation):
        query = query.this
    if isinstance(query, exp.Select) and query.args.get("into"):
        return query
    return None


def lift_with(node: exp.Expr) -> list[exp.CTE]:
    with_ = node.args.get("with_")
    if not with_:
        return []
    node.set("with_", None)
    return list(with_.expressions)


class Script:
    """Walks the statements in order, keeping what each temp table and variable holds."""

    def __init__(self) -> None:
        self.temps: dict[str, Temp] = {}
        self.variables: dict[str, _Variable] = {}
        self.finals: list[exp.Query] = []
        self.notes: dict[str, None] = {}
        # temp tables in the order statements wrote them (SELECT INTO, CREATE, INSERT)
        self.writes: list[str] = []
        # a SELECT INTO a database table: allowed as the script's last statement only
        self.table_result: tuple[exp.Table, Body] | None = None

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
                    shown = short(stmt.sql("tsql"))
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
            raise SingleQueryError(
                VARIABLE, f"variable {name} is set to a non-constant {short(value.sql('tsql'))}"
            )
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

        # the statement was parsed for this script and is read once: changed in place
        return stmt.transform(swap, copy=False)

    # -- temp tables

    def _read(self, node: exp.Expr, defining: str | None = None) -> None:
        for name in temp_refs(node):
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

    def _new_temp(self, table: exp.Table, declared: list[tuple[str, exp.DataType]] | None) -> Temp:
        name = temp_name(table)
        assert name is not None
        if name in self.temps:
            raise SingleQueryError(TEMP_REDEFINED, f"{name} is defined more than once")
        temp = Temp(name, table.this.name, declared)
        self.temps[name] = temp
        return temp

    def _define(self, target: exp.Table, query: exp.Expr, ctes: list[exp.CTE]) -> None:
        name = temp_name(target)
        self._read(query, defining=name)
        for cte in ctes:
            self._read(cte, defining=name)
        temp = self._new_temp(target, None)
        temp.bodies.append(Body(query, None, ctes))
        self.writes.append(temp.name)

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
            ctes = lift_with(query)
            self._define(target, query, ctes)
            return
        columns: list[tuple[str, exp.DataType]] = []
        for column in stmt.this.expressions if isinstance(stmt.this, exp.Schema) else []:
            if not isinstance(column, exp.ColumnDef):
                self.note(f"table constraint on {temp_name(target)} left out")
                continue
            kind_type = column.args.get("kind")
            extra = [
                c.kind
                for c in column.args.get("constraints") or []
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
        self.writes.append(self._new_temp(target, columns).name)

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
        ctes = lift_with(stmt.copy()) + lift_with(query)
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
            raise SingleQueryError(
                TEMP_COLUMNS,
                f"INSERT into {name} gives {sorted(widths)} values for {width} columns",
            )
        temp.bodies.append(Body(query, columns, ctes))
        self.writes.append(name)

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
            raise SingleQueryError(
                UNSUPPORTED, f"{short(stmt.sql('tsql'))} changes how the query runs"
            )

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
        if self.table_result is not None and not isinstance(stmt, _AFTER_RESULT):
            table = self.table_result[0].sql("tsql")
            raise SingleQueryError(
                WRITES_DATABASE,
                f"SELECT INTO {table} writes a database table that later statements can read",
            )
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
                raise SingleQueryError(CONTROL_FLOW, f"control flow: {short(stmt.sql('tsql'))}")
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
            raise SingleQueryError(CONTROL_FLOW, f"control flow: {short(stmt.sql('tsql'))}")
        else:
            raise SingleQueryError(UNSUPPORTED, f"unsupported statement {short(stmt.sql('tsql'))}")

    def _query(self, query: exp.Query) -> None:
        holder = into_holder(query)
        if holder is None:
            self._read(query)
            self.finals.append(query)
            return
        target = holder.args["into"].this
        if not isinstance(target, exp.Table):
            raise SingleQueryError(WRITES_DATABASE, "SELECT INTO a database table")
        # the statement is the script's own (see step): INTO is taken off in place
        into_holder(query).set("into", None)
        ctes = lift_with(query)
        if temp_name(target):
            self._define(target, query, ctes)
            return
        # A new database table (SELECT INTO creates it): its rows are the query's, so as
        # the script's last statement it is the script's result.
        self._read(query)
        for cte in ctes:
            self._read(cte)
        self.table_result = (target, Body(query, None, ctes))
