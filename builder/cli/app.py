"""The ``skillreg`` group and its one error handler.

Commands (``registry``: the registry's own, ``client``: reading and installing from one) raise the project's
errors; the group turns each into one line on stderr and its exit code, so no command shows a traceback and
none needs its own handling. Exit codes are defined once, in ``core.errors``. The client's commands are imported
only when one of them is asked for (Click's ``list_commands``/``get_command``), so `skillreg validate` starts
without them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..core.errors import EXIT_FAILURE, EXIT_INTERRUPTED, SkillRegError, os_error_message
from ..core.terminal import visible
from . import registry
from .adopt import init
from .baseline import baseline
from .context import Context
from .trust import trust


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


# Top-level modules of the `registry` extra (pyproject.toml): a client-only install has none of them, and a command
# over a registry's skills that imports one says which extra to install instead of showing a traceback.
REGISTRY_EXTRA_MODULES = frozenset({"mkdocs", "material", "nh3", "markdown_it", "mdit_py_plugins", "semver",
                                    "jinja2", "markdown", "markupsafe"})


WITH_EXTRA = "'skill-registry[registry] @ git+https://github.com/skill-registry/skill-registry'"


def extra_install(prefix: Path) -> str:
    """How to add the `registry` extra to the installation in ``prefix``: the one command for a pipx or uv tool
    environment (each leaves its own file there), else pip's, with pipx's and uv's forms beside it."""
    if (prefix / "pipx_metadata.json").is_file():
        return f"pipx install --force {WITH_EXTRA}"
    if (prefix / "uv-receipt.toml").is_file():
        return f"uv tool install --force {WITH_EXTRA}"
    return (f"pip install {WITH_EXTRA} (or, for an install made by pipx or uv, `pipx install --force` or "
            "`uv tool install --force` with the same argument)")


def _missing_extra(exc: ModuleNotFoundError, command: str | None) -> int | None:
    """The exit code after saying which extra to install, when ``exc`` is a module of the registry extra."""
    if (exc.name or "").split(".")[0] not in REGISTRY_EXTRA_MODULES:
        return None
    what = f"`skillreg {command}`" if command else "this command"
    click.echo(f"Error: {what} works on a registry's skills and needs the packages of the `registry` extra, which "
               f"this installation lacks (no module named {exc.name!r}); add them with: "
               f"{extra_install(Path(sys.prefix))}", err=True)
    return EXIT_FAILURE


# The names of the commands in ``client.COMMANDS`` (a test keeps the two lists equal).
CLIENT_COMMANDS = frozenset({"search", "info", "install", "update", "remove", "list", "verify", "mcp"})


class _Group(click.Group):
    """Runs every command (and the group itself) inside the one error handler; imports the client's commands when
    one is looked up or all are listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *CLIENT_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in CLIENT_COMMANDS and cmd_name not in self.commands:
            from . import client

            for command in client.COMMANDS:
                self.add_command(command)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """Click's look-up, with the closest command suggested for a name that is not one."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            from ..core.suggest import close_match

            typed = click.utils.make_str(args[0]) if args else ""
            found = close_match(typed, self.list_commands(ctx)) if typed and not typed.startswith("-") else None
            if found is None or self.get_command(ctx, typed) is not None:
                raise
            raise click.UsageError(f"No such command {typed!r}. Did you mean {found!r}?", ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (SkillRegError, OSError, KeyboardInterrupt) as exc:
            raise click.exceptions.Exit(_handle_error(exc)) from None
        except ModuleNotFoundError as exc:
            code = _missing_extra(exc, ctx.invoked_subcommand)
            if code is None:
                raise
            raise click.exceptions.Exit(code) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillreg")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              envvar="SKILLREG_CONFIG",
              help="registry.yaml to use (default: the nearest one above the current folder).")
@click.option("--trust-root", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="The root metadata to trust for a signed registry used for the first time (default: the root "
                   "skills-lock.json pins, else its own, trusted on first use). It must be the root the lock pins "
                   "and the one this machine's trust store holds; `skillreg trust pin` changes those.")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None, trust_root: Path | None) -> None:
    """Validate, build and publish a registry of Agent Skills, and install skills from one."""
    ctx.obj = Context(config_path)
    if trust_root is not None:  # read by client/trust.py, in this process and the MCP server it starts
        os.environ["SKILLREG_TRUST_ROOT"] = str(trust_root.resolve())


for _command in registry.COMMANDS:
    cli.add_command(_command)
cli.add_command(baseline)
cli.add_command(trust)
cli.add_command(init)


def all_commands() -> dict[str, click.Command]:
    """Every command by name, the client's imported: for the generated reference and the tests of the docs."""
    ctx = click.Context(cli, info_name="skillreg")
    found = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


def main() -> None:
    cli(prog_name="skillreg")


if __name__ == "__main__":
    main()
