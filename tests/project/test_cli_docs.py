"""The CLI's help: whole one-line summaries in `skillreg --help`, and docs/cli.md generated from the commands."""

from __future__ import annotations

from click.testing import CliRunner
from helpers import REPO

from builder.cli.app import all_commands, cli
from builder.cli.reference import CLI_DOC_PATH, cli_markdown, subcommands


def test_docs_cli_md_is_the_generated_text() -> None:
    committed = (REPO / CLI_DOC_PATH).read_text(encoding="utf-8")
    assert committed == cli_markdown(), \
        f"{CLI_DOC_PATH} is out of date: run `python -m builder.cli.reference > {CLI_DOC_PATH}`"


def test_the_reference_holds_every_command_and_its_options() -> None:
    text = cli_markdown()
    commands = [(name, command) for name, command in all_commands().items()]
    commands += [(f"{name} {sub_name}", sub) for name, command in all_commands().items()
                 for sub_name, sub in subcommands(command).items()]
    assert any(" " in name for name, _ in commands)  # the groups' commands too (trust init, trust pin, ...)
    for name, command in commands:
        assert f"\n## skillreg {name}\n" in text or f"\n### skillreg {name}\n" in text, name
        assert f"Usage: skillreg {name} " in text, name
        for param in command.params:
            for opt in param.opts if param.param_type_name == "option" else ():
                assert opt in text, (name, opt)


def test_the_reference_holds_each_command_of_a_group_and_its_options() -> None:
    import click

    text = cli_markdown()
    groups = {name: command for name, command in all_commands().items() if isinstance(command, click.Group)}
    assert "trust" in groups
    for name, group in groups.items():
        for sub_name, sub in group.commands.items():
            assert f"\n### skillreg {name} {sub_name}\n" in text and f"Usage: skillreg {name} {sub_name} " in text
            for param in sub.params:
                for opt in param.opts if param.param_type_name == "option" else ():
                    assert opt in text.split(f"### skillreg {name} {sub_name}\n", 1)[1].split("\n#", 1)[0], \
                        (name, sub_name, opt)


def test_group_help_shows_every_summary_whole() -> None:
    result = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    listed = result.output.split("Commands:\n", 1)[1].splitlines()
    assert len(listed) == len(all_commands()) and not [line for line in listed if "..." in line]
    for line, (name, command) in zip(listed, sorted(all_commands().items())):
        assert command.short_help and len(command.short_help) <= 45
        assert line.split() == [name, *command.short_help.split()]


def test_the_readme_links_the_reference() -> None:
    assert "(docs/cli.md)" in (REPO / "README.md").read_text(encoding="utf-8")
