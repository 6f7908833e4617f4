"""The ``skillreg`` group and its one error handler.

Commands (``registry``: the registry's own, ``client``: reading and installing from one) raise the project's
errors; the group turns each into one line on stderr and its exit code, so no command shows a traceback and
none needs its own handling. Exit codes are defined once, in ``core.errors``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..core.errors import EXIT_FAILURE, EXIT_INTERRUPTED, SkillRegError, os_error_message
from ..core.terminal import visible
from . import client, registry
from .context import Context


def _handle_error(exc: SkillRegError | OSError | KeyboardInterrupt) -> int:
    """The one handler: one line on stderr for an error the project knows, and the exit code to leave with."""
    if isinstance(exc, KeyboardInterrupt):
        click.echo("Interrupted.", err=True)
        return EXIT_INTERRUPTED
    if isinstance(exc, SkillRegError):
        click.echo(f"Error: {visible(str(exc))}", err=True)
        return exc.exit_code
    # A full, read-only or failing disk: the operation has already put things back.
    click.echo(f"Error: {visible(os_error_message(exc))}", err=True)
    return EXIT_FAILURE


class _Group(click.Group):
    """Runs every command (and the group itself) inside the one error handler."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (SkillRegError, OSError, KeyboardInterrupt) as exc:
            raise click.exceptions.Exit(_handle_error(exc)) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillreg")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              envvar="SKILLREG_CONFIG",
              help="registry.yaml to use (default: the nearest one above the current folder).")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None) -> None:
    """Validate, build and publish a registry of Agent Skills, and install skills from one."""
    ctx.obj = Context(config_path)


for _command in (*registry.COMMANDS, *client.COMMANDS):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="skillreg")


if __name__ == "__main__":
    main()
