"""SQL Server's type of a numeric expression, where the SQL alone can prove it.

sqlglot types every literal with a decimal point as DOUBLE, as DuckDB would; in SQL Server
``1.0`` is NUMERIC(2, 1) and ``1.0 * x / y`` is a NUMERIC whose scale follows from its
operands.  Where the text of a number is asked for (``CAST(x AS VARCHAR)``) that
difference is the whole answer: FLOAT prints 6 significant digits, NUMERIC prints every
decimal of its scale.  :func:`number_type` follows SQL Server's rules ("Precision, scale,
and length", "Data type precedence") over what it can read:

* literals: ``1e3`` is FLOAT; ``12.50`` is NUMERIC(4, 2); an integer literal is INT, and
  inside NUMERIC arithmetic NUMERIC of its own digits (SQL Server gives a constant the
  least precision it needs: ``1.0 / 3`` is NUMERIC(7, 6), ``0.333333``);
* CAST / CONVERT to a numeric type; CDM columns by their CDM type (CDM ``float`` is FLOAT);
* ``+ - * /`` and ``%``: FLOAT above REAL above NUMERIC above the integers; NUMERIC results
  by SQL Server's precision and scale formulas;
* SUM / MIN / MAX / AVG keep FLOAT and REAL; STDEV, VAR, SQRT, EXP, LOG, POWER of a
  FLOAT ... are FLOAT; COUNT is INT and COUNT_BIG BIGINT; CASE, COALESCE, ISNULL, IIF,
  NULLIF take the highest type of their branches; a scalar subquery its column's.

Anything else is None: the type is not proven, and a rule that needs it refuses.

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.annotate import annotate
>>> from curate.transpile.rules.tsql_dialect import SqlgoldTSQL
>>> sql = "SELECT 1.0 * COUNT(*) / COUNT(*), 1.0 / 3, CAST(1 AS FLOAT) / 3 FROM cdm.person"
>>> tree = annotate(parse_one(sql, read=SqlgoldTSQL), "tsql")
>>> [str(number_type(s)) for s in tree.selects]
['NUMERIC(24, 12)', 'NUMERIC(7, 6)', 'FLOAT']
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from curate.transpile.rules.tsql_dialect import int_param

#: The integer types, as NUMERIC(p, 0) when they meet a NUMERIC.
_INTEGER_DIGITS = {
    exp.DType.TINYINT: 3,
    exp.DType.UTINYINT: 3,
    exp.DType.SMALLINT: 5,
    exp.DType.INT: 10,
    exp.DType.BIGINT: 19,
    exp.DType.BIT: 1,
}
_DECIMALS = (exp.DType.DECIMAL,)
_FLOAT_FUNCTIONS = tuple(
    getattr(exp, name)
    for name in (
        "Sqrt",
        "Exp",
        "Ln",
        "Log",
        "Stddev",
        "StddevPop",
        "StddevSamp",
        "Variance",
        "VariancePop",
        "Sin",
        "Cos",
        "Tan",
        "Cot",
        "Asin",
        "Acos",
        "Atan",
        "Atan2",
        "Pi",
        "Rand",
    )
    if hasattr(exp, name)
)
_FLOAT_NAMES = frozenset({"ATN2", "LOG10", "SQUARE", "STDEV", "STDEVP", "VAR", "VARP"})
_KEEPS_TYPE = (exp.Sum, exp.Min, exp.Max, exp.Abs, exp.Avg)
_RANK = {"int": 0, "decimal": 1, "real": 2, "float": 3}
MAX_PRECISION = 38


@dataclass(frozen=True)
class NumberType:
    """``kind`` is int, decimal, real or float; precision and scale for decimal (and int)."""

    kind: str
    precision: int = 0
    scale: int = 0
    divides: bool = False  # a NUMERIC division somewhere inside: DuckDB computes it in DOUBLE

    def __str__(self) -> str:
        if self.kind == "decimal":
            return f"NUMERIC({self.precision}, {self.scale})"
        return {"int": "INT", "real": "REAL", "float": "FLOAT"}[self.kind]

    @property
    def approximate(self) -> bool:
        return self.kind in ("real", "float")

    def as_decimal(self) -> NumberType:
        """An integer as SQL Server converts it to meet a NUMERIC: NUMERIC(digits, 0)."""
        if self.kind == "int":
            return NumberType("decimal", self.precision, 0, self.divides)
        return self


FLOAT = NumberType("float")
REAL = NumberType("real")


def integer(digits: int) -> NumberType:
    return NumberType("int", digits, 0)


def _of_dtype(dtype: exp.DataType | None) -> NumberType | None:
    if dtype is None:
        return None
    kind = dtype.this
    if kind == exp.DType.DOUBLE:
        return FLOAT
    if kind == exp.DType.FLOAT:
        return REAL
    if kind in _INTEGER_DIGITS:
        return integer(_INTEGER_DIGITS[kind])
    if kind in _DECIMALS:
        params = dtype.expressions
        precision = int_param(dtype) if params else 18
        scale = int(params[1].name) if len(params) > 1 and params[1].name.isdigit() else 0
        if precision is None:
            return None
        return NumberType("decimal", precision, scale)
    return None


def _literal(node: exp.Literal) -> NumberType | None:
    if node.is_string:
        return None
    text = node.this
    if "e" in text.lower():
        return FLOAT
    whole, _, fraction = text.partition(".")
    digits = len(whole.lstrip("0")) + len(fraction)
    if fraction or digits > 10:
        return NumberType("decimal", max(digits, 1), len(fraction))
    return integer(max(digits, 1))


def _highest(types: list[NumberType]) -> NumberType | None:
    """The operand of highest precedence (FLOAT > REAL > NUMERIC > integers)."""
    if not types:
        return None
    top = max(types, key=lambda t: _RANK[t.kind])
    divides = any(t.divides for t in types)
    if top.kind != "decimal":
        return NumberType(top.kind, top.precision, top.scale, divides)
    decimals = [t.as_decimal() for t in types]
    scale = max(t.scale for t in decimals)
    whole = max(t.precision - t.scale for t in decimals)
    return NumberType("decimal", min(whole + scale, MAX_PRECISION), scale, divides)


def arithmetic(op: type[exp.Expression], left: NumberType, right: NumberType) -> NumberType:
    """SQL Server's type of ``left op right`` (precision and scale of NUMERIC results).

    >>> str(arithmetic(exp.Div, NumberType("decimal", 13, 1), integer(10)))
    'NUMERIC(24, 12)'
    """
    divides = (
        left.divides or right.divides or (op is exp.Div and "decimal" in (left.kind, right.kind))
    )
    if left.approximate or right.approximate:
        kind = "float" if "float" in (left.kind, right.kind) else "real"
        return NumberType(kind, divides=divides)
    if left.kind == right.kind == "int":
        return NumberType("int", max(left.precision, right.precision), 0, divides)
    a, b = left.as_decimal(), right.as_decimal()
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    if op in (exp.Add, exp.Sub):
        scale = max(s1, s2)
        precision = scale + max(p1 - s1, p2 - s2) + 1
    elif op is exp.Mul:
        precision, scale = p1 + p2 + 1, s1 + s2
    elif op is exp.Div:
        scale = max(6, s1 + p2 + 1)
        precision = p1 - s1 + s2 + scale
    else:  # modulo
        scale = max(s1, s2)
        precision = min(p1 - s1, p2 - s2) + scale
    return NumberType("decimal", precision, scale, divides)


_OPERATORS = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)


def number_type(node: exp.Expression | None) -> NumberType | None:
    """SQL Server's numeric type of ``node``, or None when it cannot be proven."""
    if node is None:
        return None
    if isinstance(node, exp.Alias | exp.Paren):
        return number_type(node.this)
    if isinstance(node, exp.Neg):
        return number_type(node.this)
    if isinstance(node, exp.Literal):
        return _literal(node)
    if isinstance(node, exp.Cast | exp.TryCast | exp.Convert):
        target = node.this if isinstance(node, exp.Convert) else node.to
        return _of_dtype(target) if isinstance(target, exp.DataType) else None
    if isinstance(node, exp.Column):
        return _of_dtype(node.type)
    if isinstance(node, _OPERATORS):
        left, right = number_type(node.this), number_type(node.expression)
        if left is None or right is None:
            return None
        return arithmetic(type(node), left, right)
    if isinstance(node, exp.Count):
        return integer(19 if node.args.get("big_int") else 10)
    if isinstance(node, exp.Window):
        return number_type(node.this)
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
        projections = node.this.expressions  # a scalar subquery: its one column's type
        return number_type(projections[0]) if len(projections) == 1 else None
    if isinstance(node, _FLOAT_FUNCTIONS):
        return FLOAT
    if isinstance(node, exp.Anonymous) and node.name.upper() in _FLOAT_NAMES:
        return FLOAT
    if isinstance(node, exp.Pow):
        base = number_type(node.this)
        return base if base is not None and base.approximate else None
    if isinstance(node, _KEEPS_TYPE):
        inner = number_type(node.this)
        return inner if inner is not None and inner.approximate else None
    return _branches(node)


def _branches(node: exp.Expression) -> NumberType | None:
    """CASE, COALESCE, ISNULL, IIF and NULLIF: the highest type of their branches."""
    if isinstance(node, exp.Case):
        values = [i.args.get("true") for i in node.args.get("ifs") or []]
        values.append(node.args.get("default"))
    elif isinstance(node, exp.If):
        values = [node.args.get("true"), node.args.get("false")]
    elif isinstance(node, exp.Coalesce):
        values = [node.this, *node.expressions]
        if node.args.get("is_null"):  # ISNULL: the type of its first argument
            values = [node.this]
    elif isinstance(node, exp.Nullif):
        values = [node.this]
    else:
        return None
    types = []
    for value in values:
        if value is None or isinstance(value, exp.Null):
            continue
        found = number_type(value)
        if found is None:
            return None
        types.append(found)
    return _highest(types)
