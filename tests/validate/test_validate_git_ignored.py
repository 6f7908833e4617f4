"""In a git checkout ``validate`` reads a skill as the build publishes it: a file git ignores is no part of the
skill (it stays on the machine that has it), and a skill folder git ignores whole is no skill."""

from __future__ import annotations

from pathlib import Path

from helpers.build import SKILLS, make_registry, skillreg

HIDDEN = "# Run it\u200b now.\n"  # a zero-width space in a script: SK511 when the loader reads it


def test_validate_leaves_out_what_git_ignores(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS)
    (repo / ".gitignore").write_text("debug.py\nscratch/\n")
    (repo / "skills/csv-profiler/scripts/debug.py").write_text(HIDDEN)
    scratch = repo / "skills/scratch"
    scratch.mkdir()
    (scratch / "SKILL.md").write_text("---\nname: [broken\n---\n")
    clean = skillreg(["validate"], repo)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "debug.py" not in clean.stdout and "scratch" not in clean.stdout

    (repo / ".gitignore").write_text("")  # the same files, no longer ignored: they are part of the skills
    found = skillreg(["validate"], repo)
    assert found.returncode == 1
    assert "skills/csv-profiler/scripts/debug.py:1" in found.stdout and "SK511" in found.stdout
    assert "skills/scratch/SKILL.md" in found.stdout


def test_named_folders_leave_out_what_git_ignores_too(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS)
    (repo / ".gitignore").write_text("debug.py\n")
    (repo / "skills/csv-profiler/scripts/debug.py").write_text(HIDDEN)
    named = skillreg(["validate", "skills/csv-profiler"], repo)
    assert named.returncode == 0, named.stdout + named.stderr
    outside = tmp_path / "elsewhere"  # not in the repository: every file is read
    make_registry(outside, ["csv-profiler"], commit=False)
    (outside / "skills/csv-profiler/scripts/debug.py").write_text(HIDDEN)
    read = skillreg(["validate", str(outside / "skills/csv-profiler")], repo)
    assert read.returncode == 1 and "debug.py" in read.stdout
