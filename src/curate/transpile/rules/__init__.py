"""The fix-up rules that carry SQL Server (or PostgreSQL) gold SQL into DuckDB faithfully.

:data:`RULES` lists every rule in the order it is applied.  ``parse`` rules act while
the SQL is read (see ``curate.transpile.rules.tsql_dialect``); ``names`` rules run on the parsed
tree; ``types`` rules run after the tree has been annotated with its SQL Server types.
Each entry names its function; every function has a docstring example.

>>> [rule.name for rule in RULES][:3]
['tsql_date_parts', 'float_is_double', 'case_insensitive_identifiers']
"""

from __future__ import annotations

from sqlglot import exp

from curate.transpile.rules import (
    convert,
    dates,
    number_text,
    numeric,
    oracle,
    strings,
    tables,
    top,
)
from curate.transpile.rules.base import (
    ALL_READS,
    ORACLE,
    TSQL_POSTGRES,
    Nodes,
    Rule,
    TranspileError,
    apply_rule,
)
from curate.transpile.rules.tsql_dialect import META_KEY

POSTGRES = frozenset({"postgres"})
POSTGRES_ORACLE = frozenset({"postgres", "oracle"})

__all__ = ["KNOWN_LIMITS", "RULES", "Rule", "TranspileError", "apply_rules", "parse_rules_used"]


RULES: tuple[Rule, ...] = (
    Rule(
        "tsql_date_parts",
        "DATEADD / DATEDIFF / DATEPART / DATENAME read with SQL Server's full date-part table "
        "(y = dayofyear, w = weekday, hh, mi, n, ss, mcs); DATENAME of a number is the text "
        "of DATEPART",
        phase="parse",
    ),
    Rule(
        "float_is_double",
        "FLOAT is FLOAT(53), a 64-bit DOUBLE (sqlglot writes REAL); REAL and FLOAT(1..24) "
        "stay REAL",
        phase="parse",
    ),
    Rule(
        "case_insensitive_identifiers",
        "names ignore case in SQL Server: every name is written in lower case before any "
        "other rule, so a repeated expression gets the same rewrite everywhere (aliases "
        "keep their case)",
        tables.case_insensitive_identifiers,
        phase="names",
    ),
    Rule(
        "qualify_cdm_tables",
        "CDM tables named without a schema (or with dbo) are read from cdm.<table>; CTE names "
        "are left alone",
        tables.qualify_cdm_tables,
        dialects=ALL_READS,
        phase="names",
    ),
    Rule(
        "unquote_identifiers",
        '[name] and "name" lose quotes they do not need (DuckDB names are case-insensitive)',
        tables.unquote_identifiers,
        dialects=TSQL_POSTGRES,
        phase="names",
    ),
    Rule(
        "oracle_no_dual",
        "SELECT ... FROM DUAL has no FROM",
        oracle.no_dual,
        dialects=ORACLE,
        phase="names",
    ),
    Rule(
        "oracle_join_marks",
        "the (+) outer join is an ANSI LEFT JOIN",
        oracle.join_marks,
        dialects=ORACLE,
        phase="names",
    ),
    Rule(
        "oracle_rownum",
        "ROWNUM <= n over one ordered subquery is ORDER BY ... LIMIT n; any other ROWNUM "
        "(rows in the order Oracle meets them) is refused",
        oracle.rownum,
        dialects=ORACLE,
        phase="names",
    ),
    Rule(
        "national_strings",
        "N'text' is plain 'text' (DuckDB text is Unicode), so its type is known to later rules",
        strings.national_strings,
        phase="names",
    ),
    Rule(
        "convert_styles",
        "CONVERT is CAST (not TRY_CAST); a date style formats a date with STRFTIME (a DATE "
        "without time) or reads a string; styles 1-8, 10-12, 20, 21, 23, 24, 101-108, 110-112, "
        "120, 121",
        convert.convert_styles,
    ),
    Rule(
        "now_functions",
        "GETDATE(), SYSDATETIME(), CURRENT_TIMESTAMP, GETUTCDATE() (and PostgreSQL's now()) "
        "become LOCALTIMESTAMP (DuckDB's CURRENT_TIMESTAMP has a time zone); CAST of it AS "
        "DATE is CURRENT_DATE",
        dates.now_functions,
        dialects=TSQL_POSTGRES,
    ),
    Rule(
        "oracle_now",
        "SYSDATE, SYSTIMESTAMP, CURRENT_DATE and CURRENT_TIMESTAMP are the local date and "
        "time: LOCALTIMESTAMP (sqlglot writes SYSDATE in UTC)",
        oracle.now,
        dialects=ORACLE,
    ),
    Rule(
        "oracle_empty_text_is_null",
        "Oracle has no empty string: '' is NULL, || skips NULLs (NULLIF(CONCAT(a, b), '')), "
        "and SUBSTR / TRIM / REPLACE / LPAD giving '' give NULL",
        oracle.empty_text_is_null,
        dialects=ORACLE,
    ),
    Rule(
        "oracle_trunc",
        "TRUNC(date, fmt) with Oracle's format elements (DD, MM, YYYY, Q, HH24, MI, IW); "
        "others refused",
        oracle.trunc,
        dialects=ORACLE,
    ),
    Rule(
        "oracle_date_arithmetic",
        "DATE + n adds n days; a difference involving a time of day is a fractional number "
        "of days (EPOCH(a - b) / 86400.0); a fraction of a day added is refused",
        oracle.date_arithmetic,
        dialects=ORACLE,
    ),
    Rule(
        "oracle_to_text",
        "TO_CHAR(date, fmt) of numeric format elements is STRFTIME; TO_NUMBER(text) is a "
        "DOUBLE; names, number formats and TO_NUMBER formats are refused",
        oracle.to_text,
        dialects=ORACLE,
    ),
    Rule(
        "date_string_literals",
        "date strings SQL Server reads ('20110101', '1/2/2011', '01-jan-2011') become ISO "
        "DATE / TIMESTAMP literals where a date is expected",
        dates.date_string_literals,
        dialects=TSQL_POSTGRES,
    ),
    Rule(
        "float_text",
        "CAST / CONVERT of FLOAT or REAL to text as SQL Server writes it: at most 6 "
        "significant digits, scientific notation past them (1.23457e+006); CONVERT styles "
        "1, 2, 3 always scientific with 8, 16, 17 digits; other styles as 0, legacy 126, "
        "128, 129 refused",
        number_text.float_text,
    ),
    Rule(
        "decimal_quotient_text",
        "CAST(a / b AS VARCHAR) of NUMERIC operands: SQL Server's quotient, truncated to its "
        "scale (1.0 / 3 is 0.333333), computed exactly (DuckDB divides DECIMALs in DOUBLE); "
        "nested divisions and precision over 38 refused",
        number_text.decimal_quotient_text,
    ),
    Rule(
        "text_of_number_or_time",
        "refuse CAST(number AS VARCHAR) whose SQL Server type cannot be told (FLOAT and "
        "NUMERIC print differently) and CAST(datetime AS VARCHAR) without a style",
        strings.text_of_number_or_time,
    ),
    Rule(
        "number_text_overflow",
        "CAST(number AS VARCHAR(n) / CHAR(n)) that does not fit is '*' for an integer and "
        "fails for NVARCHAR / NCHAR and DECIMAL (SQL Server's overflow), CHAR(n) pads",
        strings.number_text_overflow,
    ),
    Rule(
        "isnumeric_by_type",
        "ISNUMERIC(x) of a number is 1 (0 when NULL), of a date 0; of text it is refused "
        "(SQL Server's number formats)",
        numeric.isnumeric_by_type,
    ),
    Rule(
        "plus_concatenation",
        "string + string is concatenation (||); string + number converts the string to the "
        "number's type",
        strings.plus_concatenation,
    ),
    Rule(
        "date_arithmetic",
        "refuse DATE + n, DATE - n and DATE - DATE: SQL Server rejects them (operand type clash)",
        dates.date_arithmetic,
    ),
    Rule(
        "datetime_plus_days",
        "DATETIME + n and DATETIME - n add days (+ INTERVAL (n) DAY); DATETIME - DATETIME and "
        "fractional days are refused",
        dates.datetime_plus_days,
    ),
    Rule(
        "dateadd_truncates",
        "DATEADD(part, n, d) truncates a fractional n toward zero (2.7 days is 2); DuckDB "
        "rounds it",
        dates.dateadd_truncates,
    ),
    Rule(
        "dateadd_keeps_date",
        "DATEADD(day/week/month/quarter/year, n, date) stays a DATE (DuckDB's date + interval "
        "is a TIMESTAMP)",
        dates.dateadd_keeps_date,
    ),
    Rule(
        "datediff_week_sunday",
        "DATEDIFF(week, a, b) counts Sunday boundaries crossed, not whole weeks",
        dates.datediff_week_sunday,
    ),
    Rule(
        "datepart_weekday",
        "DATEPART(weekday, d) is 1 (Sunday) to 7 (Saturday) under DATEFIRST 7; DuckDB's "
        "DAYOFWEEK is 0 to 6",
        dates.datepart_weekday,
    ),
    Rule(
        "datepart_week",
        "DATEPART(week, d) counts weeks from the one holding January 1, weeks starting on "
        "Sunday (DuckDB's WEEK is the ISO week)",
        dates.datepart_week,
    ),
    Rule(
        "datepart_subsecond",
        "DATEPART(millisecond / microsecond, t) is the fraction of the second only",
        dates.datepart_subsecond,
    ),
    Rule(
        "avg_of_integers",
        "AVG of an integer expression is an integer truncated toward zero: CAST(TRUNC(AVG(x)) "
        "AS BIGINT)",
        numeric.avg_of_integers,
    ),
    Rule(
        "isnull_keeps_first_type",
        "ISNULL(int, fractional) converts the replacement to the integer type (COALESCE would not)",
        numeric.isnull_keeps_first_type,
    ),
    Rule(
        "floor_ceiling_of_integers",
        "FLOOR / CEILING of an integer is that integer, as in SQL Server (DuckDB returns a "
        "DOUBLE); ROUND(integer, n) is typed as the integer",
        numeric.floor_ceiling_of_integers,
    ),
    Rule(
        "integer_cast_truncates",
        "CAST(fractional AS INT) truncates toward zero (DuckDB rounds): CAST(TRUNC(x) AS INT)",
        numeric.integer_cast_truncates,
    ),
    Rule(
        "integer_division",
        "integer / integer is integer division truncated toward zero (DuckDB //)",
        numeric.integer_division,
        dialects=TSQL_POSTGRES,
    ),
    Rule(
        "decimal_default_scale",
        "DECIMAL / NUMERIC without precision is DECIMAL(18, 0) (DuckDB's default keeps 3 decimals)",
        numeric.decimal_default_scale,
    ),
    Rule(
        "numeric_unbounded",
        "PostgreSQL NUMERIC and Oracle NUMBER without precision become DOUBLE (DuckDB's "
        "default keeps 3 decimals)",
        numeric.numeric_unbounded,
        dialects=POSTGRES_ORACLE,
    ),
    Rule(
        "bit_is_boolean",
        "BIT is a 0/1 flag: BOOLEAN (DuckDB's BIT is a bit string)",
        numeric.bit_is_boolean,
    ),
    Rule(
        "varchar_length_truncates",
        "CAST(text AS VARCHAR(n)) keeps n characters (LEFT) and CHAR(n) pads; without a "
        "length n is 30",
        strings.varchar_length_truncates,
    ),
    Rule(
        "varchar_max",
        "VARCHAR(MAX) and NVARCHAR(MAX) are DuckDB's VARCHAR (sqlglot writes TEXT(MAX), "
        "which DuckDB rejects)",
        strings.varchar_max,
    ),
    Rule(
        "redundant_text_casts",
        "CAST(text AS TEXT), which sqlglot wraps around LEN / LEFT / RIGHT arguments, is dropped",
        strings.redundant_text_casts,
    ),
    Rule(
        "len_ignores_trailing_spaces",
        "LEN(x) does not count trailing spaces: LENGTH(RTRIM(x, ' '))",
        strings.len_ignores_trailing_spaces,
    ),
    Rule(
        "charindex_start",
        "CHARINDEX(s, x, start) with start <= 1 searches the whole string",
        strings.charindex_start,
    ),
    Rule(
        "like_bracket_classes",
        "LIKE patterns with [a-z] or [^a-z] classes become an anchored REGEXP_MATCHES",
        strings.like_bracket_classes,
    ),
    Rule(
        "statistics_names",
        "STDEVP, VARP, VAR become STDDEV_POP, VAR_POP, VARIANCE",
        numeric.statistics_names,
    ),
    Rule(
        "round_truncate",
        "ROUND(x, n, f) with f <> 0 truncates: TRUNC(x, n)",
        numeric.round_truncate,
    ),
    Rule(
        "top_with_ties",
        "TOP n WITH TIES becomes QUALIFY RANK() OVER (ORDER BY ...) <= n (DuckDB has no WITH "
        "TIES); refused with DISTINCT",
        top.top_with_ties,
    ),
)

#: What the transpile refuses or cannot fix (for the README, next to RULES).
KNOWN_LIMITS: tuple[str, ...] = (
    "refused: SELECT ... INTO, #temp tables, unresolved @parameters, TOP n PERCENT, "
    "more than one statement, anything but a query",
    "refused: PATINDEX, DATALENGTH, STR, CHOOSE, SOUNDEX, DIFFERENCE, FORMAT of numbers, "
    "SYSDATETIMEOFFSET, CONVERT date styles other than those listed (0/100, 9/109, 13/113, "
    "126, ...), the legacy float styles 126, 128, 129",
    "refused: the text of a number whose SQL Server type cannot be told (sqlglot types a "
    "decimal literal DOUBLE; SQL Server NUMERIC prints its scale, FLOAT 6 digits), of a "
    "NUMERIC quotient nested in another or over precision 38",
    "warned, then settled by verify: SQL Server's default collation ignores case and "
    "trailing spaces, DuckDB compares bytes (the gold is run again under DuckDB's NOCASE "
    "collation and dropped if the result changes)",
    "warned, and the gold dropped (unresolved_semantics): a / b whose operand types are "
    "unknown (tables or functions outside what sqlglot types) stays exact division; a query "
    "that cannot be typed gets no type-based rule",
    "assumed: us_english, DATEFIRST 7, DATEFORMAT mdy, two-digit year cutoff 2049; "
    "CDM datetime columns are DATETIME (3-digit milliseconds in style 121)",
    "not fixed: ISNULL(text, longer text) cuts the replacement to the first argument's "
    "declared length in SQL Server",
    "not fixed: GETUTCDATE() and SYSUTCDATETIME() lose their UTC offset (LOCALTIMESTAMP)",
    "left to sqlglot (checked by tests): ISNULL to COALESCE, IIF to CASE, COUNT_BIG to COUNT, "
    "TOP n to LIMIT, OFFSET / FETCH, NULLs sorting first, square brackets, NOLOCK dropped, "
    "CHARINDEX, LEFT / RIGHT, SUBSTRING, YEAR / MONTH / DAY, EOMONTH, LOG",
    "left to the comparator's tolerance: SQL Server keeps at most 6 decimals in some "
    "DECIMAL divisions (1.0 / 3 = 0.333333), DuckDB computes them in DOUBLE",
    "no rule needed: SUM of integers (DuckDB widens to HUGEINT where SQL Server would "
    "overflow and fail)",
)


def rules_for(read: str, phase: str) -> tuple[Rule, ...]:
    """The rules of one phase that apply when reading ``read``, in order.

    >>> [r.name for r in rules_for("duckdb", "names")]
    ['qualify_cdm_tables']
    """
    return tuple(rule for rule in RULES if rule.phase == phase and read in rule.dialects)


def apply_rules(
    tree: exp.Expression, read: str, phase: str
) -> tuple[exp.Expression, tuple[str, ...]]:
    """Apply the ``phase`` rules for ``read`` in order; the new tree and the rules that fired."""
    fired: list[str] = []
    nodes = None  # the tree's nodes, children first, while no rule has changed it
    for rule in rules_for(read, phase):
        if nodes is None:
            nodes = Nodes(tree)
        try:
            tree, changed = apply_rule(rule.fn, tree, nodes)
        except TranspileError as error:
            error.rule = error.rule or rule.name
            raise
        if changed:
            fired.append(rule.name)
            nodes = None
    return tree, tuple(fired)


def parse_rules_used(tree: exp.Expression) -> tuple[str, ...]:
    """The parse rules whose nodes are in ``tree``, in RULES order."""
    used = {node.meta.get(META_KEY) for node in tree.walk() if node.meta}
    return tuple(rule.name for rule in RULES if rule.phase == "parse" and rule.name in used)
