"""Every version a skill had on the built branch: read from real git repositories made in tmp_path, published as
versions.json and zips regenerated from git objects (the builder's half: the client installs them in
tests/client/test_client_versions.py)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import write_tree
from helpers.build import all_files, git, make_registry, skillreg
from helpers.history import commit, new_registry, skill_md, versions

from builder.cli.app import cli
from builder.core.config import load_config
from builder.core.diagnostics import RULES, Severity
from builder.core.errors import ConfigError
from builder.core.model import SkillFile, skill_digest
from builder.publish import history_walk as history_module
from builder.publish import provenance as provenance_module
from builder.publish import skill_output
from builder.publish.build import BuildOptions, BuildResult, build

QUOTE = '"'
SVG_SCRIPT = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
VIEWER = "<!doctype html><title>Viewer</title><script>document.title = 'loaded'</script>\n"


def run_build(repo: Path, out: Path, **kwargs: Any) -> BuildResult:
    return build(load_config(repo / "registry.yaml"), out, BuildOptions(site=False, **kwargs))


def zip_files(out: Path, entry: dict[str, Any]) -> dict[str, tuple[bytes, int]]:
    data = (out / entry["zip"]["path"]).read_bytes()
    assert len(data) == entry["zip"]["size"]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {i.filename: (archive.read(i), (i.external_attr >> 16) & 0o777) for i in archive.infolist()}


def files_at(repo: Path, commit_id: str, folder: str) -> dict[str, bytes]:
    """The folder's files as git holds them at ``commit_id``: the bytes a checkout of that commit has."""
    names = git(repo, "ls-tree", "-r", "--name-only", commit_id, "--", folder + "/").splitlines()
    return {n.removeprefix(folder + "/"): subprocess.run(["git", "show", f"{commit_id}:{n}"], cwd=repo, check=True,
                                                         capture_output=True).stdout for n in names}


def digest_of(files: dict[str, bytes]) -> str:
    return skill_digest([SkillFile(p, d) for p, d in files.items()])


# --- an old version, rebuilt from git ------------------------------------------------------------------------

def test_an_old_version_is_rebuilt_from_git_byte_for_byte_after_a_change(tmp_path: Path) -> None:
    repo = make_registry(tmp_path / "repo")
    old_commit = git(repo, "rev-parse", "HEAD").strip()
    old_files = files_at(repo, old_commit, "skills/csv-profiler")
    md = repo / "skills/csv-profiler/SKILL.md"
    md.write_text(md.read_text().replace('version: "1.0.0"', 'version: "1.1.0"') + "\nTSV is sniffed too.\n")
    new_commit = commit(repo, "csv-profiler 1.1.0", "2026-02-01T00:00:00Z")
    out = tmp_path / "site"  # from scratch, as the Pages workflow builds
    run_build(repo, out)

    doc = versions(out, "csv-profiler")
    index = json.loads((out / "api/v1/index.json").read_text())
    head = next(s for s in index["skills"] if s["name"] == "csv-profiler")
    assert doc["latest"] == head["digest"] and doc["history"] == "complete"
    new, old = doc["versions"]
    assert (new["commit"], new["version"], new["time"]) == (new_commit, "1.1.0", "2026-02-01T00:00:00Z")
    assert (old["commit"], old["version"], old["time"]) == (old_commit, "1.0.0", "2026-01-02T03:04:05Z")
    assert old["digest"] == digest_of(old_files) != new["digest"]
    assert old["status"] == "available" and old["rules"] == [] and old["reason"] is None
    unzipped = zip_files(out, old)
    assert {p: data for p, (data, _) in unzipped.items()} == old_files
    assert unzipped["scripts/profile_csv.py"][1] == 0o755 and unzipped["SKILL.md"][1] == 0o644
    assert old["zip"]["url"] == "https://skill-registry.github.io/skill-registry/" + old["zip"]["path"]
    # Only the zip and the entry for an old version: no raw files, JSON bundle or detail document of it.
    assert sorted(p.name for p in (out / "api/v1/bundles/csv-profiler").iterdir()) == sorted(
        [Path(new["zip"]["path"]).name, Path(new["zip"]["path"]).with_suffix(".json").name,
         Path(old["zip"]["path"]).name])
    detail = json.loads((out / "api/v1/skills/csv-profiler.json").read_text())
    assert detail["links"]["versions"].endswith("api/v1/skills/csv-profiler/versions.json")
    assert (out / "api/v1/schema/versions.schema.json").is_file()


def test_a_revert_is_the_earlier_version_again_and_uncommitted_work_is_listed_first(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    first = git(repo, "rev-parse", "HEAD").strip()
    md = repo / "skills/hello/SKILL.md"
    md.write_text(skill_md("hello", "1.1.0"))
    second = commit(repo, "1.1.0", "2026-01-02T00:00:00Z")
    md.write_text(skill_md("hello", "1.0.0"))
    commit(repo, "revert to 1.0.0", "2026-01-03T00:00:00Z")
    run_build(repo, tmp_path / "a")
    doc = versions(tmp_path / "a", "hello")
    assert [(v["version"], v["commit"]) for v in doc["versions"]] == [("1.1.0", second), ("1.0.0", first)]
    assert doc["latest"] == doc["versions"][1]["digest"]  # the head is the reverted-to version

    md.write_text(skill_md("hello", "2.0.0-dev"))  # not committed yet
    run_build(repo, tmp_path / "b")
    doc = versions(tmp_path / "b", "hello")
    assert [(v["version"], v["commit"], v["time"]) for v in doc["versions"]][0] == ("2.0.0-dev", None, None)
    assert doc["latest"] == doc["versions"][0]["digest"] and len(doc["versions"]) == 3


def test_a_merged_branch_publishes_what_it_merged_not_its_intermediate_commits(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    git(repo, "checkout", "-q", "-b", "feature")
    md = repo / "skills/hello/SKILL.md"
    for version in ("1.1.0-wip", "1.1.0-rc", "1.1.0"):
        md.write_text(skill_md("hello", version))
        commit(repo, version, "2026-01-02T00:00:00Z")
    write_tree(repo / "skills/other", {"SKILL.md": skill_md("other", "0.1.0")})
    commit(repo, "other skill on the branch", "2026-01-02T01:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "merge feature", date="2026-01-03T00:00:00Z")
    merge = git(repo, "rev-parse", "HEAD").strip()
    run_build(repo, tmp_path / "site")
    doc = versions(tmp_path / "site", "hello")
    assert [(v["version"], v["commit"]) for v in doc["versions"]][0] == ("1.1.0", merge)
    assert [v["version"] for v in doc["versions"]] == ["1.1.0", "1.0.0"]
    assert [v["commit"] for v in versions(tmp_path / "site", "other")["versions"]] == [merge]


# --- withdrawn, yanked, taken down, pruned --------------------------------------------------------------------

@pytest.mark.parametrize(("files", "rule", "what"), [
    ({"scripts/run.py": "print('hi')\n", "scripts/__pycache__/run.cpython-311.pyc": b"\x00junk"}, "SK510",
     "generated folder"),
    ({"references/CON.md": "x\n"}, "SK516", "device name on Windows"),
])
def test_an_old_version_failing_todays_safety_rules_is_withdrawn_without_bytes(tmp_path: Path, files: dict,
                                                                              rule: str, what: str) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    write_tree(repo / "skills/hello", files)
    bad = commit(repo, "unsafe", "2026-01-02T00:00:00Z")
    shutil.rmtree(repo / "skills/hello")
    write_tree(repo / "skills/hello", {"SKILL.md": skill_md("hello", "1.2.0")})
    commit(repo, "fixed", "2026-01-03T00:00:00Z")
    out = tmp_path / "site"
    run_build(repo, out)
    fixed, withdrawn, first = versions(out, "hello")["versions"]
    assert (withdrawn["commit"], withdrawn["status"], withdrawn["rules"], withdrawn["zip"]) == (
        bad, "withdrawn", [rule], None)
    assert withdrawn["reason"].startswith(f"fails {rule}: ") and what in withdrawn["reason"]
    assert fixed["status"] == first["status"] == "available"
    assert not any(withdrawn["digest"][7:19] in p.name for p in (out / "api/v1/bundles/hello").iterdir())


def test_a_version_withdrawn_for_a_file_a_browser_runs_alone_is_published_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SK517 was an error: a version holding a page (an HTML viewer, an SVG with a script) was withdrawn. Now such a
    file travels in the archives only, and the next build over the same output publishes that version again."""
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    write_tree(repo / "skills/hello", {"SKILL.md": skill_md("hello", "1.1.0"), "assets/viewer.html": VIEWER,
                                       "assets/logo.svg": SVG_SCRIPT})
    viewer = commit(repo, "a viewer", "2026-01-02T00:00:00Z")
    shutil.rmtree(repo / "skills/hello/assets")
    (repo / "skills/hello/SKILL.md").write_text(skill_md("hello", "1.2.0"))
    commit(repo, "no viewer", "2026-01-03T00:00:00Z")
    out = tmp_path / "site"

    with monkeypatch.context() as older:  # the rule table of a builder from before: SK517 an error
        older.setitem(RULES, "SK517", replace(RULES["SK517"], severity=Severity.ERROR))
        run_build(repo, out, jobs=1)
    _, withdrawn, _ = versions(out, "hello")["versions"]
    assert (withdrawn["commit"], withdrawn["status"], withdrawn["rules"], withdrawn["zip"]) == (
        viewer, "withdrawn", ["SK517"], None)

    run_build(repo, out, jobs=1)  # today's rules, the same output and build record
    doc = versions(out, "hello")
    assert [(v["version"], v["status"], v["rules"]) for v in doc["versions"]] == [
        ("1.2.0", "available", []), ("1.1.0", "available", []), ("1.0.0", "available", [])]
    published = doc["versions"][1]
    assert published["commit"] == viewer and published["digest"] == digest_of(files_at(repo, viewer, "skills/hello"))
    files = zip_files(out, published)
    assert files["assets/viewer.html"][0] == VIEWER.encode() and files["assets/logo.svg"][0] == SVG_SCRIPT


def test_a_symbolic_link_in_an_old_commit_withdraws_that_version(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    (repo / "skills/hello/notes.md").symlink_to("/etc/passwd")
    commit(repo, "a link", "2026-01-02T00:00:00Z")
    (repo / "skills/hello/notes.md").unlink()
    commit(repo, "no link", "2026-01-03T00:00:00Z")
    run_build(repo, tmp_path / "site")
    # Without the link the files are those of the first version: one version, published from the first commit.
    (only,) = versions(tmp_path / "site", "hello")["versions"]
    assert only["status"] == "available"

    (repo / "skills/hello/extra.md").write_text("more\n")
    (repo / "skills/hello/notes.md").symlink_to("/etc/passwd")
    link_commit = commit(repo, "a link and a file", "2026-01-04T00:00:00Z")
    (repo / "skills/hello/notes.md").unlink()
    (repo / "skills/hello/extra.md").unlink()
    commit(repo, "back", "2026-01-05T00:00:00Z")
    run_build(repo, tmp_path / "site2")
    doc = versions(tmp_path / "site2", "hello")
    linked = next(v for v in doc["versions"] if v["commit"] == link_commit)
    assert linked["status"] == "withdrawn" and linked["rules"] == ["SK501"] and "/etc/passwd" in linked["reason"]


def history_policy(repo: Path, text: str) -> None:
    path = repo / "registry.yaml"
    path.write_text(path.read_text() + text)


def three_versions(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0", "other": "1.0.0"})
    md = repo / "skills/hello/SKILL.md"
    for i, version in enumerate(("1.1.0", "1.2.0"), start=2):
        md.write_text(skill_md("hello", version))
        commit(repo, version, f"2026-0{i}-01T00:00:00Z")
    run_build(repo, tmp_path / "plain")
    return repo, [v["digest"] for v in versions(tmp_path / "plain", "hello")["versions"]]


def test_yanked_versions_keep_their_bytes_but_are_never_latest(tmp_path: Path) -> None:
    repo, (v12, v11, v10) = three_versions(tmp_path)
    history_policy(repo, f"history:\n  yanked:\n    - {{name: hello, digest: \"{v11}\", reason: wrong greeting}}\n"
                         f"    - {{name: hello, digest: \"{v12}\", reason: breaks on Windows}}\n")
    out = tmp_path / "site"
    run_build(repo, out)
    doc = versions(out, "hello")
    assert [(v["status"], v["reason"]) for v in doc["versions"]] == [
        ("yanked", "breaks on Windows"), ("yanked", "wrong greeting"), ("available", None)]
    assert all((out / v["zip"]["path"]).is_file() for v in doc["versions"])
    assert doc["latest"] == v10  # the head is yanked: install NAME takes the newest that is not
    index = json.loads((out / "api/v1/index.json").read_text())
    assert next(s for s in index["skills"] if s["name"] == "hello")["digest"] == v12  # index.json: the head


def test_a_taken_down_version_keeps_an_entry_without_bytes(tmp_path: Path) -> None:
    repo, (v12, v11, v10) = three_versions(tmp_path)
    history_policy(repo, f"history:\n  taken_down:\n    - name: hello\n      digest: \"{v11}\"\n"
                         "      reason: leaked an API key\n")
    out = tmp_path / "site"
    run_build(repo, out)
    doc = versions(out, "hello")
    assert [(v["status"], v["reason"], v["zip"] is None) for v in doc["versions"]] == [
        ("available", None, False), ("taken-down", "leaked an API key", True), ("available", None, False)]
    assert not list((out / "api/v1/bundles/hello").glob(f"hello-{v11[7:19]}.*"))


@pytest.mark.parametrize(("keep", "kept"), [("2", 2), ("\"2026-02-01\"", 2), ("2026-03-01", 1), ("all", 3)])
def test_keep_prunes_older_versions_bytes_but_never_the_head(tmp_path: Path, keep: str, kept: int) -> None:
    repo, digests = three_versions(tmp_path)
    history_policy(repo, f"history:\n  keep: {keep}\n")
    out = tmp_path / "site"
    run_build(repo, out)
    doc = versions(out, "hello")
    assert [v["digest"] for v in doc["versions"]] == digests
    assert [v["status"] for v in doc["versions"]] == ["available"] * kept + ["pruned"] * (3 - kept)
    for v in doc["versions"][kept:]:
        assert v["zip"] is None
        assert v["reason"] == f"older than the history kept by registry.yaml (keep: {keep.strip(QUOTE)})"


@pytest.mark.parametrize(("entry", "message"), [
    ("{name: nosuch, digest: \"sha256:" + "0" * 64 + "\", reason: x}", "no skill `nosuch` in the registry or its history"),
    ("{name: hello, digest: \"sha256:" + "0" * 64 + "\", reason: x}", "`hello` never had the version sha256:000000000000"),
])
def test_registry_yaml_naming_an_unknown_skill_or_version_stops_the_build_with_its_line(
        tmp_path: Path, entry: str, message: str) -> None:
    repo, _ = three_versions(tmp_path)
    history_policy(repo, f"history:\n  yanked:\n\n    - {entry}\n")
    line = len((repo / "registry.yaml").read_text().splitlines())
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["--config", str(repo / "registry.yaml"), "build", "--out", str(out),
                                      "--no-site"])
    assert result.exit_code == 1
    assert f"registry.yaml:{line}: history.yanked: {message}" in result.output
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize(("text", "message"), [
    ("history:\n  keep: 0\n", "`history.keep` must be at least 1, got 0"),
    ("history:\n  keep: lots\n", "`history.keep` must be `all`, a number of versions or a date"),
    ("history:\n  yank: []\n", "unknown key under `history`: yank"),
    ("history:\n  yanked:\n    - {name: a, digest: \"sha256:abc\", reason: x}\n",
     ":3: history.yanked[0]: `digest` must be a full `sha256:` and 64 lower-case hex digits"),
    ("history:\n  taken_down:\n    - {name: a, digest: \"sha256:" + "a" * 64 + "\"}\n",
     ":3: history.taken_down[0]: `reason` must say why"),
])
def test_a_malformed_history_section_is_one_line_naming_registry_yaml(tmp_path: Path, text: str,
                                                                      message: str) -> None:
    write_tree(tmp_path, {"registry.yaml": text})
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "registry.yaml")
    assert str(caught.value).startswith(str(tmp_path / "registry.yaml")) and message in str(caught.value)


def test_taking_down_the_current_version_is_refused(tmp_path: Path) -> None:
    repo, (v12, _, _) = three_versions(tmp_path)
    history_policy(repo, f"history:\n  taken_down:\n    - {{name: hello, digest: \"{v12}\", reason: x}}\n")
    with pytest.raises(ConfigError, match="is what the skill `hello` holds now"):
        run_build(repo, tmp_path / "site")


# --- deleted skills, shallow clones, no git -------------------------------------------------------------------

def test_a_deleted_skill_leaves_the_index_but_keeps_its_versions_and_zips(tmp_path: Path) -> None:
    repo, digests = three_versions(tmp_path)
    out = tmp_path / "site"
    run_build(repo, out)
    shutil.rmtree(repo / "skills/hello")
    commit(repo, "retire hello", "2026-04-01T00:00:00Z")
    result = run_build(repo, out)  # a rebuild of the same output, and one from scratch
    fresh = tmp_path / "fresh"
    run_build(repo, fresh)
    assert result.retired == ("hello",) and "hello" not in result.published
    assert all_files(out) == all_files(fresh)
    doc = versions(out, "hello")
    assert doc["latest"] is None and [v["digest"] for v in doc["versions"]] == digests
    assert all((out / v["zip"]["path"]).is_file() for v in doc["versions"])
    index = json.loads((out / "api/v1/index.json").read_text())
    assert [s["name"] for s in index["skills"]] == ["other"]
    assert not (out / "api/v1/skills/hello.json").exists() and not (out / ".well-known/skills/hello").exists()


def test_a_shallow_clone_is_reported_and_marked_not_taken_for_a_short_history(tmp_path: Path) -> None:
    repo, digests = three_versions(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    done = skillreg(["build", "--out", str(tmp_path / "site"), "--no-site"], cwd=clone)
    assert done.returncode == 0, done.stderr
    assert "is a shallow clone: versions older than its first commit are missing" in done.stderr
    assert "fetch-depth: 0" in done.stderr
    doc = versions(tmp_path / "site", "hello")
    assert doc["history"] == "shallow" and [v["digest"] for v in doc["versions"]] == digests[:1]


def test_outside_git_only_the_work_tree_version_is_published(tmp_path: Path) -> None:
    write_tree(tmp_path / "reg", {"registry.yaml": "title: T\n", "skills/hello/SKILL.md": skill_md("hello", "1.0.0")})
    run_build(tmp_path / "reg", tmp_path / "site")
    doc = versions(tmp_path / "site", "hello")
    assert doc["history"] == "none"
    assert [(v["commit"], v["time"], v["status"], v["version"]) for v in doc["versions"]] == [
        (None, None, "available", "1.0.0")]
    assert doc["latest"] == doc["versions"][0]["digest"]


# --- determinism and incremental builds -------------------------------------------------------------------------

def test_two_builds_of_one_commit_are_byte_identical_history_included(tmp_path: Path) -> None:
    repo, _ = three_versions(tmp_path)
    history_policy(repo, "history:\n  keep: 2\n")
    commit(repo, "keep 2", "2026-04-01T00:00:00Z")
    run_build(repo, tmp_path / "a", bundle_cache=tmp_path / "cache-a")
    run_build(repo, tmp_path / "b", bundle_cache=tmp_path / "cache-b", jobs=2)
    assert all_files(tmp_path / "a") == all_files(tmp_path / "b")
    assert len(versions(tmp_path / "a", "hello")["versions"]) == 3


def test_a_rebuild_packs_only_the_new_digest_and_a_warm_cache_makes_a_clean_build_pack_none(tmp_path: Path) -> None:
    repo, _ = three_versions(tmp_path)
    cache = tmp_path / "cache"
    first = run_build(repo, tmp_path / "site", bundle_cache=cache)
    assert first.packed == 2  # the two old versions of hello; heads are built from the work tree as before
    md = repo / "skills/hello/SKILL.md"
    md.write_text(skill_md("hello", "1.3.0"))
    commit(repo, "1.3.0", "2026-05-01T00:00:00Z")
    again = run_build(repo, tmp_path / "site", bundle_cache=cache)
    assert again.written == ("hello",) and again.reused == ("other",)
    # 1.2.0 was the head last time (packed from the work tree): now it is old and packed from git, once.
    assert again.packed == 1
    clean = run_build(repo, tmp_path / "clean", bundle_cache=cache)  # a fresh runner with the restored cache
    assert clean.packed == 0
    assert all_files(tmp_path / "site") == all_files(tmp_path / "clean")


def test_a_damaged_cache_costs_time_never_bytes(tmp_path: Path) -> None:
    repo, _ = three_versions(tmp_path)
    cache = tmp_path / "cache"
    run_build(repo, tmp_path / "a", bundle_cache=cache)
    zips = sorted((cache / "zips").rglob("*.zip"))
    assert len(zips) == 2
    for z in zips:
        z.write_bytes(b"PK\x03\x04 not the zip this name promises")
    result = run_build(repo, tmp_path / "b", bundle_cache=cache)
    assert result.packed == 2
    assert all_files(tmp_path / "a") == all_files(tmp_path / "b")


def test_the_bundle_cache_comes_from_the_environment_when_no_option_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, _ = three_versions(tmp_path)
    monkeypatch.setenv("SKILLREG_BUNDLE_CACHE", str(tmp_path / "env-cache"))
    assert run_build(repo, tmp_path / "a").packed == 2
    assert len(list((tmp_path / "env-cache/zips").rglob("*.zip"))) == 2
    assert run_build(repo, tmp_path / "b").packed == 0
    assert all_files(tmp_path / "a") == all_files(tmp_path / "b")


# --- the website ----------------------------------------------------------------------------------------------

def test_the_skill_page_lists_the_newest_versions_marked_and_links_versions_json(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    history_policy(repo, "repository: https://example.invalid/org/reg\n")
    md = repo / "skills/hello/SKILL.md"
    commits = []
    for i in range(1, 7):
        md.write_text(skill_md("hello", f"1.{i}.0"))
        commits.append(commit(repo, f"1.{i}.0", f"2026-02-0{i}T00:00:00Z"))
    run_build(repo, tmp_path / "plain")
    digests = [v["digest"] for v in versions(tmp_path / "plain", "hello")["versions"]]
    history_policy(repo, f"history:\n  yanked:\n    - {{name: hello, digest: \"{digests[1]}\", reason: bad <b>greeting</b>}}\n")
    out = tmp_path / "site"
    build(load_config(repo / "registry.yaml"), out)
    page = (out / "skills/hello/index.html").read_text()
    section = page.split('id="versions"', 1)[1].split('id="permissions"', 1)[0]
    assert section.count('<tr class="sr-version ') == 5  # the newest five of seven
    assert "The newest 5 of 7 versions" in section and "api/v1/skills/hello/versions.json" in section
    assert 'sr-version--yanked' in section and "bad &lt;b&gt;greeting&lt;/b&gt;" in section
    assert f'href="https://example.invalid/org/reg/commit/{commits[-1]}"' in section
    assert "1.6.0" in section and "1.1.0" not in section and "current" in section
    newest = versions(out, "hello")["versions"][0]
    assert newest["zip"]["sha256"] in section and newest["digest"][:19] in section


def test_a_skill_left_out_under_keep_going_keeps_its_published_versions(tmp_path: Path) -> None:
    repo, digests = three_versions(tmp_path)
    out = tmp_path / "site"
    run_build(repo, out)
    (repo / "skills/hello/SKILL.md").write_text("---\nname: hello\n---\nno description\n")
    commit(repo, "broken", "2026-04-01T00:00:00Z")
    result = run_build(repo, out, keep_going=True)
    assert result.skipped == ("skills/hello",) and result.retired == ("hello",)
    doc = versions(out, "hello")
    broken, *published = doc["versions"]
    assert doc["latest"] is None and [v["digest"] for v in published] == digests
    assert all((out / v["zip"]["path"]).is_file() for v in published)
    # The committed broken state is listed, withdrawn by today's rules, never published.
    assert broken["status"] == "withdrawn" and broken["zip"] is None and broken["rules"]
    assert not (out / "api/v1/skills/hello.json").exists()


def test_the_kept_versions_of_a_skill_left_out_are_built_again_only_when_its_history_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, digests = three_versions(tmp_path)
    out = tmp_path / "site"
    (repo / "skills/hello/SKILL.md").write_text("---\nname: hello\n---\nno description\n")
    commit(repo, "broken", "2026-04-01T00:00:00Z")

    def with_site(target: Path) -> BuildResult:  # the website too: its pages of the skill must not change either
        return build(load_config(repo / "registry.yaml"), target, BuildOptions(keep_going=True))

    first = with_site(out)
    built: list[str] = []
    real = skill_output._build_retired

    def counted(name: str, path: str) -> Any:
        built.append(name)
        return real(name, path)

    monkeypatch.setattr(skill_output, "_build_retired", counted)
    before = all_files(out)
    again = with_site(out)  # nothing changed
    assert built == [] and again.retired == first.retired == ("hello",) and all_files(out) == before
    (repo / "skills/hello/SKILL.md").write_text("---\nname: hello\n---\nstill no description\n")
    again = with_site(out)  # the folder changed, its history did not
    assert built == [] and again.skipped == ("skills/hello",) and all_files(out) == before
    commit(repo, "broken again", "2026-04-02T00:00:00Z")
    with_site(out)
    assert built == ["hello"]
    fresh = tmp_path / "fresh"
    with_site(fresh)
    assert all_files(out) == all_files(fresh)
    assert [v["digest"] for v in versions(out, "hello")["versions"]][-3:] == digests


def test_old_files_over_todays_limits_or_with_undecodable_names_withdraw_their_version(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    history_policy(repo, "limits:\n  max_file_bytes: 4096\n")
    # Each with a second file, so the files the loader keeps are not those of the first version (which would
    # make it that version again, published from its first, clean commit).
    write_tree(repo / "skills/hello", {"references/big.md": "x" * 5000, "references/a.md": "a\n"})
    big = commit(repo, "a big file", "2026-01-02T00:00:00Z")
    (repo / "skills/hello/references/big.md").unlink()
    (repo / "skills/hello/references/a.md").write_text("b\n")
    (repo / "skills/hello").joinpath(os.fsdecode(b"notes-\xff.md")).write_text("x\n")
    odd = commit(repo, "a name that is not UTF-8", "2026-01-03T00:00:00Z")
    (repo / "skills/hello").joinpath(os.fsdecode(b"notes-\xff.md")).unlink()
    (repo / "skills/hello/SKILL.md").write_text(skill_md("hello", "1.1.0"))
    commit(repo, "clean", "2026-01-04T00:00:00Z")
    run_build(repo, tmp_path / "site")
    by_commit = {v["commit"]: v for v in versions(tmp_path / "site", "hello")["versions"]}
    assert (by_commit[big]["status"], by_commit[big]["rules"]) == ("withdrawn", ["SK507"])
    assert "`references/big.md` is 5,000 bytes; the limit is 4,096" in by_commit[big]["reason"]
    assert (by_commit[odd]["status"], by_commit[odd]["rules"]) == ("withdrawn", ["SK513"])


def test_history_below_an_underscore_or_dot_folder_is_not_a_skill(tmp_path: Path) -> None:
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    write_tree(repo / "skills/_drafts/x", {"SKILL.md": skill_md("x", "1.0.0")})
    write_tree(repo / "skills/.hidden", {"SKILL.md": skill_md("hidden", "1.0.0")})
    commit(repo, "odd folders", "2026-01-02T00:00:00Z")
    shutil.rmtree(repo / "skills/_drafts")
    shutil.rmtree(repo / "skills/.hidden")
    commit(repo, "gone", "2026-01-03T00:00:00Z")
    result = run_build(repo, tmp_path / "site")
    assert result.retired == () and result.published == ("hello",)
    assert sorted(p.name for p in (tmp_path / "site/api/v1/skills").iterdir()) == ["hello", "hello.json"]


def test_a_deleted_skill_under_any_folder_name_keeps_its_history_under_its_slug(tmp_path: Path) -> None:
    """A folder's name no longer limits what publishes (the slug comes from SKILL.md's name), so a skill in a
    folder called `Bad Name` that was deleted is a gone skill like any other; under `spec` its versions fail SK106."""
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0"})
    write_tree(repo / "skills/Bad Name", {"SKILL.md": skill_md("bad", "1.0.0")})
    commit(repo, "odd folder", "2026-01-02T00:00:00Z")
    shutil.rmtree(repo / "skills/Bad Name")
    commit(repo, "gone", "2026-01-03T00:00:00Z")
    result = run_build(repo, tmp_path / "site")
    assert result.retired == ("bad",) and result.published == ("hello",)
    assert [v["status"] for v in versions(tmp_path / "site", "bad")["versions"]] == ["withdrawn"]


def test_a_rebuild_reading_only_new_commits_equals_a_build_from_scratch(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The build keeps its walk of the history in its state folder and reads only commits made since; after every
    kind of change (new commits, a merged branch, a rewritten branch, a commit dated in the past, commits at one
    time) its output equals a fresh build's."""
    repo = new_registry(tmp_path / "repo", {"hello": "1.0.0", "other": "1.0.0"})
    out = tmp_path / "site"
    md = repo / "skills/hello/SKILL.md"
    steps = 0
    reads: list[tuple[str, ...]] = []
    chain, log = history_module._log_chain, provenance_module._log
    monkeypatch.setattr(history_module, "_log_chain", lambda top, specs, since: (
        reads.append(("chain", since or "all")), chain(top, specs, since))[1])
    monkeypatch.setattr(provenance_module, "_log", lambda top, prefix, revs: (
        reads.append(("log", *revs)), log(top, prefix, revs))[1])

    def check() -> None:
        nonlocal steps
        steps += 1
        reads.clear()
        run_build(repo, out)
        fresh = tmp_path / f"fresh-{steps}"
        run_build(repo, fresh)
        assert all_files(out) == all_files(fresh), steps

    check()
    before = git(repo, "rev-parse", "HEAD").strip()
    md.write_text(skill_md("hello", "1.1.0"))
    commit(repo, "1.1.0", "2026-02-01T00:00:00Z")
    check()
    # The rebuild read only the new commit, both for the versions and for provenance; the fresh build all.
    assert reads == [("chain", before), ("log", f"{before}..HEAD"), ("chain", "all"), ("log", "HEAD")]
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "skills/other/SKILL.md").write_text(skill_md("other", "2.0.0-rc"))
    commit(repo, "rc", "2026-02-02T00:00:00Z")
    (repo / "skills/other/SKILL.md").write_text(skill_md("other", "2.0.0"))
    commit(repo, "final", "2026-02-03T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "merge", date="2026-02-04T00:00:00Z")
    check()
    git(repo, "reset", "-q", "--hard", "HEAD~1")  # the branch is rewritten: the saved walk no longer applies
    md.write_text(skill_md("hello", "1.2.0"))
    commit(repo, "1.2.0", "2026-02-05T00:00:00Z")
    check()
    md.write_text(skill_md("hello", "1.3.0"))
    commit(repo, "dated in the past", "2025-06-01T00:00:00Z")
    check()
    for version in ("1.4.0", "1.5.0"):
        md.write_text(skill_md("hello", version))
        commit(repo, version, "2026-03-01T00:00:00Z")  # one time for both
    check()
    doc = versions(out, "hello")
    assert [v["version"] for v in doc["versions"]][:2] == ["1.5.0", "1.4.0"]
    assert "2.0.0" not in [v["version"] for v in versions(out, "other")["versions"]]  # rewritten away


def test_the_walk_kept_at_the_same_head_reads_back_as_a_fresh_one(tmp_path: Path) -> None:
    """A rebuild at the HEAD the kept walk was saved at takes its lines and moves as kept, without walking again:
    the same history as a walk from nothing and as one read on from an older HEAD."""
    from builder.publish.history import read_skills_history

    repo = new_registry(tmp_path / "repo", {"alpha": "1.0.0", "beta": "1.0.0"})
    state = tmp_path / "state" / "history.json"
    state.parent.mkdir()
    read_skills_history(repo / "skills", state=state)  # kept at the first commit
    shutil.move(repo / "skills/beta", repo / "skills/gamma")
    commit(repo, "beta moves to gamma", "2026-01-02T00:00:00Z")
    read_on = read_skills_history(repo / "skills", state=state)  # read on from the first commit, then kept
    kept = read_skills_history(repo / "skills", state=state)  # at the same HEAD: as kept
    fresh = read_skills_history(repo / "skills")
    assert kept == read_on == fresh
    assert fresh.moved and fresh.lines
