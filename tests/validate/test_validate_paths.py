"""``validate_paths``: what it accepts as a path, what it refuses, and the report it returns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import write_tree

from builder.core.config import RegistryConfig, load_config
from builder.core.errors import UsageError
from builder.validate.run import validate_paths

SKILL_MD = """\
---
name: {name}
description: Demonstrates path handling. Use when testing skillreg validate.
---
# Demo

Follow these steps.
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RegistryConfig:
    write_tree(tmp_path, {
        "registry.yaml": "title: Test registry\n",
        "skills/alpha/SKILL.md": SKILL_MD.format(name="alpha"),
        "skills/beta/SKILL.md": SKILL_MD.format(name="Beta"),
        "skills/.hidden/SKILL.md": SKILL_MD.format(name="hidden"),
        "skills/_drafts/SKILL.md": SKILL_MD.format(name="drafts"),
        "skills/README.md": "Skills live here.\n",
    })
    monkeypatch.chdir(tmp_path)
    return load_config(tmp_path / "registry.yaml")


def test_a_folder_of_skills_skips_hidden_and_underscore_folders(registry: RegistryConfig) -> None:
    report = validate_paths([Path("skills")], registry)
    assert [s.name for s in report.skills] == ["alpha", "beta"]
    assert [(d.code, d.file, d.line) for d in report.diagnostics] == [
        ("SK104", "skills/beta/SKILL.md", 2), ("SK106", "skills/beta/SKILL.md", 2)]
    assert report.summary() == "2 errors, 0 warnings in 1 of 2 skills"


@pytest.mark.parametrize("path", ["skills/alpha", "skills/alpha/SKILL.md"])
def test_a_skill_folder_or_its_skill_md(registry: RegistryConfig, path: str) -> None:
    report = validate_paths([Path(path)], registry)
    assert [s.name for s in report.skills] == ["alpha"]
    assert report.diagnostics == ()
    assert report.summary() == "0 errors, 0 warnings in 0 of 1 skill"


def test_the_same_skill_given_twice_is_checked_once(registry: RegistryConfig) -> None:
    report = validate_paths([Path("skills/alpha"), Path("skills"), Path("skills/alpha/SKILL.md")], registry)
    assert [s.name for s in report.skills] == ["alpha", "beta"]
    assert not any(d.code == "SK601" for d in report.diagnostics)


@pytest.mark.parametrize(("path", "profile", "message"), [
    ("missing", None, "missing: no such file or folder"),
    ("skills/README.md", None, "skills/README.md: not a folder"),
    ("skills", "strict", "unknown profile 'strict'; choose one of spec, claude-code, agents"),
])
def test_usage_errors(registry: RegistryConfig, path: str, profile: str | None, message: str) -> None:
    with pytest.raises(UsageError) as info:
        validate_paths([Path(path)], registry, profile)
    assert str(info.value) == message
    assert info.value.exit_code == 2


def test_the_profile_defaults_to_registry_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {
        "registry.yaml": "profile: claude-code\n",
        "skills/alpha/SKILL.md": SKILL_MD.format(name="alpha").replace("---\n#", "model: opus\n---\n#"),
    })
    monkeypatch.chdir(tmp_path)
    config = load_config(tmp_path / "registry.yaml")
    assert validate_paths([Path("skills")], config).diagnostics == ()
    assert [d.code for d in validate_paths([Path("skills")], config, "spec").diagnostics] == ["SK120"]


def test_findings_are_sorted_by_file_then_line(registry: RegistryConfig) -> None:
    write_tree(Path("skills"), {"gamma/SKILL.md": "---\nname: Gamma\ndescription: x\nhomepage: y\n---\n"})
    report = validate_paths([Path("skills")], registry)
    assert [(d.file, d.line, d.code) for d in report.diagnostics] == [
        ("skills/beta/SKILL.md", 2, "SK104"),
        ("skills/beta/SKILL.md", 2, "SK106"),
        ("skills/gamma/SKILL.md", 2, "SK104"),
        ("skills/gamma/SKILL.md", 2, "SK106"),
        ("skills/gamma/SKILL.md", 4, "SK120"),
        ("skills/gamma/SKILL.md", 6, "SK406"),
    ]
    assert report.errors == 5 and report.warnings == 1
    assert report.invalid_names() == frozenset({"skills/beta", "skills/gamma"})  # each skill by its path


def test_validation_writes_nothing(registry: RegistryConfig, tmp_path: Path) -> None:
    before = sorted((p, p.read_bytes() if p.is_file() else b"", p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    validate_paths([Path("skills")], registry)
    after = sorted((p, p.read_bytes() if p.is_file() else b"", p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    assert after == before


@pytest.mark.parametrize("line, found", [
    (r"Run C:\Users\dave\tool.exe now, then stop.", [r"C:\Users\dave\tool.exe"]),
    (r"Open C:\Program Files\App\x.exe and read the words after it.", [r"C:\Program Files\App\x.exe"]),
    ("Read /home/ann/notes and /Users/bob/x, not ./home/y.", ["/home/ann", "/Users/bob"]),
])
def test_absolute_user_paths_end_where_the_path_ends(line: str, found: list[str]) -> None:
    from builder.validate.body import USER_PATH

    assert [m.group(0) for m in USER_PATH.finditer(line)] == found


@pytest.mark.parametrize("skills_dir", ["skills", "content/skills"])
def test_a_linked_registry_folder_is_refused_by_validate_and_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skills_dir: str) -> None:
    """The loader never follows links, so neither may the folder it starts from."""
    from click.testing import CliRunner

    from builder.cli.app import cli

    outside = write_tree(tmp_path / "outside", {"stolen/SKILL.md": SKILL_MD.format(name="stolen")})
    repo = write_tree(tmp_path / "repo", {"registry.yaml": f"title: Linked\nskills_dir: {skills_dir}\n"})
    linked = repo / skills_dir.split("/")[0]
    target = outside if skills_dir == "skills" else tmp_path / "outside-parent"
    if skills_dir != "skills":
        (target / "skills").mkdir(parents=True)
        (target / "skills" / "stolen").symlink_to(outside / "stolen")  # a skill-folder link inside, too
        target = tmp_path / "outside-parent"
    linked.symlink_to(target)
    monkeypatch.chdir(repo)
    shown = skills_dir.split("/")[0]
    message = (f"Error: {shown}: the registry folder is a symbolic link to {str(target)!r}; links are never "
               f"followed: replace {shown} with the folder itself\n")
    for args in (["validate"], ["build", "--out", "site"], ["build", "--out", "site", "--keep-going"],
                 ["validate", f"{skills_dir}/stolen"], ["new", "fresh"]):
        result = CliRunner().invoke(cli, args)
        assert (result.exit_code, result.output) == (1, message), args
    assert not (repo / "site").exists()
    assert not list(tmp_path.rglob("fresh"))  # `new` wrote nothing through the link


def test_folders_are_shown_and_resolved_as_the_whole_path_would_be(tmp_path: Path) -> None:
    # display_path joins a folder's name to its parent's shown path, and ValidationRun resolves each parent once:
    # both must give what relpath and realpath of the whole path give, for dotted names, links and the cwd itself.
    import random

    from builder.core.loader import _display_path, _display_whole
    from builder.validate.run import _real_path

    rng = random.Random(3)
    parts = ["a", "b", "..", ".", "..x", ".h", "skills", "x y", "é", "", "tmp"]
    cwds = ["/", "/tmp", "/tmp/a", "/tmp/a/b", "/tmp/..x"]
    for _ in range(20_000):
        path = rng.choice(["/tmp/", "/", ""]) + "/".join(rng.choice(parts) for _ in range(rng.randint(1, 5)))
        cwd = rng.choice(cwds)
        if path:
            assert _display_path(path, cwd) == _display_whole(path, cwd), (path, cwd)
    (tmp_path / "real" / "a").mkdir(parents=True)
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "b").symlink_to(tmp_path / "real" / "a")
    parents: dict[str, str] = {}
    for folder in ["real/a", "real/b", "linked/a", "linked/b", "real/.", "real/..", "linked/../real/a"]:
        whole = str(tmp_path / folder)
        assert _real_path(whole, parents) == os.path.realpath(whole), folder


@pytest.mark.parametrize(("skills_dir", "why"), [
    ("../outside", "climbs out of the repository with `..`"),
    ("a/../../outside", "climbs out of the repository with `..`"),
    ("..", "climbs out of the repository with `..`"),
    ("..\\outside", "climbs out of the repository with `..`"),
    ("{outside}", "is an absolute path"),
    ("C:/skills", "is an absolute path"),
])
def test_a_skills_dir_outside_the_repository_is_refused_with_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skills_dir: str, why: str) -> None:
    from click.testing import CliRunner

    from builder.cli.app import cli

    outside = write_tree(tmp_path / "outside", {"stolen/SKILL.md": SKILL_MD.format(name="stolen")})
    skills_dir = skills_dir.format(outside=outside)
    repo = write_tree(tmp_path / "repo", {"registry.yaml": f"title: Outside\n\nskills_dir: '{skills_dir}'\n"})
    monkeypatch.chdir(repo)
    message = (f"Error: registry.yaml:3: `skills_dir` {skills_dir!r} {why}; it must name a folder inside the "
               f"repository, relative to registry.yaml, such as `skills`\n")
    for args in (["validate"], ["build", "--out", "site"]):
        result = CliRunner().invoke(cli, ["--config", "registry.yaml", *args])
        assert (result.exit_code, result.output) == (1, message), args
    assert not (repo / "site").exists()


@pytest.mark.parametrize("skills_dir", ["skills", "./skills", "content/../skills", "skills/"])
def test_a_skills_dir_that_stays_inside_the_repository_is_accepted(tmp_path: Path, skills_dir: str) -> None:
    repo = write_tree(tmp_path, {"registry.yaml": f"skills_dir: {skills_dir}\n",
                                 "skills/alpha/SKILL.md": SKILL_MD.format(name="alpha"),
                                 "content/README.md": "Other pages.\n"})
    config = load_config(repo / "registry.yaml")
    assert config.skills_path.resolve() == (repo / "skills").resolve()
    assert validate_paths([config.skills_path], config).diagnostics == ()


def test_user_paths_are_placed_by_line_and_character_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    body = "/home/ann first\nsee /Users/bo and /home/cy\n\nnaïve → C:\\Users\\dee\\x\n/home/eve"
    write_tree(tmp_path, {"demo/SKILL.md": f"---\nname: demo\ndescription: Reads files. Use when asked.\n---\n{body}\n"})
    found = [(d.line, d.column, d.message) for d in validate_paths([Path("demo")], load_config(None)).diagnostics
             if d.code == "SK403"]
    assert found == [(5, 1, "absolute user path `/home/ann`"), (6, 5, "absolute user path `/Users/bo`"),
                     (6, 19, "absolute user path `/home/cy`"), (8, 9, "absolute user path `C:\\Users\\dee\\x`"),
                     (9, 1, "absolute user path `/home/eve`")]
