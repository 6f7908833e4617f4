"""The adoption benchmark: its plain walk counts the skills an agent loads without skillreg's discovery, and a
run on small repositories of several layouts reports what `init` and `build` published (the figures of real
repositories are not asserted here; they are on the docs' adoption page)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helpers import REPO, write_tree

if str(REPO) not in sys.path:  # bench/ is a folder of the repository, not part of the installed package
    sys.path.insert(0, str(REPO))

from bench.adoption import agent_skills, loads  # noqa: E402


def skill(name: str, front: str | None = None) -> str:
    front = front if front is not None else f"name: {name}\ndescription: Does {name} things when asked.\n"
    return f"---\n{front}---\n# {name}\n\nUse it.\n"


def test_the_plain_walk_counts_what_agents_load(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "skills/pdf/SKILL.md": skill("pdf"),
        "skills/pdf/references/forms/SKILL.md": skill("forms"),  # inside another skill: a file of pdf
        "skills/.curated/csv/SKILL.md": skill("csv", "name: csv\ndescription: Reads CSV.\nallowed-tools: [Read]\n"),
        "plugins/docs/skills/docx/SKILL.md": skill("docx", "name: docx\ndescription: 'Edits Word files.'\n"
                                                           "metadata:\n  tags: [a, b]\n"),
        "Bad_Name/SKILL.md": skill("Bad_Name"),  # a name the standard refuses still loads
        "no-description/SKILL.md": skill("x", "name: x\n"),
        "empty-description/SKILL.md": skill("x", "name: x\ndescription: ''\n"),
        "list-front/SKILL.md": skill("x", "- name\n- description\n"),
        "broken-yaml/SKILL.md": skill("x", "name: [x\ndescription: y\n"),
        "no-front/SKILL.md": "# Just Markdown\n",
        "node_modules/pkg/skills/dep/SKILL.md": skill("dep"),
        ".git/x/SKILL.md": skill("git"),
        "lower/skill.md": skill("lower"),  # agents read SKILL.md
    })
    os.symlink("skills/pdf", tmp_path / "linked-pdf")
    loaded, refused = agent_skills(tmp_path)
    assert loaded == ["Bad_Name", "plugins/docs/skills/docx", "skills/.curated/csv", "skills/pdf"]
    assert refused == ["broken-yaml", "empty-description", "list-front", "no-description", "no-front"]


def test_a_byte_order_mark_and_windows_line_ends_still_load(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes("\ufeff---\r\nname: a\r\ndescription: Does a.\r\n---\r\nbody\r\n".encode())
    assert loads(path)
