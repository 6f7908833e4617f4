"""What `skillreg validate` imports before it checks anything: the client's commands and the libraries only other
commands use stay out of the process (importing them once took over a quarter of a 1,000-skill run)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import REPO, write_tree

from builder.cli import client
from builder.cli.app import CLIENT_COMMANDS, all_commands, cli

# Run the CLI in a fresh interpreter and print, as JSON on the last line of stderr, every module it imported.
_IMPORTED = """\
import json, sys
from builder.cli.app import main
sys.argv = ["skillreg", *sys.argv[1:]]
try:
    main()
finally:
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
# Only other commands need these (the client, the build, the website, JSON Schema, HTTP).
NOT_FOR_VALIDATE = ("builder.cli.client", "builder.client", "builder.publish", "builder.site", "jsonschema",
                    "requests", "httpx", "markdown", "jinja2", "mkdocs", "nh3", "selectolax", "semver", "mcp")
SKILL = """\
---
name: {name}
description: Does one small thing. Use when a test needs a skill.
---
# {name}

See [the notes](notes.md) and <https://example.com/>.
"""


def imported(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    done = subprocess.run([sys.executable, "-c", _IMPORTED, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    return done, json.loads(done.stderr.strip().splitlines()[-1])


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(f"{name}.") for name in names)]


def skills(root: Path, count: int) -> Path:
    for k in range(count):
        name = f"skill-{k:03d}"
        write_tree(root / name, {"SKILL.md": SKILL.format(name=name), "notes.md": "notes\n"})
    return root


def test_the_lazy_names_are_the_client_commands() -> None:
    assert {command.name for command in client.COMMANDS} == CLIENT_COMMANDS


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_validating_one_skill_imports_neither_the_client_nor_a_worker_pool(tmp_path: Path, fmt: str) -> None:
    root = skills(tmp_path / "skills", 1)
    done, modules = imported(["validate", "--profile", "spec", "--format", fmt, str(root / "skill-000")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert loaded(modules, NOT_FOR_VALIDATE + ("concurrent.futures", "multiprocessing")) == []


def test_validating_enough_skills_for_workers_still_leaves_the_client_out(tmp_path: Path) -> None:
    root = skills(tmp_path / "skills", 210)
    done, modules = imported(["validate", "--profile", "spec", str(root)], tmp_path)
    assert done.returncode == 0 and "All 210 skills are valid." in done.stdout, done.stderr
    assert loaded(modules, NOT_FOR_VALIDATE) == []


@pytest.mark.parametrize("name", sorted(CLIENT_COMMANDS))
def test_every_client_command_is_found_when_asked_for(tmp_path: Path, name: str) -> None:
    done, modules = imported([name, "--help"], tmp_path)
    assert done.returncode == 0 and f"Usage: skillreg {name} " in done.stdout, done.stderr
    assert "builder.cli.client" in modules


def test_the_group_lists_the_client_commands_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    listing = CliRunner().invoke(cli, ["--help"])
    names = [line.split()[0] for line in listing.output.split("Commands:\n", 1)[1].splitlines() if line.strip()]
    assert names == sorted(all_commands()) and set(names) >= CLIENT_COMMANDS
    done, modules = imported(["instal", "x"], tmp_path)
    assert done.returncode == 2 and "No such command 'instal'. Did you mean 'install'?" in done.stderr
    assert "builder.cli.client" not in modules  # the suggestion needs only the names


@pytest.mark.parametrize(("typed", "expected"), [
    ("instal", "Error: No such command 'instal'. Did you mean 'install'?"),
    ("serach", "Error: No such command 'serach'. Did you mean 'search'?"),
    ("vaildate", "Error: No such command 'vaildate'. Did you mean 'validate'?"),
    ("frobnicate", "Error: No such command 'frobnicate'."),
])
def test_an_unknown_command_suggests_the_closest_one(typed: str, expected: str) -> None:
    result = CliRunner().invoke(cli, [typed, "csv-profiler"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == expected


def test_the_reference_page_is_written_from_every_command() -> None:
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert [line[len("## skillreg "):] for line in page.splitlines() if line.startswith("## skillreg ")] == \
        sorted(all_commands())


# Every module that imports python-tuf or securesystemslib, each first in a fresh interpreter.
TUF_USERS = [m for m in (REPO / "builder").rglob("*.py")
             if "\nfrom tuf" in (text := m.read_text(encoding="utf-8")) or "\nfrom securesystemslib" in text]


def test_every_module_using_python_tuf_imports_lean_tuf_before_it() -> None:
    assert len(TUF_USERS) >= 5
    for path in TUF_USERS:
        text = path.read_text(encoding="utf-8")
        first = min(text.index(s) for s in ("\nfrom tuf", "\nfrom securesystemslib") if s in text)
        assert re.search(r"^from (\.|\.\.signing) import lean_tuf", text[:first], re.M), path


@pytest.mark.parametrize("path", TUF_USERS, ids=lambda p: p.stem)
def test_python_tuf_is_imported_without_boto3_and_boto3_still_imports(path: Path) -> None:
    pytest.importorskip("boto3")  # installed with the test extras; without it there is nothing to hide
    module = ".".join(path.relative_to(REPO).with_suffix("").parts)
    check = (f"import sys, importlib; importlib.import_module({module!r}); assert 'boto3' not in sys.modules; "
             "import boto3, securesystemslib.signer; assert boto3.client and securesystemslib.signer.CryptoSigner; "
             "print('ok')")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.stdout.strip() == "ok", done.stderr
