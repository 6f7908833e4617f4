"""The README stays true: its two set-up commands and the CI script that runs the second."""

from __future__ import annotations

import re

from helpers import REPO

from builder.cli.app import all_commands

README = (REPO / "README.md").read_text(encoding="utf-8")


def setup_commands() -> list[str]:
    section = README.split("\n## ", 2)[1]
    assert section.startswith("Set up"), "the README's first section must be 'Set up'"
    return re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)


def test_readme_starts_with_exactly_two_setup_commands() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    main_job, tests = commands
    assert "\n" not in main_job and "\n" not in tests
    assert main_job.startswith("python3 -m venv .venv && ") and main_job.endswith("skillreg build")
    assert "'.[test]'" in tests and tests.endswith("-m pytest")


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert setup_commands()[1] in ci


def test_every_command_has_help() -> None:
    for name, command in all_commands().items():
        assert (command.help or "").strip(), f"`skillreg {name}` has no help text"


def test_the_docs_server_and_the_quick_starts_serve_use_different_ports() -> None:
    """Both run side by side while reading the quick start; mkdocs on a busy port dies with its own traceback."""
    docs = re.findall(r"`mkdocs serve -a 127\.0\.0\.1:(\d+)`", README)
    serve = re.findall(r"skillreg serve --port (\d+)", README)
    assert docs and serve and not set(docs) & set(serve)
    assert "`mkdocs serve`" not in README  # mkdocs' default port is 8000 too
