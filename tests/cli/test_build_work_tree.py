"""``skillreg build`` names the commit it built at; when the work tree differs from that commit it says so, since
the build is of the files as they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.build import all_files, make_registry, skillreg

pytestmark = pytest.mark.slow  # builds in a real repository

NOTE = "Note: the work tree differs from commit {}: the build is of the files as they are, uncommitted changes " \
       "included (`git status` lists them)\n"


def test_build_says_when_the_work_tree_differs_from_the_commit_it_names(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "registry", ["csv-profiler"])
    clean = skillreg(["build", "--no-site"], repo)  # its own output, not ignored here, is not a difference
    assert clean.returncode == 0, clean.stderr
    commit = clean.stdout.split(" at commit ", 1)[1][:12]
    assert "Note:" not in clean.stdout
    skill_md = repo / "skills/csv-profiler/SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    edited = skillreg(["build", "--no-site"], repo)
    assert edited.returncode == 0, edited.stderr
    assert NOTE.format(commit) in edited.stdout


def test_a_build_with_nothing_changed_says_what_the_last_one_said(tmp_path: Path) -> None:
    """The second build finds the output current and stops; it shows what the first showed, the note included,
    and --verbose, which lists every finding, always builds."""
    repo = make_registry(tmp_path / "registry", ["csv-profiler", "secret-scanner"])
    skill_md = repo / "skills/secret-scanner/SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8").replace("name: secret-scanner", "name: Secret Scanner"),
                        encoding="utf-8")
    first = skillreg(["build", "--no-site", "--keep-going"], repo)
    assert first.returncode == 0, first.stderr
    before = all_files(repo / "site")
    again = skillreg(["build", "--no-site", "--keep-going"], repo)
    assert again.returncode == 0, again.stderr
    shown, closing = first.stdout.split("Built ", 1)
    assert again.stdout.startswith(shown + "Built 1 skill into site/ at commit ")
    commit = closing.split(" at commit ", 1)[1][:12]
    assert "(0 written, 1 unchanged: nothing changed since the last build)\n" + NOTE.format(commit) in again.stdout
    assert all_files(repo / "site") == before
    verbose = skillreg(["build", "--no-site", "--keep-going", "--verbose"], repo)
    assert "Written: -\n" in verbose.stdout
