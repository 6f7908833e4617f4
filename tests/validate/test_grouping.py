"""Findings people can read: a rule one skill breaks more than three times is one line with a count (every
occurrence with --verbose, and always in JSON); three or fewer are shown each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_tree

from builder.cli.app import cli

FONT = b"\0\1font"


@pytest.fixture
def fonts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    files: dict[str, str | bytes] = {
        "registry.yaml": "title: T\n",
        "skills/fonts/SKILL.md": "---\nname: fonts\ndescription: Sets type. Use when asked.\n---\nSet it.\n",
        "skills/few/SKILL.md": "---\nname: few\ndescription: Has few fonts. Use when asked.\n---\nSet it.\n",
    }
    files.update({f"skills/fonts/fonts/face-{i:02d}.ttf": FONT for i in range(56)})
    files.update({f"skills/few/fonts/face-{i}.ttf": FONT for i in range(3)})
    root = write_tree(tmp_path, files)
    monkeypatch.chdir(root)
    return root


def test_a_rule_repeated_in_one_skill_is_one_line_with_a_count(fonts: Path) -> None:
    result = CliRunner().invoke(cli, ["validate"])
    assert result.output.splitlines() == [
        "skills/few/fonts/face-0.ttf: warning SK509 `fonts/face-0.ttf` is binary but not under assets/",
        "    hint: Move binary files into assets/.",
        "skills/few/fonts/face-1.ttf: warning SK509 `fonts/face-1.ttf` is binary but not under assets/",
        "skills/few/fonts/face-2.ttf: warning SK509 `fonts/face-2.ttf` is binary but not under assets/",
        "skills/fonts/fonts/face-00.ttf: warning SK509 `fonts/face-00.ttf` is binary but not under assets/ (and 55 "
        "more like it in skill `skills/fonts`; --verbose shows every one)",
        "0 errors, 59 warnings in 2 of 2 skills",
    ]  # a hint is given once
    verbose = CliRunner().invoke(cli, ["validate", "--verbose"]).output
    assert verbose.count(" warning SK509 ") == 59 and verbose.count("    hint: ") == 59
    github = CliRunner().invoke(cli, ["validate", "--format", "github"]).output
    assert github.count("::warning ") == 4 and "(and 55 more like it in skill `skills/fonts`" in github
    every = json.loads(CliRunner().invoke(cli, ["validate", "--format", "json"]).output)
    assert len(every["diagnostics"]) == 59
