"""A project's settings: ``sqlgold.toml``, or ``[tool.sqlgold]`` in its ``pyproject.toml``.

A benchmark is scored on the same database, under the same today and profile, every
time; its settings are written once, in the folder of the benchmark (or any folder above
the current one: the nearest file is taken), and every command takes them as its
defaults; an option given on the command line overrides them.

.. code-block:: toml

    # sqlgold.toml
    db = "postgresql://reader:secret@dbhost:5432/omop"   # or a DuckDB file, or sc://host:port
    schema = "cdm"
    today = "2026-01-01"
    profile = "text2omop"
    timeout = 5
    jobs = 2
    split = "all"

A relative path (``db`` as a file, ``suite``) is read from the file's folder.  An unknown
key, or a value of the wrong kind, is an error naming the file and the key.

>>> settings = parse_settings({"timeout": 5, "jobs": 2}, "sqlgold.toml")
>>> settings["timeout"], settings["jobs"]
(5.0, 2)
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from score.errors import SqlgoldError

#: The file a project's settings are in (else ``pyproject.toml``'s ``[tool.sqlgold]``).
CONFIG_FILE = "sqlgold.toml"

STAGE = "config"


@dataclass(frozen=True)
class Setting:
    """One setting: what it means, the options it is the default of (by their parameter
    names in the commands), and its kind."""

    help: str
    params: tuple[str, ...]
    kind: str  # "path_or_url", "path", "text", "date", "seconds", "count", "choice:a|b"


SETTINGS: dict[str, Setting] = {
    "db": Setting(
        "the OMOP CDM: a DuckDB file, postgresql://... or sc://... (default: the embedded one)",
        ("db_path",),
        "path_or_url",
    ),
    "schema": Setting("the schema holding the CDM tables", ("schema",), "text"),
    "today": Setting("the fixed current date, YYYY-MM-DD", ("today",), "date"),
    "profile": Setting("the comparator profile", ("profile",), "text"),
    "timeout": Setting("seconds a query may take", ("timeout",), "seconds"),
    "max_rows": Setting("rows a query may return", ("max_rows",), "count"),
    "memory_limit": Setting("memory per query, e.g. 4GB", ("memory_limit",), "text"),
    "jobs": Setting("queries or records handled in parallel", ("jobs",), "count"),
    "suite": Setting("a test suite's folder scored with", ("suite",), "path"),
    "split": Setting("the split scored: test, train or all", ("split",), "choice:test|train|all"),
}


@dataclass(frozen=True)
class Config:
    """The settings found (``values``, by setting name) and the file they came from."""

    values: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @property
    def source(self) -> str:
        """Where the values came from, as a person reads it."""
        if self.path is None:
            return "no settings file"
        if self.path.name == "pyproject.toml":
            return f"{self.path} [tool.sqlgold]"
        return str(self.path)


def find_config(start: str | Path) -> Path | None:
    """The nearest ``sqlgold.toml``, or ``pyproject.toml`` holding ``[tool.sqlgold]``, in
    ``start`` or a folder above it (a ``sqlgold.toml`` first in each folder)."""
    import tomllib

    folder = Path(start).resolve()
    for here in (folder, *folder.parents):
        own = here / CONFIG_FILE
        if own.is_file():
            return own
        project = here / "pyproject.toml"
        if project.is_file():
            try:
                data = tomllib.loads(project.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue  # not this tool's file to judge
            if isinstance(data.get("tool"), dict) and "sqlgold" in data["tool"]:
                return project
    return None


def load_config(start: str | Path = ".") -> Config:
    """The settings in force in ``start`` (the current folder): the nearest file's, or
    none; an error naming the file for one that cannot be read or says what is not a
    setting."""
    import tomllib

    path = find_config(start)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SqlgoldError(f"cannot read: {e}", path=str(path), stage=STAGE) from None
    except tomllib.TOMLDecodeError as e:
        raise SqlgoldError(f"not TOML: {e}", path=str(path), stage=STAGE) from None
    if path.name == "pyproject.toml":
        data = data["tool"]["sqlgold"]
        if not isinstance(data, dict):
            raise SqlgoldError("[tool.sqlgold] is not a table", path=str(path), stage=STAGE)
    values = parse_settings(data, path)
    for name in ("db", "suite"):
        if name in values and _is_file_path(values[name]):
            values[name] = str((path.parent / values[name]).resolve())
    return Config(values, path)


def parse_settings(data: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """The settings of a parsed file, each checked against its kind."""
    values: dict[str, Any] = {}
    for key, value in data.items():
        setting = SETTINGS.get(key)
        if setting is None:
            known = ", ".join(SETTINGS)
            raise SqlgoldError(
                f"{key!r} is not a setting (known: {known})", path=str(path), stage=STAGE
            )
        values[key] = _checked(key, value, setting.kind, path)
    return values


def _checked(key: str, value: Any, kind: str, path: str | Path) -> Any:
    def wrong(what: str) -> SqlgoldError:
        return SqlgoldError(f"{key} = {value!r}: {what}", path=str(path), stage=STAGE)

    if kind in ("path_or_url", "path", "text"):
        if not isinstance(value, str) or not value.strip():
            raise wrong("a text is expected")
        return value
    if kind == "date":
        if isinstance(value, dt.date):
            return value.isoformat()
        try:
            return dt.date.fromisoformat(str(value)).isoformat()
        except ValueError:
            raise wrong("a date like 2026-01-01 is expected") from None
    if kind == "seconds":
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise wrong("a number of seconds above 0 is expected")
        return float(value)
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise wrong("a whole number of at least 1 is expected")
        return value
    choices = kind.removeprefix("choice:").split("|")
    if value not in choices:
        raise wrong(f"one of {', '.join(choices)} is expected")
    return value


def _is_file_path(value: str) -> bool:
    return "://" not in value


def default_map(command: Any, config: Config) -> dict[str, Any]:
    """click's ``default_map`` for ``command`` (a click group) and every command below it:
    each option whose parameter a setting names takes the setting's value."""
    by_param = {
        param: config.values[name]
        for name, setting in SETTINGS.items()
        if name in config.values
        for param in setting.params
    }
    return _defaults_of(command, by_param)


def _defaults_of(command: Any, by_param: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {
        p.name: by_param[p.name]
        for p in getattr(command, "params", ())
        if p.name in by_param and not getattr(p, "is_flag", False) and p.param_type_name == "option"
    }
    for name, sub in getattr(command, "commands", {}).items():
        below = _defaults_of(sub, by_param)
        if below:
            found[name] = below
    return found
