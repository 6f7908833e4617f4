"""What the client says at each step a new user takes, asserted exactly: every hint names a way that works (and the
tests take it), the lock is said to be recorded only when it was written, and a refusal changes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest
from helpers import REPO
from helpers.client import (
    NEW_VERSION,
    RegistryServer,
    build_site,
    commit,
    mcp_session,
    run,
    source_files,
    tree,
)

from builder.core.urls import detail_path, versions_path

CSV = "csv-profiler"


@pytest.fixture
def server(site: Path):
    with RegistryServer(site) as running:
        yield running


def digest_of(site: Path, name: str = CSV) -> str:
    return json.loads((site / detail_path(name)).read_text())["digest"]


def short(digest: str) -> str:
    return f"{digest[:19]}…"


# -- the lock is "Recorded" only when it was written ----------------------------------------------------------

def test_a_frozen_restore_does_not_say_it_recorded_the_lock(server: RegistryServer, site: Path,
                                                            project: Path) -> None:
    assert run("install", CSV, "--registry", server.url).stdout.endswith("Recorded in skills-lock.json\n")
    lock_before = (project / "skills-lock.json").read_bytes()
    shutil.rmtree(project / ".claude")
    for frozen in (["--frozen"], []):
        restored = run("install", *frozen, "--registry", server.url)
        assert restored.exit_code == 0, restored.output
        assert restored.stdout == f"Restored {CSV} 1.0.0 ({short(digest_of(site))}) into .claude/skills/{CSV}\n"
        assert (project / "skills-lock.json").read_bytes() == lock_before
        shutil.rmtree(project / ".claude")
    by_name = run("install", CSV, "--frozen", "--registry", server.url)
    assert by_name.stdout == f"Installed {CSV} 1.0.0 ({short(digest_of(site))}) into .claude/skills/{CSV}\n"
    assert (project / "skills-lock.json").read_bytes() == lock_before


def test_a_restore_from_another_registry_says_it_recorded_the_new_registry(server: RegistryServer, site: Path,
                                                                           project: Path) -> None:
    assert run("install", CSV, "--registry", str(site)).exit_code == 0
    shutil.rmtree(project / ".claude")
    moved = run("install", "--registry", server.url)
    assert moved.stdout == (f"Restored {CSV} 1.0.0 ({short(digest_of(site))}) into .claude/skills/{CSV}\n"
                            "Recorded in skills-lock.json\n")
    assert json.loads((project / "skills-lock.json").read_text())["skills"][CSV]["registry"] == server.url


# -- a locked version the registry cannot give back ------------------------------------------------------------

def test_restoring_a_version_built_from_uncommitted_files_names_a_next_step_that_works(
        tmp_path: Path, project: Path) -> None:
    registry = tmp_path / "registry"
    registry.mkdir()
    shutil.copy2(REPO / "registry.yaml", registry / "registry.yaml")
    shutil.copytree(REPO / "skills" / CSV, registry / "skills" / CSV)
    commit(registry, "skills")
    skill_md = registry / "skills" / CSV / "SKILL.md"
    committed = skill_md.read_bytes()
    skill_md.write_bytes(committed + b"\nA note not committed yet.\n")
    site = build_site(registry, tmp_path / "site")
    trying = digest_of(site)
    assert run("install", CSV, "--registry", str(site)).exit_code == 0
    skill_md.write_bytes(committed)  # the edit is dropped, and the registry built again
    build_site(registry, site)
    published = digest_of(site)
    assert published != trying
    shutil.rmtree(project / ".claude")
    result = run("install", "--registry", str(site))
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: cannot restore {CSV}: the registry has no record of the locked version {short(trying)} "
        f"({site.as_uri()}/{versions_path(CSV)}); it is not in the git history the registry was built from (a "
        f"version built from files never committed is not kept); `skillreg install {CSV}` takes the version it "
        f"publishes now, 1.0.0 ({short(published)}); nothing was changed\n")
    assert not (project / ".claude").exists()
    taken = run("install", CSV, "--registry", str(site))  # the next step it names
    assert taken.exit_code == 0, taken.output
    assert taken.stdout.startswith(f"Updated {CSV} 1.0.0 ({short(trying)}) -> 1.0.0 ({short(published)}) in ")
    assert tree(project / ".claude/skills" / CSV) == source_files(site, CSV)


# -- update --dry-run shows where it starts ---------------------------------------------------------------------

def test_update_dry_run_shows_the_old_and_the_new_version(server: RegistryServer, site: Path, site_v2: Path,
                                                          project: Path) -> None:
    assert run("install", CSV, "--registry", server.url).exit_code == 0
    server.state.root = site_v2
    dry = run("update", "--dry-run", "--registry", server.url)
    assert dry.stdout.splitlines()[0] == (f"Would update {CSV} 1.0.0 ({short(digest_of(site))}) -> {NEW_VERSION} "
                                          f"({short(digest_of(site_v2))}) in .claude/skills/{CSV}")
    assert "Recorded" not in dry.stdout


# -- verify lines up its columns ---------------------------------------------------------------------------------

def test_verify_aligns_status_name_and_folder_for_any_name_length(server: RegistryServer, project: Path) -> None:
    assert run("install", "adr-writer", "log-summarizer", "changelog-from-git", "--registry", server.url,
               "--agent", "claude").exit_code == 0
    (project / ".claude/skills/log-summarizer/SKILL.md").write_text("mine\n")
    shutil.rmtree(project / ".claude/skills/adr-writer")
    result = run("verify")
    assert result.exit_code == 1
    assert result.stdout == (
        "missing   adr-writer          .claude/skills/adr-writer\n"
        "ok        changelog-from-git  .claude/skills/changelog-from-git\n"
        "modified  log-summarizer      .claude/skills/log-summarizer\n"
        "    changed: SKILL.md\n"
        "2 of 3 installed folder(s) differ from skills-lock.json\n"
        "`skillreg install --force` restores the locked files, discarding the local changes above\n")


# -- remove takes many names, and checks them all first ---------------------------------------------------------

def test_remove_takes_several_names_and_removes_none_when_one_cannot_go(server: RegistryServer,
                                                                        project: Path) -> None:
    names = ["adr-writer", "csv-profiler", "log-summarizer"]
    assert run("install", *names, "--registry", server.url).exit_code == 0
    skills = project / ".claude/skills"
    lock_before = (project / "skills-lock.json").read_bytes()
    unknown = run("remove", "adr-writer", "csv-profilr")
    assert (unknown.exit_code, unknown.stderr) == (
        2, "Error: not installed (not in skills-lock.json): csv-profilr; did you mean csv-profiler?\n")
    (skills / "log-summarizer/notes.txt").write_text("mine\n")
    edited = run("remove", "adr-writer", "log-summarizer")
    assert (edited.exit_code, edited.stderr) == (
        1, "Error: log-summarizer was changed locally (.claude/skills/log-summarizer: added: notes.txt); removing it "
           "would lose those changes. Use --force to do it anyway\n")
    assert sorted(p.name for p in skills.iterdir()) == names
    assert (project / "skills-lock.json").read_bytes() == lock_before
    removed = run("remove", "adr-writer", "csv-profiler")
    assert removed.exit_code == 0, removed.output
    assert removed.stdout == ("Removed adr-writer from .claude/skills/adr-writer\n"
                              "Removed csv-profiler from .claude/skills/csv-profiler\n")
    assert [p.name for p in skills.iterdir()] == ["log-summarizer"]
    assert list(json.loads((project / "skills-lock.json").read_text())["skills"]) == ["log-summarizer"]
    assert run("remove", "log-summarizer", "--force").exit_code == 0
    assert not (skills / "log-summarizer").exists()


# -- where a skill may go: every hint leads somewhere that works -------------------------------------------------

def test_a_dir_outside_the_project_says_what_is_allowed(server: RegistryServer, project: Path,
                                                        isolated_user_dirs: Path) -> None:
    elsewhere = project.parent / "elsewhere"
    local = run("install", CSV, "--dir", "../elsewhere", "--registry", server.url)
    assert (local.exit_code, local.stderr) == (
        2, f"Error: {elsewhere} is outside the project {project}; a project installs into an agent's folder or a "
           "--dir inside the project\n")
    home = run("install", CSV, "--global", "--dir", "../elsewhere", "--registry", server.url)
    assert (home.exit_code, home.stderr) == (
        2, f"Error: {elsewhere} is outside your home folder {isolated_user_dirs}; --global installs into folders "
           "inside it (an agent's folder, or --dir with one inside your home folder)\n")
    assert not elsewhere.exists() and server.state.log == []


def test_a_dir_in_the_home_folder_outside_the_project_is_pointed_to_global(
        server: RegistryServer, isolated_user_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = isolated_user_dirs / "work" / "project"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    vendor = isolated_user_dirs / "work" / "vendor"
    refused = run("install", CSV, "--dir", "../vendor", "--registry", server.url)
    assert (refused.exit_code, refused.stderr) == (
        2, f"Error: {vendor} is outside the project {project}; a project installs into an agent's folder or a --dir "
           f"inside the project; for {vendor}, add --global (it is inside your home folder)\n")
    taken = run("install", CSV, "--dir", "../vendor", "--global", "--registry", server.url)
    assert taken.exit_code == 0, taken.output
    assert (vendor / CSV / "SKILL.md").is_file()


def test_a_link_is_named_only_when_there_is_one(server: RegistryServer, project: Path, tmp_path: Path,
                                                isolated_user_dirs: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (isolated_user_dirs / ".claude").mkdir()
    (isolated_user_dirs / ".claude/skills").symlink_to(outside, target_is_directory=True)
    result = run("install", CSV, "--global", "--registry", server.url)
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {isolated_user_dirs}/.claude/skills/{CSV} leads to {outside}/{CSV}, outside your home folder "
           f"{isolated_user_dirs} (through a symbolic link); refusing to install or remove anything there\n")
    assert list(outside.iterdir()) == []


# -- --registry that is not a registry ------------------------------------------------------------------------------

def test_a_registry_folder_that_does_not_exist_says_so(project: Path) -> None:
    result = run("search", "csv", "--registry", "./no-such-folder")
    assert (result.exit_code, result.stderr) == (
        1, "Error: no-such-folder does not exist; --registry takes a registry's URL or the folder its build wrote\n")


@pytest.mark.parametrize("args", [["install", "unit-converter"], ["search", "csv"], ["info", "unit-converter"],
                                  ["update"], ["update", CSV]])
def test_a_url_with_no_registry_says_so_not_that_a_skill_is_missing(server: RegistryServer, project: Path,
                                                                     args: list[str]) -> None:
    assert run("install", CSV, "--registry", server.url).exit_code == 0  # something for update to update
    wrong = f"{server.url}nope/"
    result = run(*args, "--registry", wrong)
    assert (result.exit_code, result.stderr) == (
        1, f"Error: no skill registry at {wrong}: it has no api/v1/index.json (HTTP 404); check the registry's URL, "
           "which is where its build was published\n")


@pytest.mark.parametrize(("typed", "meant"), [("127.0.0.1:8100", "http://127.0.0.1:8100"),
                                              ("localhost:8100/skills/", "http://localhost:8100/skills/"),
                                              ("skills.example.com", "https://skills.example.com")])
def test_a_url_without_its_scheme_is_suggested_with_it(project: Path, typed: str, meant: str) -> None:
    result = run("search", "csv", "--registry", typed)
    shown = typed.rstrip("/")
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {shown} does not exist; did you mean --registry {meant}? (a URL needs its http:// or https://)\n")


def test_a_registry_checkout_is_pointed_to_its_build(site: Path, project: Path) -> None:
    checkout = project / "registry"
    checkout.mkdir()
    (checkout / "registry.yaml").write_text("title: T\nbase_url: ''\n", encoding="utf-8")
    unbuilt = run("search", "csv", "--registry", "registry")
    assert (unbuilt.exit_code, unbuilt.stderr) == (
        1, "Error: registry holds no published registry (no api/v1/index.json); it is a registry's checkout that was "
           "never built: run `skillreg build` there, then use --registry registry/site\n")
    (checkout / "site").symlink_to(site, target_is_directory=True)
    built = run("search", "csv", "--registry", "registry")
    assert (built.exit_code, built.stderr) == (
        1, "Error: registry holds no published registry (no api/v1/index.json); it is a registry's checkout, whose "
           "build is in site/: --registry registry/site\n")
    taken = run("search", "csv", "--registry", "registry/site")
    assert taken.exit_code == 0 and taken.stdout.startswith(CSV)


# -- MCP: the same refusals, with no flag an agent cannot pass -------------------------------------------------------

def _texts(results: list) -> list[str]:
    assert all(r.is_error for r in results), [r.content for r in results]
    return [r.content[0].text for r in results]


def test_mcp_refusals_name_no_command_line_flag(site_v2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = json.loads((site_v2 / versions_path(CSV)).read_text())["versions"][1]["digest"]
    edited, vendored = tmp_path / "edited", tmp_path / "vendored"
    for folder in (edited, vendored):
        folder.mkdir()
    with RegistryServer(site_v2) as server:
        monkeypatch.chdir(edited)
        assert run("install", f"{CSV}@{old[7:19]}", "--registry", server.url).exit_code == 0
        (edited / ".claude/skills" / CSV / "SKILL.md").write_text("mine\n")
        mine = edited / ".claude/skills/log-summarizer"
        mine.mkdir()
        (mine / "SKILL.md").write_text("---\nname: log-summarizer\ndescription: mine\n---\n")
        monkeypatch.chdir(vendored)
        assert run("install", f"{CSV}@{old[7:19]}", "--dir", "vendor", "--registry", server.url).exit_code == 0
        _, first = anyio.run(mcp_session, server.url, edited, [("install_skill", {"slug": CSV}),
                                                              ("install_skill", {"slug": "log-summarizer"})])
        _, second = anyio.run(mcp_session, server.url, vendored, [("install_skill", {"slug": CSV})])
    prefix = "Error executing tool install_skill: "
    assert _texts([*first, *second]) == [
        f"{prefix}{CSV} was changed locally (.claude/skills/{CSV}: changed: SKILL.md); installing would lose those "
        "changes, and this tool never does that; nothing was changed",
        f"{prefix}.claude/skills/log-summarizer already exists and is not in skills-lock.json; this tool never "
        "replaces a folder it did not install; nothing was changed",
        f"{prefix}skills-lock.json: {CSV} -> vendor/{CSV} is outside the agents' skill folders; the lock alone cannot "
        "send a skill there, and this tool writes only into the agents' skill folders; nothing was changed",
    ]
    assert (edited / ".claude/skills" / CSV / "SKILL.md").read_text() == "mine\n"
    assert not (vendored / ".claude").exists()


def test_mcp_search_takes_several_words_and_reports_the_total_as_the_cli_does(server: RegistryServer,
                                                                              project: Path) -> None:
    _, (many, few) = anyio.run(mcp_session, server.url, project, [
        ("search_skills", {"query": "review pull request"}), ("search_skills", {"query": "c", "limit": 2})])
    for result, args in ((many, ["review", "pull", "request"]), (few, ["c", "--limit", "2"])):
        assert not result.is_error, result.content
        cli = json.loads(run("search", *args, "--json", "--registry", server.url).stdout)
        data = json.loads(result.content[0].text)
        assert (data["query"], data["count"], data["total"]) == (cli["query"], cli["count"], cli["total"])
        assert [s["slug"] for s in data["skills"]] == [s["name"] for s in cli["skills"]]
    assert json.loads(few.content[0].text)["total"] > 2


def test_a_typo_finds_the_skill_in_the_cli_and_mcp_alike(server: RegistryServer, project: Path) -> None:
    queries = [("csv profilr", ["csv-profiler"]), ("dockr", ["dockerfile-lint"])]
    _, answers = anyio.run(mcp_session, server.url, project, [("search_skills", {"query": q}) for q, _ in queries])
    for (query, expected), answer in zip(queries, answers, strict=True):
        cli = json.loads(run("search", *query.split(), "--json", "--registry", server.url).stdout)
        assert [s["name"] for s in cli["skills"]] == expected and cli["total"] == len(expected), query
        data = json.loads(answer.content[0].text)
        assert [s["slug"] for s in data["skills"]] == expected and data["total"] == len(expected), query
    assert run("search", "dockr", "--registry", server.url).stdout.splitlines()[0].startswith("dockerfile-lint  ")


def test_remove_with_no_name_is_a_usage_error(project: Path) -> None:
    result = run("remove")
    assert result.exit_code == 2 and "Missing argument 'NAME...'" in result.stderr

