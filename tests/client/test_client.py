"""The client against a real HTTP server on 127.0.0.1 serving a real build of the bundled registry:
search, info, install into every agent layout, the lock, restore, update with a diff, remove, verify."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.client import NEW_VERSION, RegistryServer, run, source_files, tree

from builder.client.agents import agent_table
from builder.client.lock import user_lock_path
from builder.core.search import rank

AGENTS = sorted(agent_table().agents)


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


def detail_of(site: Path, name: str) -> dict:
    return json.loads((site / f"api/v1/skills/{name}.json").read_text())


def version(site: Path, name: str) -> str:
    return detail_of(site, name)["version"]


def test_search_ranks_exactly_as_the_site_does(server: RegistryServer, site: Path, project: Path) -> None:
    index = json.loads((site / "api/v1/search-index.json").read_text())
    for args, kwargs in [(["data"], {}), (["csv"], {}), (["check", "--limit", "2"], {"limit": 2}),
                         (["", "--category", "security"], {"category": "security"}),
                         (["json", "--tag", "json"], {"tag": "json"})]:
        result = run("search", *args, "--json", "--registry", server.url)
        assert result.exit_code == 0, result.output
        shown = json.loads(result.stdout)
        expected = rank(index, args[0], **kwargs)
        assert [s["name"] for s in shown["skills"]] == [h.name for h in expected]
        assert [s["score"] for s in shown["skills"]] == [h.score for h in expected]
        assert shown["count"] == len(expected) and shown["query"] == args[0]


def test_search_text_output_and_limits(server: RegistryServer, site: Path, project: Path) -> None:
    result = run("search", "csv-profiler", "--registry", server.url)
    assert result.exit_code == 0
    detail = detail_of(site, "csv-profiler")
    assert result.stdout.splitlines()[0] == f"csv-profiler  {detail['category']} · {', '.join(detail['tags'])}"
    assert result.stdout.splitlines()[1].startswith("  " + detail["description"][:60])
    assert run("search", "zzzz-nothing", "--registry", server.url).stdout == "No skills match 'zzzz-nothing'.\n"
    assert run("search", "csv", "--limit", "51", "--registry", server.url).exit_code == 2


def test_info_shows_files_permissions_provenance_and_digest(server: RegistryServer, site: Path,
                                                            project: Path) -> None:
    detail = json.loads((site / "api/v1/skills/csv-profiler.json").read_text())
    result = run("info", "csv-profiler", "--registry", server.url)
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith(f"csv-profiler {detail['version']}\n")
    assert f"digest:      {detail['digest']}\n" in text
    assert "scripts/profile_csv.py" in text and "executable" in text
    assert "  scripts:        scripts/profile_csv.py\n" in text
    assert "  contributors:   Test Author\n" in text
    assert f"author:      {detail['frontmatter']['metadata']['author']}\n" in text
    as_json = run("info", "csv-profiler", "--json", "--registry", server.url)
    assert json.loads(as_json.stdout) == detail


@pytest.mark.parametrize("agent", AGENTS)
def test_install_into_each_agents_project_folder(agent: str, server: RegistryServer, site: Path,
                                                 project: Path) -> None:
    result = run("install", "csv-profiler", "--agent", agent, "--registry", server.url)
    assert result.exit_code == 0, result.output
    folder = project / agent_table().get(agent).project / "csv-profiler"
    assert tree(folder) == source_files(site, "csv-profiler")
    lock = json.loads((project / "skills-lock.json").read_text())
    entry = lock["skills"]["csv-profiler"]
    assert entry["targets"] == [f"{agent_table().get(agent).project}/csv-profiler"]
    assert entry["registry"] == server.url and entry["version"] == version(site, "csv-profiler")
    assert result.stdout.startswith(f"Installed csv-profiler {entry['version']} ({entry['digest'][:19]}…) into "
                                    f"{entry['targets'][0]}\n")
    assert [name for name in os.listdir(folder.parent)] == ["csv-profiler"]  # no temporary folder left


@pytest.mark.parametrize("agent", AGENTS)
def test_install_global_goes_below_home_with_a_user_lock(agent: str, server: RegistryServer, site: Path,
                                                         project: Path) -> None:
    result = run("install", "csv-profiler", "--agent", agent, "--global", "--registry", server.url)
    assert result.exit_code == 0, result.output
    user_folder = agent_table().get(agent).user
    folder = Path(user_folder).expanduser() / "csv-profiler"
    assert folder.is_relative_to(Path(os.environ["HOME"]))
    assert tree(folder) == source_files(site, "csv-profiler")
    assert not (project / "skills-lock.json").exists()
    lock = json.loads(user_lock_path().read_text())
    assert lock["skills"]["csv-profiler"]["targets"] == [f"{user_folder}/csv-profiler"]
    listed = run("list", "--global")
    assert f"{user_folder}/csv-profiler" in listed.stdout
    assert run("verify", "--global").exit_code == 0
    assert run("remove", "csv-profiler", "--global").exit_code == 0
    assert not folder.exists()


def test_install_into_a_folder_and_at_a_digest(server: RegistryServer, site: Path, project: Path) -> None:
    digest = json.loads((site / "api/v1/skills/log-summarizer.json").read_text())["digest"]
    result = run("install", f"log-summarizer@{digest[7:19]}", "--dir", "vendor/skills", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert tree(project / "vendor/skills/log-summarizer") == source_files(site, "log-summarizer")
    wrong = run("install", "csv-profiler@0123456789ab", "--registry", server.url)
    assert wrong.exit_code == 1
    assert wrong.stderr == (f"Error: csv-profiler: the registry has no version '0123456789ab' (published: "
                            f"{version(site, 'csv-profiler')})\n")
    assert not (project / ".claude").exists()


def test_lock_is_sorted_stable_and_one_block_per_skill(server: RegistryServer, project: Path) -> None:
    run("install", "log-summarizer", "csv-profiler", "--registry", server.url)
    first = (project / "skills-lock.json").read_bytes()
    data = json.loads(first)
    # vercel's top level (`version`, then `skills` by name), each entry of ours with sorted keys
    assert list(data) == ["version", "skills", "lock_version"]
    assert first == (json.dumps({"version": 1, "skills": {k: json.loads(json.dumps(v, sort_keys=True))
                                                          for k, v in data["skills"].items()}, "lock_version": 1},
                                indent=2, ensure_ascii=False) + "\n").encode()
    assert list(data["skills"]) == ["csv-profiler", "log-summarizer"]
    assert set(data["skills"]["csv-profiler"]) == {"name", "registry", "version", "digest", "targets", "files", "source",
                                                   "sourceType", "sourceUrl", "computedHash", "wellKnownDigest"}
    # Each skill is its own block: the lines of one never interleave with another's.
    lines = first.decode().splitlines()
    assert lines[3] == '    "csv-profiler": {' and '    "log-summarizer": {' in lines
    again = run("install", "csv-profiler", "log-summarizer", "--registry", server.url)
    assert again.stdout.count("is already installed") == 2
    assert (project / "skills-lock.json").read_bytes() == first


def test_requests_per_install_and_per_unchanged_update_check(server: RegistryServer, site: Path,
                                                             project: Path) -> None:
    run("search", "csv", "--registry", server.url)  # caches the search index
    server.state.log.clear()
    assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    bundle = detail_of(site, "csv-profiler")["bundles"]["zip"]["path"]
    assert server.state.paths() == [("api/v1/skills/csv-profiler/versions.json", 200), (bundle, 200)]
    server.state.log.clear()
    assert run("install", "csv-profiler", "--agent", "codex", "--registry", server.url).exit_code == 0
    assert server.state.paths() == [("api/v1/skills/csv-profiler/versions.json", 304)]  # the zip: from the cache
    assert run("update", "--registry", server.url).exit_code == 0  # first check: state.json and the head are fetched and cached
    server.state.log.clear()
    result = run("update", "--registry", server.url)
    assert result.stdout == f"csv-profiler is up to date ({version(site, 'csv-profiler')})\n"
    assert server.state.paths() == [("api/v1/state.json", 304)]  # the head: current under that state
    assert server.state.log[0].etag_sent


def test_restore_from_the_lock_and_frozen(server: RegistryServer, site: Path, site_v2: Path, project: Path) -> None:
    run("install", "csv-profiler", "log-summarizer", "--registry", server.url)
    lock_before = (project / "skills-lock.json").read_bytes()
    for name in ("csv-profiler", "log-summarizer"):
        for path in sorted((project / ".claude/skills" / name).rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        (project / ".claude/skills" / name).rmdir()
    result = run("install", "--registry", server.url, "--frozen")
    assert result.exit_code == 0, result.output
    assert f"Restored csv-profiler {version(site, 'csv-profiler')}" in result.stdout
    assert tree(project / ".claude/skills/csv-profiler") == source_files(site, "csv-profiler")
    assert (project / "skills-lock.json").read_bytes() == lock_before
    # The registry moves on: a restore, frozen or not, keeps the locked version (from the registry's history);
    # only `update` moves the lock.
    server.state.root = site_v2
    installed = tree(project / ".claude/skills/csv-profiler")
    for command in (["install", "--frozen"], ["install"]):
        kept = run(*command, "--registry", server.url)
        assert kept.exit_code == 0, kept.output
        assert f"csv-profiler {version(site, 'csv-profiler')} is already installed" in kept.stdout
        assert tree(project / ".claude/skills/csv-profiler") == installed
        assert (project / "skills-lock.json").read_bytes() == lock_before
    moved = run("update", "--registry", server.url)
    assert moved.exit_code == 0
    assert "Updated csv-profiler" in moved.stdout
    assert tree(project / ".claude/skills/csv-profiler") == source_files(site_v2, "csv-profiler")
    assert json.loads((project / "skills-lock.json").read_text())["skills"]["csv-profiler"]["version"] == NEW_VERSION


def test_update_dry_run_prints_a_diff_then_update_applies_it(server: RegistryServer, site: Path, site_v2: Path,
                                                             project: Path) -> None:
    run("install", "csv-profiler", "json-schema-check", "--registry", server.url)
    before = tree(project / ".claude/skills/csv-profiler")
    lock_before = (project / "skills-lock.json").read_bytes()
    server.state.root = site_v2
    dry = run("update", "--registry", server.url, "--dry-run")
    assert dry.exit_code == 0
    out = dry.stdout
    old, new = (f"{detail_of(s, 'csv-profiler')['digest'][:19]}…" for s in (site, site_v2))
    assert out.startswith(f"Would update csv-profiler {version(site, 'csv-profiler')} ({old}) -> {NEW_VERSION} "
                          f"({new}) in .claude/skills/csv-profiler\n--- a/")
    assert "--- a/SKILL.md\n+++ b/SKILL.md\n" in out
    assert f'+  version: "{NEW_VERSION}"\n' in out and "\n-  version: " in out
    assert "+## Changes in 1.1.0\n" in out
    assert "--- /dev/null\n+++ b/references/tsv-notes.md\n@@ -0,0 +1,3 @@\n+# TSV notes\n" in out
    assert "+# 1.1.0: sniff the delimiter\n" in out
    assert f"json-schema-check is up to date ({version(site, 'json-schema-check')})\n" in out
    assert tree(project / ".claude/skills/csv-profiler") == before
    assert (project / "skills-lock.json").read_bytes() == lock_before
    real = run("update", "--registry", server.url, "csv-profiler")
    assert real.exit_code == 0
    assert tree(project / ".claude/skills/csv-profiler") == source_files(site_v2, "csv-profiler")
    entry = json.loads((project / "skills-lock.json").read_text())["skills"]["csv-profiler"]
    assert entry["version"] == NEW_VERSION and "references/tsv-notes.md" in entry["files"]
    assert run("update", "--registry", server.url, "--dry-run").stdout.count("is up to date") == 2


def test_local_edits_block_update_and_remove_until_forced(server: RegistryServer, site_v2: Path,
                                                          project: Path) -> None:
    run("install", "csv-profiler", "--registry", server.url)
    folder = project / ".claude/skills/csv-profiler"
    (folder / "SKILL.md").write_text("my own notes\n")
    (folder / "notes.txt").write_text("extra\n")
    edited = tree(folder)
    server.state.root = site_v2
    refused = run("update", "--registry", server.url)
    assert refused.exit_code == 1
    assert refused.stderr == ("Error: csv-profiler was changed locally (.claude/skills/csv-profiler: changed: "
                              "SKILL.md; added: notes.txt); updating would lose those changes. "
                              "Use --force to do it anyway\n")
    assert tree(folder) == edited
    assert run("remove", "csv-profiler").exit_code == 1
    assert tree(folder) == edited
    assert run("update", "--registry", server.url, "--force").exit_code == 0
    assert "notes.txt" not in tree(folder)


def test_an_existing_folder_the_lock_does_not_know_is_not_replaced(server: RegistryServer, project: Path) -> None:
    mine = project / ".claude/skills/csv-profiler"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: csv-profiler\ndescription: mine\n---\n")
    result = run("install", "csv-profiler", "--registry", server.url)
    assert result.exit_code == 1
    assert result.stderr == ("Error: .claude/skills/csv-profiler already exists and is not in skills-lock.json; "
                             "use --force to replace it\n")
    assert (mine / "SKILL.md").read_text().endswith("description: mine\n---\n")
    assert run("install", "csv-profiler", "--force", "--registry", server.url).exit_code == 0
    assert "description: mine" not in (mine / "SKILL.md").read_text()


def test_remove_deletes_every_folder_and_the_lock_entry(server: RegistryServer, project: Path) -> None:
    run("install", "csv-profiler", "--agent", "claude", "--agent", "cursor", "--registry", server.url)
    result = run("remove", "csv-profiler")
    assert result.exit_code == 0
    assert result.stdout == "Removed csv-profiler from .claude/skills/csv-profiler, .cursor/skills/csv-profiler\n"
    assert not (project / ".claude/skills/csv-profiler").exists()
    assert not (project / ".cursor/skills/csv-profiler").exists()
    assert json.loads((project / "skills-lock.json").read_text())["skills"] == {}
    missing = run("remove", "csv-profiler")
    assert missing.exit_code == 2
    assert missing.stderr.startswith("Error: not installed (not in ")


def test_verify_reports_changed_added_and_missing_files(server: RegistryServer, project: Path) -> None:
    run("install", "csv-profiler", "log-summarizer", "--registry", server.url)
    assert run("verify").stdout.endswith("All 2 installed folder(s) match skills-lock.json\n")
    folder = project / ".claude/skills/csv-profiler"
    (folder / "SKILL.md").write_bytes((folder / "SKILL.md").read_bytes() + b"\n")
    (folder / "scripts/helper.sh").write_text("echo hi\n")
    (folder / "references/data-quality-checklist.md").unlink()
    result = run("verify")
    assert result.exit_code == 1
    assert result.stdout == (
        "modified  csv-profiler    .claude/skills/csv-profiler\n"
        "    changed: SKILL.md\n"
        "    added: scripts/helper.sh\n"
        "    missing: references/data-quality-checklist.md\n"
        "ok        log-summarizer  .claude/skills/log-summarizer\n"
        "1 of 2 installed folder(s) differ from skills-lock.json\n"
        "`skillreg install --force` restores the locked files, discarding the local changes above\n")


def test_list_shows_the_lock(server: RegistryServer, site: Path, project: Path) -> None:
    assert run("list").stdout.startswith("No skills installed")
    run("install", "csv-profiler", "--registry", server.url)
    result = run("list", "--json")
    data = json.loads(result.stdout)
    assert [s["name"] for s in data["skills"]] == ["csv-profiler"]
    assert run("list").stdout.startswith(f"csv-profiler  {version(site, 'csv-profiler')}  sha256:")


def test_local_folder_file_url_and_default_registry_need_no_network(site: Path, project: Path,
                                                                    tmp_path: Path) -> None:
    assert run("install", "csv-profiler", "--registry", str(site)).exit_code == 0
    assert run("install", "log-summarizer", "--registry", site.as_uri()).exit_code == 0
    lock = json.loads((project / "skills-lock.json").read_text())
    assert lock["skills"]["csv-profiler"]["registry"] == site.as_uri() + "/"
    # Default: site/ of the local registry (found from --config here, as it would be from the current folder).
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "registry.yaml").write_text("title: T\nbase_url: ''\n", encoding="utf-8")
    missing = run("--config", str(registry / "registry.yaml"), "search", "csv")
    assert missing.exit_code == 1
    assert missing.stderr == (f"Error: the registry at {registry} has no build ({registry}/site/api/v1/index.json "
                              "is missing): run `skillreg build` first, or pass --registry URL\n")
    (registry / "site").symlink_to(site, target_is_directory=True)
    found = run("--config", str(registry / "registry.yaml"), "search", "csv")
    assert found.exit_code == 0 and found.stdout.startswith("csv-profiler")


@pytest.mark.parametrize("location, message", [
    ("http://example.com/registry/", "plain http:// is allowed only for 127.0.0.1 and localhost; use https://"),
    ("ftp://example.com/", "the registry must be an https:// URL, a file:// URL or a folder"),
])
def test_registry_locations_that_are_refused(location: str, message: str, project: Path) -> None:
    result = run("search", "csv", "--registry", location)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {location}: {message}\n"


def test_a_lock_pointing_outside_the_project_is_refused(project: Path, server: RegistryServer) -> None:
    run("install", "csv-profiler", "--registry", server.url)
    data = json.loads((project / "skills-lock.json").read_text())
    data["skills"]["csv-profiler"]["targets"] = ["../../.ssh/csv-profiler"]
    (project / "skills-lock.json").write_text(json.dumps(data))
    result = run("install", "--registry", server.url)
    assert result.exit_code == 1
    assert "target '../../.ssh/csv-profiler' must end in the skill's own folder and contain no `..`" in result.stderr


def test_a_file_where_a_folder_should_be_is_refused_before_any_request(server: RegistryServer,
                                                                       project: Path) -> None:
    (project / "vendor").write_text("a file where a folder should be\n")
    result = run("install", "csv-profiler", "--dir", "vendor/skills", "--registry", server.url)
    assert result.exit_code == 1
    assert result.stderr == ("Error: csv-profiler -> vendor/skills/csv-profiler: vendor is a file, not a folder; "
                             "refusing to replace it\n")
    assert (project / "vendor").read_text() == "a file where a folder should be\n"
    assert not (project / "skills-lock.json").exists()
    assert server.state.log == []


@pytest.mark.parametrize("args, message", [
    (["install", "csv-profiler", "--agent", "nope"],
     "Error: unknown agent 'nope'; known agents: agents, claude, codex, copilot, cursor, gemini, opencode\n"),
    (["install", "csv-profiler", "--agent", "codex", "--dir", "x"], "Error: give --agent or --dir, not both\n"),
    (["install", "--agent", "codex"],
     "Error: --agent chooses where new skills go; a restore uses the folders in the lock\n"),
    (["install"], "Error: nothing to restore: skills-lock.json lists no skills; name the skills to install\n"),
    (["install", "Bad_Name"],
     "Error: 'Bad_Name' is not a skill name (lowercase letters, digits and single hyphens)\n"),
])
def test_install_usage_errors(args: list[str], message: str, server: RegistryServer, project: Path) -> None:
    result = run(*args, "--registry", server.url)
    assert (result.exit_code, result.stderr) == (2, message)
    assert server.state.log == []  # refused before any request


def test_install_help_names_every_agent_in_the_table() -> None:
    text = " ".join(run("install", "--help").stdout.split())
    for name in AGENTS:
        assert f" {name}" in text
