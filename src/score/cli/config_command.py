"""``sqlgold config``: the settings every command takes as its defaults, and their source."""

from __future__ import annotations

import json

import click

from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import handle_errors


@click.command("config", context_settings=HELP)
@option("--json", "Print the settings as one JSON object.")
@handle_errors
def config_command(as_json: bool) -> None:
    """Print the settings in force here: those of the nearest sqlgold.toml (or
    pyproject.toml's [tool.sqlgold]) in this folder or above, each with where it came
    from, the others at their defaults; and the user cache folder.  An option given to a
    command overrides its setting."""
    from score.config import SETTINGS, load_config
    from score.defaults import DEFAULT_CACHE, cache_root

    config = load_config()
    root = click.get_current_context().find_root().command
    rows = []
    for name, setting in SETTINGS.items():
        if name in config.values:
            rows.append((name, config.values[name], config.source))
        else:
            rows.append((name, _built_in(root, setting.params), "default"))
    if as_json:
        found = {
            "settings": {n: {"value": v, "from": s} for n, v, s in rows},
            "file": str(config.path) if config.path else None,
            "cache_folder": str(cache_root()),
            "gold_cache": str(DEFAULT_CACHE),
        }
        click.echo(json.dumps(found, indent=2, sort_keys=True))
        return
    click.echo(f"settings file  {config.source}")
    for name, value, source in rows:
        shown = "(none)" if value is None else value
        click.echo(f"{name:<14} {shown}  [{source}]")
    click.echo(f"cache folder   {cache_root()}")


def _built_in(root: click.Command, params: tuple[str, ...]) -> object:
    """The default the commands give a setting's options, when they agree (the embedded
    database, 30 seconds, ...); "varies by command" when they do not."""
    found = {repr(d): d for d in _defaults(root, set(params))}
    if len(found) == 1:
        value = next(iter(found.values()))
        return str(value) if value is not None and not isinstance(value, int | float) else value
    return "varies by command" if found else None


def _defaults(command: click.Command, params: set[str]) -> list[object]:
    values = [p.default for p in command.params if p.name in params and not callable(p.default)]
    for sub in getattr(command, "commands", {}).values():
        values += _defaults(sub, params)
    return values
