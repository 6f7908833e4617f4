"""Installing any published version: NAME@DIGEST, NAME@VERSION, restores of old locked digests, yanked and
taken-down versions, a skill deleted from skills/, and a hostile versions.json. The choices are tested on the
parsed document; the rest in real git repositories built with ``skillreg build`` and served over HTTP."""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.client import (
    NEW_VERSION,
    REPO,
    RegistryServer,
    build_site,
    commit,
    edit_csv_profiler,
    mcp_session,
    run,
    source_files,
    tree,
)

from builder.client.mcp_server import SkillCatalog
from builder.client.registry import Registry
from builder.client.versions import choose, parse_history
from builder.core.errors import ClientError
from builder.core.urls import detail_path

WHERE = "http://127.0.0.1:1/api/v1/skills/demo/versions.json"


def digest(n: int) -> str:
    return "sha256:" + f"{n:x}" * 64


def entry(n: int, version: str | None, status: str = "available", reason: str | None = None) -> dict[str, Any]:
    has_zip = status in ("available", "yanked")
    return {"digest": digest(n), "version": version, "commit": f"{n:x}" * 40, "time": f"2026-01-0{n}T00:00:00Z",
            "status": status, "reason": reason, "rules": ["SK517"] if status == "withdrawn" else [],
            "zip": {"path": f"api/v1/bundles/demo/demo-{digest(n)[7:19]}.zip", "url": "https://x/", "sha256": "a" * 64,
                    "size": 10} if has_zip else None}


def document(*entries: dict[str, Any], latest: str | None = None) -> dict[str, Any]:
    return {"api_version": 1, "name": "demo", "latest": latest, "versions": list(entries)}


# Newest first: 2.0.0 yanked at the head, 1.1.0 twice (the newer one available), 1.0.0 taken down, 0.9.0 pruned.
HISTORY = parse_history(document(entry(6, "2.0.0", "yanked", "breaks on empty files"), entry(5, "1.1.0"),
                                 entry(4, "1.1.0"), entry(3, "1.0.0", "taken-down", "leaked an API key"),
                                 entry(2, "0.9.0", "pruned", "older than the history kept"),
                                 entry(1, "0.8.0", "withdrawn", "fails SK517: a script in an SVG"),
                                 latest=digest(5)), "demo", WHERE)


@pytest.mark.parametrize(("spec", "chosen", "warning"), [
    (None, 5, None),  # the head is yanked: NAME takes `latest`
    ("1.1.0", 5, "demo 1.1.0 was published with 2 digests; installing the newest, " + digest(5)[:19]
     + "… (also: " + digest(4)[:19] + "… (available)); name one as demo@DIGEST"),
    (digest(4), 4, None),
    (digest(4)[7:19], 4, None),  # 12 hex digits are a digest
    (digest(6), 6, "demo 2.0.0 (" + digest(6)[:19] + "…) was yanked by the registry: breaks on empty files"),
])
def test_a_request_chooses_a_version(spec: str | None, chosen: int, warning: str | None) -> None:
    version, warnings = choose(HISTORY, "demo", spec)
    assert version.digest == digest(chosen)
    assert warnings == ([warning] if warning else [])


@pytest.mark.parametrize(("spec", "message"), [
    ("2.0.0", "demo 2.0.0 (" + digest(6)[:19] + "…) was yanked by the registry: breaks on empty files; a yanked "
              "version is installed only by its exact digest: demo@" + digest(6)),
    ("1.0.0", "demo 1.0.0 (" + digest(3)[:19] + "…): the registry took this version down: leaked an API key; it "
              "cannot be installed or restored. `skillreg info demo --versions` lists the versions that can"),
    (digest(2), "demo 0.9.0 (" + digest(2)[:19] + "…): the registry no longer keeps this version's files (pruned): "
                "older than the history kept;"),
    (digest(1)[7:20], "demo 0.8.0 (" + digest(1)[:19] + "…): the registry withdrew this version (today's build "
                      "refuses it): fails SK517: a script in an SVG;"),
    ("3.0.0", "demo: the registry has no version '3.0.0' (published: 2.0.0, 1.1.0, 1.0.0, 0.9.0, 0.8.0)"),
    ("sha256:" + "e" * 64, f"demo: the registry has no version sha256:{'e' * 64} ({WHERE})"),
    ("0123456789ab", "demo: the registry has no version '0123456789ab'"),
])
def test_a_request_that_cannot_be_met_says_why(spec: str, message: str) -> None:
    with pytest.raises(ClientError) as caught:
        choose(HISTORY, "demo", spec)
    assert str(caught.value).startswith(message)


def test_a_skill_that_left_the_registry_is_installed_only_by_digest() -> None:
    history = parse_history(document(entry(2, "1.0.0"), latest=None), "demo", WHERE)
    with pytest.raises(ClientError, match=r"^demo is no longer in the registry \(it left skills/\); its old "
                                          r"versions stay installable by digest"):
        choose(history, "demo", None)
    assert choose(history, "demo", digest(2)[:20])[0].digest == digest(2)


def _with(change: Any) -> dict[str, Any]:
    doc = document(entry(2, "1.1.0"), entry(1, "1.0.0"), latest=digest(2))
    doc = copy.deepcopy(doc)
    change(doc)
    return doc


@pytest.mark.parametrize(("change", "why"), [
    (lambda d: d["versions"][1]["zip"].update(path="api/v1/bundles/demo/../../../../etc/x.zip"),
     "version 2: the zip path 'api/v1/bundles/demo/../../../../etc/x.zip' is not a plain path inside the registry"),
    (lambda d: d["versions"][1]["zip"].update(path="/etc/passwd"), "version 2: the zip path '/etc/passwd' is not a "
                                                                    "plain path"),
    (lambda d: d["versions"][1]["zip"].update(path="api/v1/bundles/other/other-0123456789ab.zip"),
     "version 2: the zip path 'api/v1/bundles/other/other-0123456789ab.zip' is not a .zip in api/v1/bundles/demo/"),
    (lambda d: d["versions"][1]["zip"].update(path="index.html"), "version 2: the zip path 'index.html' is not a .zip in "
                                                                   "api/v1/bundles/demo/"),
    (lambda d: d["versions"][0]["zip"].update(size=True), "version 1: the zip has no sha256 and size"),
    (lambda d: d["versions"][0]["zip"].update(sha256="A" * 64), "version 1: the zip has no sha256 and size"),
    (lambda d: d["versions"][1].update(digest="sha256:1234"), "version 2: `digest` is not a sha256: digest"),
    (lambda d: d["versions"][1].update(status="taken-down"), "version 2: its status is taken-down, so it must have no zip"),
    (lambda d: d["versions"][1].update(zip=None), "version 2: its status is available, so it needs a zip"),
    (lambda d: d["versions"][1].update(status="gone"), "version 2: unknown status 'gone'"),
    (lambda d: d["versions"][1].update(commit="HEAD~1"), "version 2: `commit` is not a 40-digit commit id"),
    (lambda d: d["versions"][1].update(version=["1"]), "version 2: `version` is not a string"),
    (lambda d: d["versions"].append(d["versions"][0]), "version 3: " + digest(2)[:19] + "… is listed twice"),
    (lambda d: d.update(latest=digest(9)), "`latest` " + digest(9)[:19] + "… is not a published version with "
                                                                          "files"),
    (lambda d: d.update(name="other"), "it does not describe 'demo'"),
    (lambda d: d.update(versions={}), "it lists no versions"),
])
def test_a_hostile_versions_document_is_refused_naming_its_url(change: Any, why: str) -> None:
    with pytest.raises(ClientError) as caught:
        parse_history(_with(change), "demo", WHERE)
    assert str(caught.value).startswith(f"{WHERE}: {why}")
    assert str(caught.value).endswith("; refusing it")


# -- end to end: real git repositories, real builds, a real server ------------------------------------------------

OLD_VERSION = "1.0.0"  # csv-profiler's metadata.version in the bundled registry
SKILLS = ("csv-profiler", "log-summarizer")
CSV = "csv-profiler"
VERSIONS = f"api/v1/skills/{CSV}/versions.json"


def small_registry(dest: Path) -> Path:
    """registry.yaml and two of the bundled skills, committed as a git repository of their own."""
    dest.mkdir(parents=True)
    shutil.copy2(REPO / "registry.yaml", dest / "registry.yaml")
    for name in SKILLS:
        shutil.copytree(REPO / "skills" / name, dest / "skills" / name)
    commit(dest, "skills")
    return dest


def set_history(registry: Path, **policy: Any) -> None:
    """The ``history:`` policy of registry.yaml (yanked, taken_down, keep), committed."""
    config = yaml.safe_load((registry / "registry.yaml").read_text(encoding="utf-8"))
    config["history"] = policy
    (registry / "registry.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    commit(registry, "history policy")


def digest_of(site: Path, name: str = CSV) -> str:
    return json.loads((site / detail_path(name)).read_text())["digest"]


@dataclass
class Story:
    """One registry through its history, built from scratch after each step (as the Pages workflow does)."""

    v1: Path  # csv-profiler OLD_VERSION
    v2: Path  # csv-profiler NEW_VERSION, built from a fresh checkout: v1 comes from git history
    old: str  # csv-profiler's digests
    new: str
    registry: Path

    def rebuild(self, out: Path) -> Path:
        return build_site(self.registry, out)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Story:
    base = tmp_path_factory.mktemp("versions")
    registry = small_registry(base / "registry")
    v1 = build_site(registry, base / "site-v1")
    edit_csv_profiler(registry)
    clone = base / "clone"
    subprocess.run(["git", "clone", "-q", str(registry), str(clone)], check=True)
    v2 = build_site(clone, base / "site-v2")
    return Story(v1, v2, digest_of(v1), digest_of(v2), registry)


def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, label: str) -> None:
    """A new, empty client cache: what a teammate or a CI runner starts with."""
    monkeypatch.setenv("SKILLREG_CACHE_DIR", str(tmp_path / f"cache-{label}"))


def installed_tree(project: Path, name: str = CSV) -> dict[str, tuple[bytes, int]]:
    return tree(project / ".claude/skills" / name)


def test_a_frozen_install_after_an_upstream_change_restores_the_old_files_byte_identically(
        story: Story, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install, change the skill upstream and commit, rebuild from scratch; `rm -rf .claude && install --frozen`
    restores the old files in two requests (versions.json and the zip), and a plain `install` keeps the lock."""
    with RegistryServer(story.v1) as server:
        assert run("install", *SKILLS, "--registry", server.url).exit_code == 0
        old_tree, lock_before = installed_tree(project), (project / "skills-lock.json").read_bytes()
        assert json.loads(lock_before)["skills"][CSV]["digest"] == story.old
        server.state.root = story.v2
        for round_, command in enumerate((["install", "--frozen"], ["install"])):
            shutil.rmtree(project / ".claude")
            fresh_cache(monkeypatch, tmp_path, str(round_))
            server.state.log.clear()
            result = run(*command, "--registry", server.url)
            assert result.exit_code == 0, result.output
            assert f"Restored {CSV} {OLD_VERSION} ({story.old[:19]}…) into .claude/skills/{CSV}\n" in result.stdout
            assert installed_tree(project) == old_tree
            assert (project / "skills-lock.json").read_bytes() == lock_before  # the lock did not move
            csv_requests = [(p, s) for p, s in server.state.paths() if f"/{CSV}" in p]
            assert csv_requests == [(VERSIONS, 200), (f"api/v1/bundles/{CSV}/{CSV}-{story.old[7:19]}.zip", 200)]
        # update is what moves to the newest: the dry run diffs the locked files against it first.
        dry = run("update", "--registry", server.url, "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert dry.stdout.startswith(f"Would update {CSV} {OLD_VERSION} ({story.old[:19]}…) -> {NEW_VERSION} "
                                     f"({story.new[:19]}…) in ")
        assert f'-  version: "{OLD_VERSION}"\n+  version: "{NEW_VERSION}"\n' in dry.stdout
        assert (project / "skills-lock.json").read_bytes() == lock_before
        assert run("update", "--registry", server.url).exit_code == 0
    assert installed_tree(project) == source_files(story.v2, CSV)
    assert json.loads((project / "skills-lock.json").read_text())["skills"][CSV]["digest"] == story.new


def test_update_dry_run_diffs_the_locked_version_not_local_edits(story: Story, project: Path) -> None:
    with RegistryServer(story.v2) as server:
        assert run("install", f"{CSV}@{OLD_VERSION}", "--registry", server.url).exit_code == 0
        skill_md = project / ".claude/skills" / CSV / "SKILL.md"
        skill_md.write_text(skill_md.read_text(encoding="utf-8") + "A local note.\n", encoding="utf-8")
        for state in ("edited", "removed"):
            dry = run("update", "--registry", server.url, "--dry-run")
            assert dry.exit_code == 0, (state, dry.output)
            assert f'-  version: "{OLD_VERSION}"\n+  version: "{NEW_VERSION}"\n' in dry.stdout, state
            assert "A local note." not in dry.stdout, state
            if state == "edited":
                shutil.rmtree(project / ".claude")


def test_install_an_old_version_by_version_and_by_digest(story: Story, project: Path) -> None:
    with RegistryServer(story.v2) as server:
        result = run("install", f"{CSV}@{OLD_VERSION}", "--registry", server.url)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"Installed {CSV} {OLD_VERSION} ({story.old[:19]}…) into .claude/skills/{CSV}")
        assert installed_tree(project) == source_files(story.v1, CSV)
        entry = json.loads((project / "skills-lock.json").read_text())["skills"][CSV]
        assert (entry["version"], entry["digest"]) == (OLD_VERSION, story.old)
        # By a digest prefix, into another folder; then back to the newest by name.
        by_digest = run("install", f"{CSV}@{story.old[7:19]}", "--dir", "vendor", "--registry", server.url)
        assert by_digest.exit_code == 0, by_digest.output
        assert tree(project / "vendor" / CSV) == source_files(story.v1, CSV)
        # Back to the newest by name: the folder outside the agents' folders is written only with its --dir.
        newest = run("install", CSV, "--dir", "vendor", "--registry", server.url)
        assert newest.exit_code == 0, newest.output
        assert f"Updated {CSV} {OLD_VERSION} ({story.old[:19]}…) -> {NEW_VERSION} ({story.new[:19]}…) in " \
            in newest.stdout
        assert installed_tree(project) == tree(project / "vendor" / CSV) == source_files(story.v2, CSV)
        missing = run("install", f"{CSV}@7.7.7", "--registry", server.url)
    assert missing.exit_code == 1
    assert missing.stderr == (f"Error: {CSV}: the registry has no version '7.7.7' (published: {NEW_VERSION}, "
                              f"{OLD_VERSION})\n")


def test_info_lists_the_versions_newest_first(story: Story, project: Path) -> None:
    with RegistryServer(story.v2) as server:
        text = run("info", CSV, "--versions", "--registry", server.url)
        as_json = run("info", CSV, "--versions", "--json", "--registry", server.url)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["VERSION", "DATE", "DIGEST", "STATUS", "REASON"]
    assert lines[1].split() == [NEW_VERSION, "2026-01-02", f"{story.new[:19]}…", "available", "(install", "NAME",
                                "takes", "this)"]
    assert lines[2].split() == [OLD_VERSION, "2026-01-02", f"{story.old[:19]}…", "available"]
    assert len(lines) == 3
    assert json.loads(as_json.stdout) == json.loads((story.v2 / VERSIONS).read_text())


@pytest.fixture(scope="module")
def policed(story: Story, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(yanked, taken down): the old csv-profiler yanked; then taken down instead."""
    base = tmp_path_factory.mktemp("policed")
    registry = base / "registry"
    subprocess.run(["git", "clone", "-q", str(story.registry), str(registry)], check=True)
    set_history(registry, yanked=[{"name": CSV, "digest": story.old, "reason": "wrong delimiter detection"}])
    yanked = build_site(registry, base / "site-yanked")
    set_history(registry, taken_down=[{"name": CSV, "digest": story.old, "reason": "leaked an API key"}])
    taken_down = build_site(registry, base / "site-taken-down")
    return yanked, taken_down


def test_a_yanked_version_is_never_chosen_but_restores_with_a_warning(story: Story, policed: tuple[Path, Path],
                                                                      project: Path) -> None:
    yanked, _ = policed
    warning = f"Warning: {CSV} {OLD_VERSION} ({story.old[:19]}…) was yanked by the registry: wrong delimiter detection"
    with RegistryServer(story.v1) as server:
        assert run("install", CSV, "--registry", server.url).exit_code == 0
        lock_before = (project / "skills-lock.json").read_bytes()
        server.state.root = yanked
        shutil.rmtree(project / ".claude")
        restored = run("install", "--registry", server.url, "--frozen")
        assert restored.exit_code == 0, restored.output
        assert restored.stderr == warning + "; restoring it as the lock asks\n"
        assert installed_tree(project) == source_files(story.v1, CSV)
        assert (project / "skills-lock.json").read_bytes() == lock_before
        by_version = run("install", f"{CSV}@{OLD_VERSION}", "--dir", "vendor", "--registry", server.url)
        assert by_version.exit_code == 1
        assert by_version.stderr == (f"{warning.replace('Warning', 'Error', 1)}; a yanked version is installed only "
                                     f"by its exact digest: {CSV}@{story.old}\n")
        exact = run("install", f"{CSV}@{story.old}", "--dir", "vendor", "--registry", server.url)
        assert exact.exit_code == 0, exact.output
        assert exact.stderr == warning + "\n"
        assert tree(project / "vendor" / CSV) == source_files(story.v1, CSV)
        info = run("info", CSV, "--versions", "--registry", server.url)
        assert info.stdout.splitlines()[2].split()[3:] == ["yanked", "wrong", "delimiter", "detection"]
        # The yanked version moves to the newest (vendor/ is outside the agents' folders: named with --dir).
        assert run("update", "--dir", "vendor", "--registry", server.url).exit_code == 0
    assert installed_tree(project) == tree(project / "vendor" / CSV) == source_files(story.v2, CSV)


def test_a_yanked_head_is_listed_by_the_index_but_never_chosen(story: Story, project: Path, tmp_path: Path) -> None:
    """The newest version is yanked: index.json still lists it, `install NAME` and `update` take `latest`, the
    version before; its exact digest still installs, with a warning."""
    registry = tmp_path / "registry"
    subprocess.run(["git", "clone", "-q", str(story.registry), str(registry)], check=True)
    set_history(registry, yanked=[{"name": CSV, "digest": story.new, "reason": "breaks on empty files"}])
    site = build_site(registry, tmp_path / "site")
    assert json.loads((site / "api/v1/index.json").read_text())["skills"][0]["digest"] == story.new
    assert json.loads((site / VERSIONS).read_text())["latest"] == story.old
    warning = f"Warning: {CSV} {NEW_VERSION} ({story.new[:19]}…) was yanked by the registry: breaks on empty files"
    with RegistryServer(site) as server:
        chosen = run("install", CSV, "--registry", server.url)
        assert chosen.exit_code == 0, chosen.output
        assert chosen.stdout.startswith(f"Installed {CSV} {OLD_VERSION} ({story.old[:19]}…)")
        assert run("update", "--registry", server.url).stdout == f"{CSV} is up to date ({OLD_VERSION})\n"
        assert SkillCatalog(Registry(server.url)).get(CSV)["digest"] == story.old  # MCP get_skill: the same choice
        by_version = run("install", f"{CSV}@{NEW_VERSION}", "--registry", server.url)
        assert by_version.exit_code == 1
        assert by_version.stderr == (f"{warning.replace('Warning', 'Error', 1)}; a yanked version is installed only "
                                     f"by its exact digest: {CSV}@{story.new}\n")
        exact = run("install", f"{CSV}@{story.new[7:19]}", "--registry", server.url)
        assert exact.exit_code == 0, exact.output
        assert exact.stderr == warning + "\n"
        assert installed_tree(project) == source_files(story.v2, CSV)
        lock_before = (project / "skills-lock.json").read_bytes()
        shutil.rmtree(project / ".claude")
        restored = run("install", "--registry", server.url, "--frozen")
        assert restored.stderr == warning + "; restoring it as the lock asks\n"
    assert restored.exit_code == 0, restored.output
    assert installed_tree(project) == source_files(story.v2, CSV)
    assert (project / "skills-lock.json").read_bytes() == lock_before


def test_a_taken_down_version_fails_the_restore_saying_why(story: Story, policed: tuple[Path, Path],
                                                           project: Path) -> None:
    _, taken_down = policed
    with RegistryServer(story.v1) as server:
        assert run("install", *SKILLS, "--registry", server.url).exit_code == 0
        lock_before = (project / "skills-lock.json").read_bytes()
        server.state.root = taken_down
        kept = installed_tree(project)
        # The folder still matches the lock: it stays, with a warning that the registry took the version down.
        in_place = run("install", "--registry", server.url, "--frozen")
        assert in_place.exit_code == 0, in_place.output
        assert (f"Warning: {CSV} {OLD_VERSION} ({story.old[:19]}…): the registry took this version down: leaked an "
                "API key; it cannot be installed or restored.") in in_place.stderr
        assert installed_tree(project) == kept
        shutil.rmtree(project / ".claude")
        for command in (["install", "--frozen"], ["install"]):
            failed = run(*command, "--registry", server.url)
            assert failed.exit_code == 1
            frozen = "--frozen: " if "--frozen" in command else ""
            assert failed.stderr == (f"Error: {frozen}cannot restore {CSV} {OLD_VERSION} ({story.old[:19]}…): the "
                                     "registry took this version down: leaked an API key; it cannot be installed or "
                                     f"restored. `skillreg info {CSV} --versions` lists the versions that can; "
                                     "nothing was changed\n")
            assert not (project / ".claude").exists()  # log-summarizer was not restored either
            assert (project / "skills-lock.json").read_bytes() == lock_before
        by_digest = run("install", f"{CSV}@{story.old}", "--registry", server.url)
        assert by_digest.exit_code == 1 and "the registry took this version down: leaked an API key" in by_digest.stderr


def test_a_skill_deleted_from_skills_stays_restorable_by_digest(story: Story, project: Path,
                                                                tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    subprocess.run(["git", "clone", "-q", str(story.registry), str(registry)], check=True)
    with RegistryServer(story.v1) as server:
        assert run("install", *SKILLS, "--registry", server.url).exit_code == 0
        lock_before = (project / "skills-lock.json").read_bytes()
        old_tree = installed_tree(project)
        shutil.rmtree(registry / "skills" / CSV)
        commit(registry, f"remove {CSV}")
        server.state.root = build_site(registry, tmp_path / "site-deleted")
        assert not (server.state.root / detail_path(CSV)).exists()
        shutil.rmtree(project / ".claude")
        restored = run("install", "--registry", server.url, "--frozen")
        assert restored.exit_code == 0, restored.output
        assert installed_tree(project) == old_tree
        assert (project / "skills-lock.json").read_bytes() == lock_before
        by_name = run("install", CSV, "--dir", "vendor", "--registry", server.url)
        assert by_name.exit_code == 1
        assert by_name.stderr.startswith(f"Error: {CSV} is no longer in the registry (it left skills/); its old "
                                         "versions stay installable by digest")
        by_digest = run("install", f"{CSV}@{story.new[7:19]}", "--dir", "vendor", "--registry", server.url)
        assert by_digest.exit_code == 0, by_digest.output
        assert tree(project / "vendor" / CSV) == source_files(story.v2, CSV)
        assert run("update", CSV, "--registry", server.url).stdout == \
            f"{CSV}: the registry no longer publishes it; left as installed\n"
        info = run("info", CSV, "--versions", "--registry", server.url)
    assert info.exit_code == 0, info.output
    assert info.stdout.splitlines()[-1] == f"{CSV} is no longer in the registry; install a version with {CSV}@DIGEST"


def _hostile(site: Path, change: Any) -> bytes:
    doc = json.loads((site / VERSIONS).read_text())
    change(doc)
    return json.dumps(doc).encode()


@pytest.mark.parametrize(("change", "message"), [
    # The old entry names the new bundle (its sha256 and size match those bytes): the files are not its digest.
    (lambda d: d["versions"][1].update(zip=d["versions"][0]["zip"]),
     "{name}: the bundle {path} that {url}{versions} names does not hold the files of {old}…; nothing was installed"),
    (lambda d: d["versions"][1]["zip"].update(path="api/v1/bundles/csv-profiler/../../index.json"),
     "{url}{versions}: $.versions[1].zip.path 'api/v1/bundles/csv-profiler/../../index.json' does not fit the schema "
     '(pattern "^api/v1/bundles/[a-z0-9-]+/[a-z0-9-]+-[0-9a-f]{{12}}\\\\.zip$"); refusing it'),
    (lambda d: d["versions"][1].update(digest="sha256:" + "0" * 64),
     "cannot restore {name}: the registry has no record of the locked version {old}… ({url}{versions}); it is not "
     "in the git history the registry was built from (a version built from files never committed is not kept); "
     "`skillreg install {name}` takes the version it publishes now, {new_version} ({new}…); nothing was changed"),
])
def test_a_hostile_versions_document_changes_nothing(story: Story, project: Path, change: Any, message: str) -> None:
    with RegistryServer(story.v1) as server:
        assert run("install", CSV, "--registry", server.url).exit_code == 0
        lock_before = (project / "skills-lock.json").read_bytes()
        server.state.root = story.v2
        server.state.overrides[VERSIONS] = _hostile(story.v2, change)
        shutil.rmtree(project / ".claude/skills" / CSV)
        (project / ".claude/skills" / CSV).mkdir()  # an empty folder is restored, not adopted
        result = run("install", "--registry", server.url)
    new_zip = json.loads((story.v2 / VERSIONS).read_text())["versions"][0]["zip"]["path"]
    expected = message.format(name=CSV, path=new_zip, url=server.url, versions=VERSIONS, old=story.old[:19],
                              new=story.new[:19], new_version=NEW_VERSION)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr == f"Error: {expected}\n"
    assert list((project / ".claude/skills" / CSV).iterdir()) == []
    assert (project / "skills-lock.json").read_bytes() == lock_before


def test_mcp_get_skill_and_install_skill_take_a_version(story: Story, project: Path) -> None:
    with RegistryServer(story.v2) as server:
        tools, results = asyncio.run(mcp_session(server.url, project, [
            ("get_skill", {"slug": CSV, "version": OLD_VERSION}),
            ("install_skill", {"slug": CSV, "version": story.old[7:19]}),
            ("get_skill", {"slug": CSV, "version": "sha256:" + "0" * 64}),
        ]))
    got, installed, missing = results
    assert not got.is_error and not installed.is_error, (got, installed)
    assert got.structured_content["version"] == OLD_VERSION and got.structured_content["digest"] == story.old
    old_files = source_files(story.v1, CSV)
    assert {f["filename"]: f["content"].encode() for f in got.structured_content["files"]} == \
        {path: data for path, (data, _) in old_files.items()}
    assert installed.structured_content["digest"] == story.old and installed.structured_content["status"] == "installed"
    assert installed_tree(project) == old_files
    assert missing.is_error and f"{CSV}: the registry has no version sha256:{'0' * 64}" in missing.content[0].text


def test_a_digest_missing_from_a_shallow_history_says_so() -> None:
    doc = document(entry(2, "1.1.0"), latest=digest(2))
    doc["history"] = "shallow"
    with pytest.raises(ClientError, match=r"\(the registry was built from a shallow git clone, so older versions may "
                                          r"be missing\); `skillreg info demo --versions` lists them$"):
        choose(parse_history(doc, "demo", WHERE), "demo", digest(1))


def test_a_build_from_a_shallow_clone_cannot_restore_what_it_did_not_see_and_says_why(
        story: Story, project: Path, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", story.registry.as_uri(), str(shallow)], check=True)
    site = build_site(shallow, tmp_path / "site")
    assert json.loads((site / VERSIONS).read_text())["history"] == "shallow"
    with RegistryServer(story.v1) as server:
        assert run("install", CSV, "--registry", server.url).exit_code == 0
        lock_before = (project / "skills-lock.json").read_bytes()
        server.state.root = site
        in_place = run("install", "--registry", server.url, "--frozen")  # the folder matches the lock: it stays, with a warning
        assert in_place.exit_code == 0, in_place.output
        assert in_place.stderr.startswith(f"Warning: {CSV}: the registry has no record of the locked version ")
        assert in_place.stderr.endswith("; the installed copy matches the lock and was left in place\n")
        shutil.rmtree(project / ".claude")
        result = run("install", "--registry", server.url, "--frozen")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: --frozen: cannot restore {CSV}: the registry has no record of the locked version "
                             f"{story.old[:19]}… ({server.url}{VERSIONS}) (the registry was built from a shallow git "
                             f"clone, so older versions may be missing); `skillreg install {CSV}` takes the version it "
                             f"publishes now, {NEW_VERSION} ({story.new[:19]}…); nothing was changed\n")
    assert not (project / ".claude").exists() and (project / "skills-lock.json").read_bytes() == lock_before
