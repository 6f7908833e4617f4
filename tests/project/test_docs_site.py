"""The documentation site builds strict, the README stays short, and neither names a command that does not exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

from builder.cli.app import all_commands

README = REPO / "README.md"
DOCS = REPO / "docs"
WORD_BUDGET = 2_000


def prose_files() -> list[Path]:
    """The README and every hand-written page (the generated references are checked by their own tests)."""
    generated = {DOCS / "cli.md", DOCS / "rules.md"}
    return [README, *sorted(p for p in DOCS.rglob("*.md") if p not in generated)]


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M)


@pytest.mark.slow
def test_the_documentation_builds_strict(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(REPO / "mkdocs.yml"), "--site-dir", str(tmp_path / "docs")],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    for page in ("index.html", "getting-started/run-your-own/index.html", "explanation/safety/index.html",
                 "cli/index.html", "rules/index.html"):
        assert (tmp_path / "docs" / page).is_file(), page


def test_the_readme_keeps_to_its_word_budget() -> None:
    words = len(README.read_text(encoding="utf-8").split())
    assert words <= WORD_BUDGET, f"README.md has {words:,} words; the budget is {WORD_BUDGET:,}: move text to docs/"


def test_every_page_is_in_the_navigation() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert f": {page.relative_to(DOCS).as_posix()}\n" in nav, f"{page} is not in mkdocs.yml's nav"


def test_commands_in_code_blocks_exist() -> None:
    commands = set(all_commands())
    for path in prose_files():
        for block in code_blocks(path.read_text(encoding="utf-8")):
            commands_only = re.sub(r"(^|\s)#.*$", "", block, flags=re.M)  # a shell comment is prose
            for name in re.findall(r"(?:^|[\s/(`])skillreg (?:--[a-z-]+ \S+ )*([a-z][a-z-]*)", commands_only,
                                   flags=re.M):
                assert name in commands, f"{path.relative_to(REPO)}: `skillreg {name}` is not a command"


def test_every_command_has_a_guide() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in prose_files())
    for name in all_commands():
        assert f"skillreg {name}" in text, f"`skillreg {name}` is in no guide of docs/ nor in the README"


@pytest.mark.parametrize("pattern, what", [
    (r"\bissues? \d+", "a tracker issue number"),
    (r"\bissues? #\d+", "a tracker issue number"),
    (r"\btests/test_\w+\.py\b|\btest_\w+\.py\b", "a test file name"),
])
def test_prose_names_no_issue_numbers_or_test_files(pattern: str, what: str) -> None:
    for path in prose_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not re.search(pattern, line, flags=re.I), f"{path.relative_to(REPO)}:{number} names {what}"
