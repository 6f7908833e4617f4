"""A rebuild equals a build from scratch, byte for byte, after any sequence of changes; and it writes only what
changed: registry-wide documents whose rows are the same stay as they were, search shards are added by name."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO
from helpers.build import SKILLS, all_files, git, make_registry

from builder.core.bundle import dumps
from builder.core.config import load_config
from builder.core.errors import BuildError
from builder.core.search import SEARCH_INDEX_PATH, SHARDS_INDEX_PATH, search_index
from builder.core.urls import INDEX_PATH, STATE_PATH, WELL_KNOWN_V1, WELL_KNOWN_V2
from builder.publish import skill_output
from builder.publish.api import discovery_v1_document, discovery_v2_document, index_document
from builder.publish.build import BuildOptions, BuildResult, build
from builder.publish.current import build_key, read_current
from builder.publish.provenance import read_history
from builder.publish.transaction import output_place

Step = Callable[[Path], None]
MORE = ["readme-writer", "todo-collector"]


def _edit(rel: str, old: str, new: str) -> Step:
    def step(repo: Path) -> None:
        path = repo / "skills" / rel
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return step


def _append(rel: str, text: str) -> Step:
    def step(repo: Path) -> None:
        with open(repo / "skills" / rel, "a", encoding="utf-8") as fh:
            fh.write(text)
    return step


def _add(name: str) -> Step:
    def step(repo: Path) -> None:
        shutil.copytree(REPO / "skills" / name, repo / "skills" / name)
    return step


def _remove(name: str) -> Step:
    return lambda repo: shutil.rmtree(repo / "skills" / name)


def _rename(old: str, new: str) -> Step:
    def step(repo: Path) -> None:
        os.rename(repo / "skills" / old, repo / "skills" / new)
        _edit(f"{new}/SKILL.md", f"name: {old}", f"name: {new}")(repo)
    return step


def _touch(rel: str) -> Step:
    def step(repo: Path) -> None:
        path = repo / "skills" / rel
        path.write_bytes(path.read_bytes())  # a new mtime, the same bytes
    return step


def _registry(old: str, new: str) -> Step:
    def step(repo: Path) -> None:
        path = repo / "registry.yaml"
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return step


BODY_LINE = _append("secret-scanner/SKILL.md", "\nOne more line of body.\n")
DESCRIPTION = _edit("csv-profiler/SKILL.md", "description: Profiles CSV", "description: Profiles quirky CSV")
HEADING = _append("changelog-from-git/SKILL.md", "\n## Zebra crossings\n\nA new section.\n")
NEW_FILE = lambda repo: (repo / "skills/secret-scanner/references/extra.md").write_text("# Extra\n")  # noqa: E731
BREAK = _edit("secret-scanner/SKILL.md", "name: secret-scanner", "name: Secret Scanner")
MEND = _edit("secret-scanner/SKILL.md", "name: Secret Scanner", "name: secret-scanner")

def _move(old: str, new: str) -> Step:
    """Move a skill folder to another place registry.yaml names, keeping its name."""
    def step(repo: Path) -> None:
        (repo / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(repo / old, repo / new)
    return step


def _ignore(patterns: str) -> Step:
    """Set the repository's .gitignore (outside every skill folder) to ``patterns``."""
    return lambda repo: (repo / ".gitignore").write_text(patterns)


def _local_file(repo: Path) -> None:
    """A file only this machine has: published outside git, never inside it while git ignores it."""
    (repo / "skills/secret-scanner/notes.local").write_text("mine\n")
    (repo / ".gitignore").write_text("*.local\n")


def _rewrite(repo: Path) -> None:
    """Drop the last two commits and make another in their place: a history the last build never saw."""
    git(repo, "reset", "-q", "--hard", "HEAD~2")
    BODY_LINE(repo)
    git(repo, "commit", "-q", "-am", "rewritten", date="2026-03-01T10:00:00Z")


RETITLE = _registry("title: ", "title: Renamed ")
REBASE = _registry("base_url: https://", "base_url: http://")
SPLIT = lambda repo: (_registry("skills_dir: skills", "skills:\n  - skills\n  - extra")(repo),  # noqa: E731
                      _move("skills/changelog-from-git", "extra/changelog-from-git")(repo))
FULL = (RETITLE, REBASE, SPLIT)  # the settings changed: nothing can be reused
SEQUENCES = {
    "edits": [BODY_LINE, DESCRIPTION, HEADING, NEW_FILE, _touch("csv-profiler/SKILL.md"), BODY_LINE],
    "adds-and-removals": [_add(MORE[0]), _remove("changelog-from-git"), _add(MORE[1]), DESCRIPTION,
                          _remove(MORE[0])],
    "renames": [_rename("csv-profiler", "csv-inspector"), BODY_LINE, _rename("csv-inspector", "csv-profiler")],
    "invalid-and-back": [BREAK, DESCRIPTION, MEND, HEADING],
    "registry-yaml": [RETITLE, BODY_LINE, REBASE, DESCRIPTION],
    "moves-between-folders": [
        SPLIT, _move("skills/csv-profiler", "extra/csv-profiler"), BODY_LINE,
        _edit("../extra/csv-profiler/SKILL.md", "description: Profiles CSV", "description: Profiles odd CSV"),
        _move("extra/csv-profiler", "skills/csv-profiler")],
    "ignored-files": [_local_file, BODY_LINE, _ignore(""), _ignore("*.local\n")],
}
# Sequences that work on the repository's history themselves: built in git only.
IN_GIT = {"rewritten-history": [BODY_LINE, DESCRIPTION, _rewrite, NEW_FILE]}
MODES = {"git": "commit each step", "dirty": "in git, steps left uncommitted", "folder": "no repository"}


def _rebuild(config_path: Path, out: Path) -> BuildResult | None:
    """A rebuild as ``skillreg build`` makes it: none when the last build's record says the output is current."""
    config = load_config(config_path)
    key = build_key(config, out, site=False, keep_going=True)
    if key is not None and read_current(out, key) is not None:
        return None
    return build(config, out, BuildOptions(site=False, keep_going=True, key=key))


def _scratch(config_path: Path, out: Path) -> dict[str, bytes]:
    """A build of the same sources into a new output, with its own (empty) records."""
    build(load_config(config_path), out, BuildOptions(site=False, keep_going=True))
    return all_files(out)


@pytest.mark.parametrize(("sequence", "mode"), [*((s, m) for s in SEQUENCES for m in MODES),
                                               *((s, "git") for s in IN_GIT)])
def test_every_rebuild_equals_a_build_from_scratch(tmp_path: Path, sequence: str, mode: str) -> None:
    """Each step's rebuild equals a build from scratch: committed, left in a dirty work tree, or outside git. In
    git, a rebuild that git says has nothing to do (``current``) leaves the output as it is, and that is the same
    output too."""
    repo = make_registry(tmp_path / "repo", SKILLS, commit=mode != "folder")
    out = tmp_path / "site"
    _rebuild(repo / "registry.yaml", out)
    for number, step in enumerate({**SEQUENCES, **IN_GIT}[sequence]):
        step(repo)
        if mode == "git":
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", f"step {number}", date=f"2026-02-{number + 1:02d}T10:00:00Z")
        result = _rebuild(repo / "registry.yaml", out)
        assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / f"scratch-{number}"), number
        assert result is not None, number  # every step changes what git says: a commit, a status line, a stat
        if step not in FULL:
            assert result.reused, number  # an incremental build, not a full one
        assert (_rebuild(repo / "registry.yaml", out) is None) == (mode != "folder"), number


def _inodes(out: Path, *paths: str) -> dict[str, int]:
    return {path: (out / path).stat().st_ino for path in paths}


def test_a_body_edit_leaves_the_search_documents_in_place(tmp_path: Path) -> None:
    """A line of body text is in no search row: the search index and its shards are not written again."""
    repo = make_registry(tmp_path / "repo", SKILLS, commit=False)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False))
    shards = sorted(p.relative_to(out).as_posix() for p in (out / "api/v1/search").rglob("*.json"))
    search = _inodes(out, SEARCH_INDEX_PATH, *shards)
    index = _inodes(out, INDEX_PATH)
    BODY_LINE(repo)
    result = build(config, out, BuildOptions(site=False))
    assert result.written == ("secret-scanner",)
    assert _inodes(out, SEARCH_INDEX_PATH, *shards) == search
    assert _inodes(out, INDEX_PATH) != index  # the skill's digest is in its index row


def test_a_description_edit_adds_only_the_shards_it_changes(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo", SKILLS, commit=False)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False))
    before = {p.relative_to(out).as_posix(): p.stat().st_ino for p in (out / "api/v1/search").rglob("*.json")}
    DESCRIPTION(repo)
    build(config, out, BuildOptions(site=False))
    after = {p.relative_to(out).as_posix(): p.stat().st_ino for p in (out / "api/v1/search").rglob("*.json")}
    kept = set(before) & set(after) - {SHARDS_INDEX_PATH}
    assert kept and set(after) - set(before) and set(before) - set(after)  # some stay, some come, some go
    assert all(before[path] == after[path] for path in kept)  # a shard of the same name is the same file
    assert after[SHARDS_INDEX_PATH] != before[SHARDS_INDEX_PATH]
    assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / "scratch")


def test_the_assembled_documents_equal_the_documents_encoded_whole(tmp_path: Path) -> None:
    """The registry-wide documents are joined from rows kept as bytes; they equal encoding each document whole."""
    repo = make_registry(tmp_path / "repo", [*SKILLS, *MORE])
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False))
    BODY_LINE(repo)
    build(config, out, BuildOptions(site=False))  # rows of four skills from the manifest, one encoded now
    def read(path: str) -> list[dict[str, object]]:
        skills: list[dict[str, object]] = json.loads((out / path).read_bytes())["skills"]
        return skills

    source = read_history(repo / "skills").source
    collections = json.loads((out / INDEX_PATH).read_bytes()).get("collections", ())  # the frame's own part
    assert (out / INDEX_PATH).read_bytes() == dumps(index_document(config, source, read(INDEX_PATH), collections))
    assert (out / f"{WELL_KNOWN_V1}/index.json").read_bytes() == dumps(
        discovery_v1_document(read(f"{WELL_KNOWN_V1}/index.json")))
    assert (out / f"{WELL_KNOWN_V2}/index.json").read_bytes() == dumps(
        discovery_v2_document(read(f"{WELL_KNOWN_V2}/index.json")))
    assert (out / SEARCH_INDEX_PATH).read_bytes() == dumps(search_index(read(SEARCH_INDEX_PATH)))
    assert json.loads((out / STATE_PATH).read_bytes())["count"] == len(SKILLS) + len(MORE)


@pytest.mark.parametrize("in_git", [False, True])
def test_an_unchanged_invalid_skill_is_not_validated_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           in_git: bool) -> None:
    """Under --keep-going an invalid skill's findings are recorded like any outcome: an unchanged one is reused,
    and still reported."""
    repo = make_registry(tmp_path / "repo", SKILLS, commit=False)
    BREAK(repo)
    if in_git:
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    first = build(config, out, BuildOptions(site=False, keep_going=True))
    assert first.skipped == ("skills/secret-scanner",)
    BODY_LINE(repo)
    DESCRIPTION(repo)
    if in_git:
        git(repo, "commit", "-q", "-am", "secret-scanner and csv-profiler edited")
    validated: list[str] = []
    real = skill_output.validate_folder

    def counted(folder: Path, *args: Any, **kwargs: Any) -> Any:
        validated.append(folder.name)
        return real(folder, *args, **kwargs)

    monkeypatch.setattr(skill_output, "validate_folder", counted)  # the build runs in this process at this size
    again = build(config, out, BuildOptions(site=False, keep_going=True))
    assert sorted(validated) == ["csv-profiler", "secret-scanner"]  # both edited
    assert again.skipped == ("skills/secret-scanner",) and again.written == ("csv-profiler",)
    validated.clear()
    third = build(config, out, BuildOptions(site=False, keep_going=True))
    assert validated == [] and third.skipped == ("skills/secret-scanner",)  # nothing changed: nothing validated
    assert [d.to_dict() for d in third.report] == [d.to_dict() for d in first.report]
    assert [d.to_dict() for d in again.report] == [d.to_dict() for d in first.report]
    assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / "scratch")


def test_a_manifest_missing_rows_stops_the_build_and_the_next_one_is_full(tmp_path: Path) -> None:
    """A record that cannot give every published row is not one this builder wrote: the build stops without
    changing the output, and deletes it, so the next build starts over."""
    import sqlite3
    from contextlib import closing

    repo = make_registry(tmp_path / "repo", SKILLS, commit=False)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False))
    with closing(sqlite3.connect(output_place(out).manifest)) as db, db:
        db.execute("DELETE FROM search_rows WHERE name = ?", (SKILLS[1],))
    before = all_files(out)
    DESCRIPTION(repo)  # csv-profiler's search row changes: the others are read from the record
    with pytest.raises(BuildError) as stopped:
        build(config, out, BuildOptions(site=False))
    assert str(stopped.value) == (f"the record of the last build of {out} lacks the search row of `{SKILLS[1]}`, "
                                  "so it was deleted; nothing was changed: build again to rebuild every skill")
    assert all_files(out) == before and not output_place(out).manifest.exists()
    result = build(config, out, BuildOptions(site=False))
    assert sorted(result.written) == sorted(SKILLS) and result.reused == ()
    assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / "scratch")


def test_outcomes_and_heads_made_without_init_equal_those_made_with_it() -> None:
    from builder.core.model import Frontmatter, Skill
    from builder.core.workers import frozen_without_init as _made

    fm = _made(Frontmatter, data={"name": "x"}, lines={"name": 2}, start_line=1, end_line=3)
    assert fm == Frontmatter({"name": "x"}, {"name": 2}, 1, 3) and fm.sources == {} and fm.sources is not _made(
        Frontmatter, data={}, lines={}, start_line=1, end_line=1).sources  # a new dict each, as default_factory
    skill = _made(Skill, name="x", folder=Path("/s/x"), skill_md="SKILL.md", frontmatter=fm, body="", body_line=4,
                  files=())
    assert skill == Skill("x", Path("/s/x"), "SKILL.md", fm, "", 4, ())


def test_findings_read_back_from_the_record_equal_those_recorded() -> None:
    """The record's findings are made without ``Diagnostic.__init__``; they equal, hash and replace as made."""
    import dataclasses

    from builder.core.diagnostics import Diagnostic, Severity
    from builder.publish.outcome import findings_from_json, findings_json

    made = (Diagnostic("SK120", Severity.WARNING, "skills/x/SKILL.md", 3, "long line", "wrap it", 2, "skills/x"),
            Diagnostic("SK004", Severity.ERROR, "skills/x/SKILL.md", 0, "no description"))
    back = findings_from_json(findings_json(made))
    assert back == made and [hash(d) for d in back] == [hash(d) for d in made]
    assert [d.severity for d in back] == [Severity.WARNING, Severity.ERROR] and not back[0].baselined
    assert dataclasses.replace(back[0], baselined=True) == dataclasses.replace(made[0], baselined=True)
    with pytest.raises(ValueError):
        findings_from_json('[["SK004", "error", "f", 0]]')  # a record of another shape: the build starts afresh


def test_signatures_compared_in_worker_processes_equal_those_of_one_process(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A large registry's rebuild compares folder signatures in workers; a small one shows the same result."""
    import builder.publish.folder_changes as building

    repo = make_registry(tmp_path / "repo", [*SKILLS, *MORE], commit=False)
    folders = sorted((repo / "skills").iterdir())
    items = [(str(f), entries, sig, ()) for f in folders for sig, entries in [building.survey(f)]]
    assert building.changed_folders(items, None) == set()
    (folders[1] / "SKILL.md").write_text("changed\n")
    (folders[-1] / "new.md").write_text("new\n")
    alone = building.changed_folders(items, None)
    assert alone == {1, len(folders) - 1}
    monkeypatch.setattr(building, "PARALLEL_SIGNATURES", 2)
    monkeypatch.setattr(building, "SIGNATURE_CHUNK", 2)
    assert building.changed_folders(items, 2) == alone  # worker processes, each sent its range's items
    repo = make_registry(tmp_path / "repo2", [*SKILLS, *MORE], commit=False)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False, jobs=2))
    BODY_LINE(repo)
    result = build(config, out, BuildOptions(site=False, jobs=2))
    assert result.written == ("secret-scanner",) and len(result.reused) == len(folders) - 1


def test_a_website_rebuild_reads_the_documents_that_did_not_change(tmp_path: Path) -> None:
    """The website reads index.json and the search manifest from the staged output; a rebuild that changes
    neither (nothing changed at all, or a body line) still builds the website, and equals a build from scratch."""
    repo = make_registry(tmp_path / "repo", SKILLS[:2], commit=False)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out)
    assert build(config, out).written == ()
    _append("csv-profiler/SKILL.md", "\nOne more line of body.\n")(repo)
    assert build(config, out).written == ("csv-profiler",)
    fresh = tmp_path / "fresh"
    build(config, fresh)
    assert all_files(out) == all_files(fresh)


def test_the_cyclic_collector_runs_again_after_a_build_whatever_its_end(tmp_path: Path) -> None:
    """The build pauses Python's cyclic collector while it handles its per-skill records; a caller gets it back
    after a build that succeeded and after one that stopped."""
    import gc

    from builder.publish.build import BuildFailed

    repo = make_registry(tmp_path / "repo", SKILLS[:2], commit=False)
    config = load_config(repo / "registry.yaml")
    build(config, tmp_path / "site", BuildOptions(site=False))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    BREAK(repo)
    with pytest.raises(BuildFailed):
        build(config, tmp_path / "site", BuildOptions(site=False))
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_search_edits_update_only_the_shards_they_touch_from_the_published_ones(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first build, description and heading edits (the same skills published) never make the sharded
    index whole again, and each rebuild still equals a build from scratch; a shards' index altered in the output
    (not the one the manifest recorded) is made whole again."""
    import builder.publish.documents as build_module

    repo = make_registry(tmp_path / "repo", SKILLS, commit=False)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False))
    whole = build_module.search_files
    made: list[int] = []
    monkeypatch.setattr(build_module, "search_files", lambda rows: made.append(1) or whole(rows))
    steps = [DESCRIPTION, HEADING, _edit("csv-profiler/SKILL.md", "description: Profiles quirky CSV",
                                         "description: Zebra-striped tables, profiled")]
    for number, step in enumerate(steps):
        step(repo)
        build(config, out, BuildOptions(site=False))
        assert not made, number
        monkeypatch.setattr(build_module, "search_files", whole)
        assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / f"scratch-{number}"), number
        monkeypatch.setattr(build_module, "search_files", lambda rows: made.append(1) or whole(rows))
    shards = out / SHARDS_INDEX_PATH
    shards.write_bytes(shards.read_bytes().replace(b'"count":', b'"count": '))
    _edit("csv-profiler/SKILL.md", "Zebra-striped", "Quagga-striped")(repo)
    build(config, out, BuildOptions(site=False))
    assert made  # the altered index was not trusted
    monkeypatch.setattr(build_module, "search_files", whole)
    assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / "scratch-last")


def _keep_times(change: Callable[[Path], None]) -> Callable[[Path], None]:
    """``change`` applied to a file, then its access and modification times put back as they were."""
    def step(path: Path) -> None:
        before = path.stat()
        change(path)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    return step


# Changes to one skill folder, each applied to references/guide.md or the folder around it.
FOLDER_CHANGES: dict[str, Callable[[Path], None]] = {
    "append": lambda p: p.write_bytes(p.read_bytes() + b"\nmore\n"),
    "same size, times kept": _keep_times(lambda p: p.write_bytes(p.read_bytes().swapcase())),
    "mode": lambda p: p.chmod(0o755),
    "new file beside": lambda p: (p.parent / "new.md").write_text("# New\n"),
    "new folder beside": lambda p: (p.parent / "deeper").mkdir(),
    "removed": lambda p: p.unlink(),
    "renamed": lambda p: p.rename(p.with_name("renamed.md")),
    "replaced by a link": lambda p: (p.unlink(), p.symlink_to("../SKILL.md")),
    "replaced by a copy, times kept": _keep_times(lambda p: (p.write_bytes(p.read_bytes()), shutil.copy2(
        p, p.with_name("x.tmp")), os.replace(p.with_name("x.tmp"), p))),
}


@pytest.mark.parametrize("change", list(FOLDER_CHANGES))
def test_restating_the_listed_entries_sees_every_change_survey_sees(tmp_path: Path, change: str) -> None:
    """``restat`` stats the entries ``survey`` listed, without listing folders: unchanged it gives the same
    signature; after any change below the folder, a different one (as a new survey does)."""
    from builder.publish.folder_changes import restat, survey

    folder = tmp_path / "skill"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: skill\n---\nBody\n")
    guide = folder / "references" / "guide.md"
    guide.write_text("# Guide\n\nSome text.\n")
    sig, entries = survey(folder)
    assert entries.split("\n") == ["SKILL.md", "references", "references/guide.md"]
    assert restat(str(folder), entries) == sig
    FOLDER_CHANGES[change](guide)
    assert survey(folder)[0] != sig
    assert restat(str(folder), entries) != sig


def test_entries_that_cannot_be_listed_again_are_stated_never_equal(tmp_path: Path) -> None:
    from builder.publish.folder_changes import restat, survey

    folder = tmp_path / "skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("x")
    (folder / "two\nlines.md").write_text("x")
    sig, entries = survey(folder)
    assert entries == "\0" and restat(str(folder), entries) != sig
    assert survey(folder)[0] == sig  # (the signature itself is still exact)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "folder"])
def test_a_file_rewritten_with_its_times_kept_is_built_again(tmp_path: Path, in_git: bool) -> None:
    """Same size, same modification time, same inode: only the change time tells, and the rebuild sees it."""
    repo = make_registry(tmp_path / "repo", SKILLS, commit=in_git)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")
    build(config, out, BuildOptions(site=False))
    path = repo / "skills/csv-profiler/SKILL.md"
    _keep_times(lambda p: p.write_text(p.read_text(encoding="utf-8").replace("Profiles CSV", "Profiles TSV", 1),
                                       encoding="utf-8"))(path)
    if in_git:  # (git's own index, comparing whole seconds, takes the file as unchanged: add it afresh)
        git(repo, "rm", "-q", "--cached", "skills/csv-profiler/SKILL.md")
        git(repo, "add", "skills/csv-profiler/SKILL.md")
        git(repo, "commit", "-q", "-m", "tsv", date="2026-02-01T10:00:00Z")
    result = build(config, out, BuildOptions(site=False))
    assert result.written == ("csv-profiler",)
    assert b"Profiles TSV" in (out / INDEX_PATH).read_bytes()
    assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / "scratch")
    untouched = build(config, out, BuildOptions(site=False))  # and then nothing is built again
    assert untouched.written == ()


def test_a_rebuild_in_a_git_checkout_learns_what_changed_from_git(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """In git, a skill folder's signature is its tree at HEAD and what `git status` says of it: no folder is
    surveyed or stated again file by file, and an uncommitted edit is still seen."""
    import builder.publish.folder_changes as folder_changes
    import builder.publish.skill_output as output

    repo = make_registry(tmp_path / "repo", SKILLS)
    out = tmp_path / "site"
    config = load_config(repo / "registry.yaml")

    def refuse(*args: object) -> None:
        raise AssertionError("a folder was surveyed in a git checkout")

    monkeypatch.setattr(folder_changes, "restat", refuse)
    monkeypatch.setattr(output, "survey", refuse)
    build(config, out, BuildOptions(site=False, jobs=1))
    BODY_LINE(repo)  # not committed
    assert build(config, out, BuildOptions(site=False, jobs=1)).written == ("secret-scanner",)
    assert build(config, out, BuildOptions(site=False, jobs=1)).written == ()
    git(repo, "commit", "-q", "-am", "body line")  # committed: a new tree and a new version
    assert build(config, out, BuildOptions(site=False, jobs=1)).written == ("secret-scanner",)
    assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / "scratch")


def test_a_few_changed_index_rows_are_put_in_place_in_the_last_index(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild where one skill's index row changed writes index.json from the last one, without reading every
    row back from the record; the bytes equal a build from scratch. Past ``SPLICED_ROWS`` rows it joins them."""
    from builder.publish import documents

    repo = make_registry(tmp_path / "repo", SKILLS)
    config, out = load_config(repo / "registry.yaml"), tmp_path / "site"
    build(config, out, BuildOptions(site=False))
    before = (out / INDEX_PATH).read_bytes()
    DESCRIPTION(repo)
    joined = documents.joined_rows

    def no_index_join(kind: str, *args: Any) -> Any:
        assert kind != "index", "the index was joined from every row"
        return joined(kind, *args)

    monkeypatch.setattr(documents, "joined_rows", no_index_join)
    build(config, out, BuildOptions(site=False))
    after = (out / INDEX_PATH).read_bytes()
    assert after != before and b"Profiles quirky CSV" in after
    monkeypatch.undo()  # a build from scratch joins every row
    assert all_files(out) == _scratch(repo / "registry.yaml", tmp_path / "scratch")
    monkeypatch.setattr(documents, "joined_rows", no_index_join)
    monkeypatch.setattr(documents, "SPLICED_ROWS", 0)
    _edit("csv-profiler/SKILL.md", "quirky", "odd")(repo)
    with pytest.raises(AssertionError, match="joined from every row"):
        build(config, out, BuildOptions(site=False))
