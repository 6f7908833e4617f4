"""git's view of the skill folders (``publish.worktree``): a signature that changes with everything the loader
would read in the folder, and the paths git ignores in it."""

from __future__ import annotations

from pathlib import Path

from helpers.build import SKILLS, git, make_registry

from builder.core.config import load_config
from builder.core.discovery import registry_skills
from builder.core.git_ignored import git_top
from builder.publish.current import build_key
from builder.publish.worktree import GIT_SIGNATURE, WorkTree, read_work_tree


def _view(repo: Path) -> WorkTree:
    config = load_config(repo / "registry.yaml")
    return read_work_tree(git_top(repo), config.root, registry_skills(config))[1]


def test_a_signature_follows_the_folder_and_only_it(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS)
    first = _view(repo).signatures
    assert sorted(first) == sorted(f"skills/{name}" for name in SKILLS)
    assert all(sig.startswith(GIT_SIGNATURE) for sig in first.values())
    skill_md = repo / "skills/csv-profiler/SKILL.md"
    before = skill_md.read_bytes()
    skill_md.write_bytes(before + b"\nMore.\n")
    edited = _view(repo).signatures
    assert {p for p in first if first[p] != edited[p]} == {"skills/csv-profiler"}
    skill_md.write_bytes(before)  # the committed bytes again: git sees no change, nor does the signature
    assert _view(repo).signatures == first
    (repo / "skills/secret-scanner/new.md").write_text("# New\n")  # untracked, so published: a change
    assert _view(repo).signatures["skills/secret-scanner"] != first["skills/secret-scanner"]


def test_a_folder_git_does_not_look_into_is_surveyed(tmp_path: Path) -> None:
    """A nested repository inside a skill folder is one untracked entry to git: its files are stated."""
    repo = make_registry(tmp_path / "repo", SKILLS)
    nested = repo / "skills/csv-profiler/vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "tool.py").write_text("print(1)\n")
    first = _view(repo).signatures["skills/csv-profiler"]
    assert _view(repo).signatures["skills/csv-profiler"] == first
    (nested / "tool.py").write_text("print(22)\n")
    assert _view(repo).signatures["skills/csv-profiler"] != first


def test_ignored_paths_are_given_to_their_skill_and_leave_its_signature_as_it_was(tmp_path: Path) -> None:
    """An ignored file is never published, so adding one changes nothing the build reads of the folder."""
    repo = make_registry(tmp_path / "repo", SKILLS)
    first = _view(repo)
    assert first.ignored == {}
    (repo / ".gitignore").write_text("*.local\ncache/\n")
    (repo / "skills/secret-scanner/notes.local").write_text("mine\n")
    (repo / "skills/secret-scanner/scripts/cache").mkdir(parents=True)
    (repo / "skills/secret-scanner/scripts/cache/x").write_text("x\n")
    view = _view(repo)
    assert view.ignored == {"skills/secret-scanner": ("notes.local", "scripts/cache")}
    assert view.signatures == first.signatures


def test_from_the_keys_status_the_ignored_paths_are_read_where_the_build_reads(tmp_path: Path) -> None:
    """Given the status `build_key` read, the view reads the ignored paths of the folders that differ from HEAD
    at once, and those of a committed folder when asked: the same paths and signatures as one status of all."""
    repo = make_registry(tmp_path / "repo", SKILLS)
    (repo / ".gitignore").write_text("*.local\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    (repo / "skills/secret-scanner/notes.local").write_text("mine\n")
    (repo / "skills/csv-profiler/notes.local").write_text("mine\n")
    (repo / "skills/csv-profiler/new.md").write_text("# New\n")  # untracked: the folder differs from HEAD
    (repo / "skills/loose").mkdir()
    (repo / "skills/loose/SKILL.md").write_text("---\nname: loose\n---\n")
    (repo / "skills/loose/x.local").write_text("x\n")
    (repo / ".gitignore").write_text("*.local\nskills/loose/\n")
    config = load_config(repo / "registry.yaml")
    whole = read_work_tree(git_top(repo), config.root, registry_skills(config))
    key = build_key(config, tmp_path / "site", site=True, keep_going=False)
    assert key is not None
    found, keyed = read_work_tree(git_top(repo), config.root, registry_skills(config), key.changes)
    assert found == whole[0] and "skills/loose" not in {s.path for s in found.skills}  # ignored whole
    assert keyed.signatures == whole[1].signatures
    assert keyed.ignored == {"skills/csv-profiler": ("notes.local",)}
    assert "skills/secret-scanner" in keyed.pending
    assert keyed.read_ignored(["skills/secret-scanner"]) == whole[1].ignored
    assert "skills/secret-scanner" not in keyed.pending


def test_outside_git_there_is_no_view(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS, commit=False)
    config = load_config(repo / "registry.yaml")
    found = registry_skills(config)
    assert read_work_tree(None, config.root, found) == (found, WorkTree())


def test_a_registry_below_the_top_of_its_repository_has_the_same_view(tmp_path: Path) -> None:
    """registry.yaml in a folder of a larger repository: paths stay relative to the registry's folder."""
    top = tmp_path / "monorepo"
    repo = make_registry(top / "registry", SKILLS, commit=False)
    (top / "other").mkdir()
    (top / "other/file.local").write_text("elsewhere\n")
    (top / ".gitignore").write_text("*.local\n")
    (repo / "skills/csv-profiler/notes.local").write_text("mine\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "base")
    first = _view(repo)
    assert sorted(first.signatures) == sorted(f"skills/{name}" for name in SKILLS)
    assert first.ignored == {"skills/csv-profiler": ("notes.local",)}
    (repo / "skills/changelog-from-git/SKILL.md").write_text("changed\n")
    (top / "other/file.txt").write_text("outside the registry\n")
    after = _view(repo).signatures
    assert {p for p in first.signatures if first.signatures[p] != after[p]} == {"skills/changelog-from-git"}


def test_the_keys_status_gives_the_same_view_where_discovery_looks_by_patterns(tmp_path: Path) -> None:
    """Without `skills:` in registry.yaml discovery looks in `plugins/*/skills` and `*/skills`: the key's status
    is read through the same patterns git would match, so the view is the one of git's own status."""
    from helpers.plugins import plugin_repository

    repo = plugin_repository(tmp_path / "repo")
    (repo / ".gitignore").write_text("*.local\n")
    (repo / "plugins/docs/skills/pdf/SKILL.md").write_text("---\nname: pdf\n---\nChanged.\n")
    (repo / "writing/skills/notes/new.md").write_text("# New\n")
    (repo / "writing/skills/notes/mine.local").write_text("mine\n")
    (repo / "elsewhere").mkdir()
    (repo / "elsewhere/untracked.md").write_text("not below a skill\n")
    config = load_config(repo / "registry.yaml")
    found, whole = read_work_tree(git_top(repo), config.root, registry_skills(config))
    key = build_key(config, tmp_path / "site", site=True, keep_going=False)
    assert key is not None
    keyed_found, keyed = read_work_tree(git_top(repo), config.root, registry_skills(config), key.changes)
    assert keyed.view is not None and not keyed.view.complete  # read from the key, not from a status of its own
    assert keyed_found == found and keyed.signatures == whole.signatures
    assert keyed.read_ignored(keyed.signatures) == whole.ignored == {"writing/skills/notes": ("mine.local",)}
