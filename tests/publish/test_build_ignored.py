"""Files git ignores are no part of the commit, so the build never publishes them: a skill folder's ignored
`.env` stays on the machine that has it, and a build of the same commit elsewhere gives the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.build import SKILLS, all_files, git, make_registry

from builder.core.config import RegistryConfig, load_config
from builder.publish.build import BuildOptions, BuildResult
from builder.publish.build import build as run_build
from builder.publish.current import build_key

# A build given its key (as `skillreg build` runs it) reads git's status from the key and the ignored paths of
# each folder only where it reads the folder; one without lists them all at once: both publish the same.
KEYED = pytest.mark.parametrize("keyed", [False, True], ids=["one-status", "from-the-key"])

SECRET = b"API_TOKEN=do-not-publish-me\n"


def build(config: RegistryConfig, out: Path, options: BuildOptions, keyed: bool = False) -> BuildResult:
    key = build_key(config, out, site=options.site, keep_going=options.keep_going) if keyed else None
    return run_build(config, out, BuildOptions(site=options.site, key=key))


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def _paths(out: Path, name: str) -> set[str]:
    """The file paths a skill's detail document lists."""
    return {f["path"] for f in json.loads((out / f"api/v1/skills/{name}.json").read_bytes())["files"]}


def _leaks(files: dict[str, bytes]) -> list[str]:
    """Every output file whose bytes hold the secret or whose path names an ignored file."""
    return sorted(rel for rel, data in files.items() if SECRET.strip() in data or ".env" in rel or "cache.bin" in rel)


def _with_ignored_files(repo: Path) -> None:
    (repo / ".gitignore").write_text(".env\nbuild-cache/\n")
    (repo / "skills/secret-scanner/.env").write_bytes(SECRET)
    (repo / "skills/secret-scanner/build-cache").mkdir()
    (repo / "skills/secret-scanner/build-cache/cache.bin").write_bytes(SECRET)
    (repo / "skills/csv-profiler/node_modules/left-pad").mkdir(parents=True)
    (repo / "skills/csv-profiler/node_modules/left-pad/index.js").write_text("module.exports = 1\n")
    (repo / ".git/info/exclude").write_text("node_modules/\n")


@KEYED
def test_files_git_ignores_in_a_skill_folder_are_never_published(tmp_path: Path, keyed: bool) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS)
    _with_ignored_files(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ignore local files")
    out = tmp_path / "site"
    result = build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False), keyed)
    files = all_files(out)
    assert _leaks(files) == []
    # An ignored node_modules/ is not committed, so it is no finding either (SK510 is for committed ones).
    assert not [d for d in result.report.diagnostics if d.code == "SK510"]
    assert ".env" not in _paths(out, "secret-scanner")
    # The same commit checked out without the ignored files builds to the same bytes.
    clean = tmp_path / "clean"
    git(tmp_path, "clone", "-q", str(repo), str(clean))
    build(load_config(clean / "registry.yaml"), tmp_path / "clean-site", BuildOptions(site=False), keyed)
    assert all_files(tmp_path / "clean-site") == files


@KEYED
def test_a_file_that_becomes_ignored_leaves_the_output_on_the_next_build(tmp_path: Path, keyed: bool) -> None:
    """The ignore rule changes outside the skill folder, its files do not: the rebuild still sees it."""
    repo = make_registry(tmp_path / "repo", SKILLS)
    (repo / "skills/secret-scanner/notes.local").write_text("mine\n")
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False), keyed)
    assert "notes.local" in _paths(out, "secret-scanner")
    (repo / ".gitignore").write_text("*.local\n")
    result = build(config, out, BuildOptions(site=False), keyed)
    assert result.written == ("secret-scanner",)
    assert "notes.local" not in _paths(out, "secret-scanner")
    (repo / ".gitignore").unlink()
    assert build(config, out, BuildOptions(site=False), keyed).written == ("secret-scanner",)
    assert "notes.local" in _paths(out, "secret-scanner")


@KEYED
def test_a_skill_folder_git_ignores_whole_is_not_published(tmp_path: Path, keyed: bool) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS)
    (repo / ".gitignore").write_text("skills/csv-profiler/\n")
    git(repo, "rm", "-r", "-q", "--cached", "skills/csv-profiler")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "keep csv-profiler local")
    result = build(load_config(repo / "registry.yaml"), tmp_path / "site", BuildOptions(site=False), keyed)
    assert "csv-profiler" not in result.published
    assert sorted(result.published) == sorted(set(SKILLS) - {"csv-profiler"})


@KEYED
def test_a_committed_folder_built_again_leaves_its_ignored_files_out(tmp_path: Path, keyed: bool) -> None:
    """A commit that changes a skill's history builds the skill again from a folder git signs as unchanged: the
    files git ignores there stay out, and no other folder is read."""
    repo = make_registry(tmp_path / "repo", SKILLS)
    _with_ignored_files(repo)
    _commit(repo, "ignore local files")
    config, out = load_config(repo / "registry.yaml"), tmp_path / "site"
    build(config, out, BuildOptions(site=False), keyed)
    skill_md = repo / "skills/secret-scanner/SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    _commit(repo, "more")
    skill_md.write_text(skill_md.read_text(encoding="utf-8").removesuffix("\nMore.\n"), encoding="utf-8")
    _commit(repo, "as it was")
    result = build(config, out, BuildOptions(site=False), keyed)
    assert result.written == ("secret-scanner",)
    files = all_files(out)
    assert _leaks(files) == []
    fresh = tmp_path / "fresh"
    build(config, fresh, BuildOptions(site=False), keyed)
    assert all_files(fresh) == files


@KEYED
def test_outside_git_every_file_is_published(tmp_path: Path, keyed: bool) -> None:
    """Without a repository there is nothing git ignores: a `.gitignore` is only a file."""
    repo = make_registry(tmp_path / "repo", SKILLS, commit=False)
    (repo / ".gitignore").write_text("*.local\n")
    (repo / "skills/secret-scanner/notes.local").write_text("mine\n")
    build(load_config(repo / "registry.yaml"), tmp_path / "site", BuildOptions(site=False), keyed)
    assert "notes.local" in _paths(tmp_path / "site", "secret-scanner")
