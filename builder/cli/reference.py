"""The command-line reference, generated from the commands' own help so the docs never drift from the CLI.

``python -m builder.cli.reference > docs/cli.md`` writes the committed page; a test fails when they differ.
"""

from __future__ import annotations

import click

from .app import all_commands, cli

CLI_DOC_PATH = "docs/cli.md"
WIDTH = 100  # fixed, so the page does not depend on the terminal it is generated in
HELP_OPTIONS = cli.context_settings["help_option_names"]


def _help(command: click.Command, name: str, parent: click.Context | None) -> str:
    ctx = click.Context(command, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH,
                        help_option_names=HELP_OPTIONS)
    return command.get_help(ctx)


def cli_markdown() -> str:
    """The page: the group's help, then each command's ``--help`` in name order (a group's commands after it)."""
    root = click.Context(cli, info_name="skillreg", terminal_width=WIDTH, max_content_width=WIDTH,
                         help_option_names=HELP_OPTIONS)
    parts = ["# Command-line reference\n\n",
             "<!-- Generated from the commands' help by `python -m builder.cli.reference`. Do not edit; "
             "regenerate. -->\n\n",
             "Every command also takes `-h`/`--help`. Exit codes: 0 success, 1 failure (a failed check included), "
             "2 usage error, 130 interrupted.\n\n",
             f"```\n{_help(cli, 'skillreg', None)}\n```\n"]
    for name, command in sorted(all_commands().items()):
        parts.append(f"\n## skillreg {name}\n\n{command.get_short_help_str(limit=WIDTH)}\n\n"
                     f"```\n{_help(command, name, root)}\n```\n")
        group = click.Context(command, info_name=name, parent=root, help_option_names=HELP_OPTIONS)
        for sub_name, sub in sorted(subcommands(command).items()):
            parts.append(f"\n### skillreg {name} {sub_name}\n\n{sub.get_short_help_str(limit=WIDTH)}\n\n"
                         f"```\n{_help(sub, sub_name, group)}\n```\n")
    return "".join(parts)


def subcommands(command: click.Command) -> dict[str, click.Command]:
    """The commands of a group such as ``trust`` (none for a plain command), each documented under its group."""
    if not isinstance(command, click.Group):
        return {}
    ctx = click.Context(command)
    found = {name: command.get_command(ctx, name) for name in command.list_commands(ctx)}
    return {name: sub for name, sub in found.items() if sub is not None}


if __name__ == "__main__":
    click.echo(cli_markdown(), nl=False)
