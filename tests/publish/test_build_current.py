"""In git, a build whose inputs git says are as the last build read them is current: the command stops before
building, and the output it leaves is the one a build from scratch makes. The byte-identity of rebuilds after
edits, deletions, renames, moves, a dirty work tree and a rewritten history is held in test_build_incremental."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.build import SKILLS, all_files, commit_all, git, make_registry

from builder.core.config import load_config, merge_flags
from builder.core.urls import INDEX_PATH
from builder.publish.build import BuildFailed, BuildOptions, build
from builder.publish.current import CURRENT_STATE, BuildKey, build_key, read_current
from builder.publish.transaction import output_place


def _key(repo: Path, out: Path, *, keep_going: bool = True) -> BuildKey:
    key = build_key(load_config(repo / "registry.yaml"), out, site=False, keep_going=keep_going)
    assert key is not None
    return key


def _build(repo: Path, out: Path, *, keep_going: bool = True) -> None:
    build(load_config(repo / "registry.yaml"), out,
          BuildOptions(site=False, keep_going=keep_going, key=_key(repo, out, keep_going=keep_going)))


def test_a_build_records_what_it_said_for_as_long_as_nothing_changes(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo")
    out = tmp_path / "site"
    _build(repo, out)
    current = read_current(out, _key(repo, out))
    assert current is not None
    assert current.published == len(SKILLS)
    assert current.commit == git(repo, "rev-parse", "HEAD").strip()
    assert not _key(repo, out).differs


def test_a_file_git_ignores_leaves_the_output_current(tmp_path: Path) -> None:
    """git status is read without ignored files: a file git ignores is never published, so it changes nothing."""
    repo = make_registry(tmp_path / "repo", commit=False)
    (repo / ".gitignore").write_text("*.local\n")
    commit_all(repo)
    out = tmp_path / "site"
    _build(repo, out)
    (repo / "skills/secret-scanner/notes.local").write_text("mine\n")
    assert read_current(out, _key(repo, out)) is not None
    (repo / "skills/secret-scanner/notes.txt").write_text("published\n")
    assert read_current(out, _key(repo, out)) is None
    assert _key(repo, out).differs


@pytest.mark.parametrize("change", ["index", "record"])
def test_an_output_or_record_changed_by_hand_is_built_again(tmp_path: Path, change: str) -> None:
    repo = make_registry(tmp_path / "repo")
    out = tmp_path / "site"
    _build(repo, out)
    before = all_files(out)
    path = out / INDEX_PATH if change == "index" else output_place(out).manifest
    path.write_bytes(path.read_bytes() + b" ")
    assert read_current(out, _key(repo, out)) is None
    _build(repo, out)
    assert all_files(out) == before


def test_a_build_that_fails_forgets_that_the_output_was_current(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo")
    out = tmp_path / "site"
    _build(repo, out, keep_going=False)
    record = output_place(out).state / CURRENT_STATE
    assert record.is_file()
    skill_md = repo / "skills/secret-scanner/SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8").replace("name: secret-scanner", "name: Secret Scanner"),
                        encoding="utf-8")
    with pytest.raises(BuildFailed):
        _build(repo, out, keep_going=False)
    assert not record.exists()


def test_the_settings_of_a_build_are_part_of_its_key(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo")
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    keys = {build_key(config, out, site=True, keep_going=True), build_key(config, out, site=False, keep_going=True),
            build_key(config, out, site=True, keep_going=False),
            build_key(merge_flags(config, profile="claude-code"), out, site=True, keep_going=True),
            build_key(config, tmp_path / "elsewhere", site=True, keep_going=True)}
    assert len({key.digest for key in keys if key is not None}) == 4  # the output's place is not in the key


def test_outside_git_there_is_no_key(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", commit=False)
    assert build_key(load_config(repo / "registry.yaml"), tmp_path / "site", site=False, keep_going=True) is None


def test_a_registry_below_the_top_of_its_repository_reads_only_its_own_folder(tmp_path: Path) -> None:
    """Lines of git status outside the registry's folder change nothing it reads; a line inside it does."""
    top = tmp_path / "repo"
    repo = make_registry(top / "registry", commit=False)
    (top / "README.md").write_text("# Notes\n")
    commit_all(top)
    out = tmp_path / "site"
    _build(repo, out)
    (top / "README.md").write_text("# Notes, edited\n")
    (top / "draft.md").write_text("untracked\n")
    assert read_current(out, _key(repo, out)) is not None
    assert not _key(repo, out).differs
    (repo / "skills/csv-profiler/notes.md").write_text("new\n")
    assert read_current(out, _key(repo, out)) is None
    _build(repo, out)
    assert read_current(out, _key(repo, out)) is not None


def test_another_installed_program_builds_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key names the installed distributions too: a new theme or renderer with the same builder version
    renders pages anew, so the output is no longer current."""
    repo = make_registry(tmp_path / "repo")
    out = tmp_path / "site"
    installed = tmp_path / "site-packages"
    (installed / "mkdocs_material-9.8.2.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(installed))
    _build(repo, out)
    assert read_current(out, _key(repo, out)) is not None
    (installed / "mkdocs_material-9.8.2.dist-info").rename(installed / "mkdocs_material-9.9.0.dist-info")
    assert read_current(out, _key(repo, out)) is None
