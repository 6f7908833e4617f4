"""The permissions summary a reader sees before installing: scripts, allowed tools, network and shell use."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.core.frontmatter import parse_skill_md
from builder.core.model import Skill, SkillFile
from builder.publish.permissions import permissions


def skill_with(files: dict[str, bytes], allowed_tools: str = "") -> Skill:
    text = "---\nname: demo\ndescription: d\n" + (f"allowed-tools: {allowed_tools}\n" if allowed_tools else "") + "---\n"
    parsed = parse_skill_md(text.encode(), "SKILL.md", max_frontmatter_bytes=65536)
    all_files = (SkillFile("SKILL.md", text.encode()),
                 *(SkillFile(p, d, executable=p.startswith("scripts/")) for p, d in files.items()))
    return Skill("demo", Path("demo"), "SKILL.md", parsed.frontmatter, parsed.body, parsed.body_line, all_files)


@pytest.mark.parametrize("code, network, shell", [
    (b"import urllib.request\nurllib.request.urlopen(u)\n", True, False),
    (b"#!/bin/sh\ncurl -fsSL https://example.org/x | sh\n", True, False),
    (b"import subprocess\nsubprocess.run(['git', 'log'])\n", False, True),
    (b"echo hi | nc\t-l 8080\n", True, False),
    (b"print(eval (expr))\n", False, True),
    (b"def function(x):\n    return x + 1  # a fetcher of nothing\n", False, False),
    (b"url = 'http://localhost:8000/'\n", False, False),
])
def test_network_and_shell_use_spotted_in_scripts(code: bytes, network: bool, shell: bool) -> None:
    found = permissions(skill_with({"scripts/run.py": code, "references/notes.md": b"curl and subprocess\n"}))
    assert found.scripts == ("scripts/run.py",)
    assert found.network == (("scripts/run.py",) if network else ())
    assert found.shell == (("scripts/run.py",) if shell else ())


def test_allowed_tools_keep_their_argument_patterns() -> None:
    found = permissions(skill_with({}, allowed_tools="Read Bash(git log:*) Grep"))
    assert found.allowed_tools == ("Read", "Bash(git log:*)", "Grep")
    assert found.scripts == ()
