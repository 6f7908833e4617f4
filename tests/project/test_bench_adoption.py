"""The adoption benchmark: its plain walk counts the skills an agent loads without skillreg's discovery, and a
run on small repositories of several layouts reports what `init` and `build` published (the figures of real
repositories are not asserted here; they are on the docs' adoption page)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, write_tree
from helpers.changes import adoptable, git

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
    os.symlink("skills/pdf", tmp_path / "linked-pdf")  # a linked folder is not entered
    write_tree(tmp_path, {".gemini/skills/docx/x.md": "", ".gemini/skills/gone/x.md": ""})
    os.symlink("../../../plugins/docs/skills/docx/SKILL.md", tmp_path / ".gemini/skills/docx/SKILL.md")  # a copy
    os.symlink("../../../moved/SKILL.md", tmp_path / ".gemini/skills/gone/SKILL.md")  # leads nowhere
    loaded, refused = agent_skills(tmp_path)
    assert loaded == ["Bad_Name", "plugins/docs/skills/docx", "skills/.curated/csv", "skills/pdf"]
    assert refused == [".gemini/skills/gone", "broken-yaml", "empty-description", "list-front", "no-description",
                       "no-front"]


def test_a_byte_order_mark_and_windows_line_ends_still_load(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes("\ufeff---\r\nname: a\r\ndescription: Does a.\r\n---\r\nbody\r\n".encode())
    assert loads(path)

@pytest.mark.slow
def test_the_benchmark_runs_init_and_build_on_copies_and_reports_each(tmp_path: Path) -> None:
    one = adoptable(tmp_path / "one", {"README.md": "# One\n\nSkills of the first team, for tests only.\n",
                                       "skills/pdf/SKILL.md": skill("pdf"), "skills/csv/SKILL.md": skill("csv")},
                    origin="https://github.com/acme/one")
    two = adoptable(tmp_path / "two", {"plugins/a/skills/docx/SKILL.md": skill("docx"),
                                       "plugins/b/skills/xlsx/SKILL.md": skill("xlsx")})
    before = {repo: git(repo, "status", "--porcelain") for repo in (one, two)}
    done = subprocess.run([sys.executable, "-m", "bench.adoption", str(one), str(two)], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2:4] == ["| repository | commit | agents load | found | published | share | left out: skills by rule |",
                          "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    assert lines[4].startswith("| one | ") and lines[4].endswith(" | 2 | 2 | 2 | 100.0% | - |")
    assert lines[5].startswith("| two | ") and lines[5].endswith(" | 2 | 2 | 2 | 100.0% | - |")
    assert lines[-4:] == ["Overall: 4 of 4 skills agents load published (100.0%; goal >= 95%)",
                          "Lowest: one 100.0% (goal >= 60% each)", "Tracebacks: none", "Goal met"]
    assert {repo: git(repo, "status", "--porcelain") for repo in (one, two)} == before  # the copies changed
