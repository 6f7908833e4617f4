"""Many writers at once, and a full disk: real ``skillreg`` processes and the MCP server (through the SDK's client)
against one project and a registry served on 127.0.0.1. The lock and the folders must agree and hold every skill."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.client import RegistryServer, run, run_skillreg, tree

from builder.client.lock import side_lock_path

pytestmark = pytest.mark.slow  # real processes racing

DETAIL = "api/v1/skills/{}.json"


def lock_of(project: Path) -> dict[str, Any]:
    return json.loads((project / "skills-lock.json").read_text())["skills"]


def digest(site: Path, name: str) -> str:
    return json.loads((site / DETAIL.format(name)).read_text())["digest"]


def finish(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, (process.args, out, err)
        assert "Traceback" not in err


@pytest.mark.parametrize("round_", range(3))
def test_parallel_installs_updates_and_removes_all_land(round_: int, site: Path, site_v2: Path,
                                                        project: Path) -> None:
    from helpers.client import mcp_session

    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "adr-writer", "branch-cleanup", "changelog-from-git",
                   "--registry", server.url).exit_code == 0
        server.state.root = site_v2  # csv-profiler has a new version now
        reg = ["--registry", server.url]
        commands = [["install", "commit-message-lint", *reg], ["install", "dependency-pin-check", *reg],
                    ["install", "dockerfile-lint", *reg], ["install", "docstring-style", *reg],
                    ["update", "csv-profiler", *reg], ["remove", "adr-writer"], ["remove", "branch-cleanup"],
                    ["install", "log-summarizer", *reg], ["install", "log-summarizer", "--agent", "codex", *reg]]
        processes = [run_skillreg(command, project) for command in commands]
        try:  # an agent installs through the MCP server meanwhile
            _, (mcp_result,) = anyio.run(mcp_session, server.url, project,
                                         [("install_skill", {"slug": "flaky-test-finder"})])
        finally:
            finish(processes)
    assert not mcp_result.is_error, mcp_result.content
    lock = lock_of(project)
    assert sorted(lock) == ["changelog-from-git", "commit-message-lint", "csv-profiler", "dependency-pin-check",
                            "dockerfile-lint", "docstring-style", "flaky-test-finder", "log-summarizer"]
    assert lock["csv-profiler"]["digest"] == digest(site_v2, "csv-profiler")
    assert lock["log-summarizer"]["targets"] == [".agents/skills/log-summarizer", ".claude/skills/log-summarizer"]
    assert sorted(os.listdir(project / ".claude/skills")) == sorted(set(lock) - {"adr-writer", "branch-cleanup"})
    verified = run("verify")
    assert verified.exit_code == 0, verified.output
    assert f"All {sum(len(e['targets']) for e in lock.values())} installed folder(s) match" in verified.stdout


def test_the_side_lock_file_is_kept_out_of_the_project(site: Path, project: Path, tmp_path: Path) -> None:
    """No file of ours in the work tree (git status stays clean but for the lock); the same project reached through
    a link takes the same side file, so commands through either path still take turns."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project, check=True,
                            capture_output=True, text=True).stdout
    installed = tree(project / ".claude/skills/csv-profiler")
    assert sorted(line[3:] for line in status.splitlines()) == sorted(
        [f".claude/skills/csv-profiler/{path}" for path in installed] + ["skills-lock.json"])
    assert not [p for p in (project / ".git").rglob("*") if "skills-lock" in p.name]  # never inside .git either
    side = side_lock_path(project / "skills-lock.json")
    assert side.is_file() and side.is_relative_to(Path(os.environ["SKILLREG_STATE_DIR"]))
    link = tmp_path / "same-project"
    link.symlink_to(project, target_is_directory=True)
    assert side_lock_path(link / "skills-lock.json") == side
    from builder.client.lock import user_lock_path

    assert side_lock_path(user_lock_path()) != side


def test_parallel_global_installs_all_land(site: Path, project: Path) -> None:
    from builder.client.lock import user_lock_path

    names = ["adr-writer", "branch-cleanup", "changelog-from-git", "commit-message-lint", "csv-profiler",
             "dependency-pin-check", "dockerfile-lint", "log-summarizer"]
    with RegistryServer(site) as server:
        finish([run_skillreg(["install", name, "--global", "--registry", server.url], project) for name in names])
    assert sorted(json.loads(user_lock_path().read_text())["skills"]) == names
    assert run("verify", "--global").exit_code == 0


def test_two_processes_on_one_skill_end_consistent(site: Path, site_v2: Path, project: Path) -> None:
    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
        server.state.root = site_v2
        processes = [run_skillreg(["update", "--registry", server.url, "csv-profiler"], project),
                     run_skillreg(["install", "csv-profiler", "--registry", server.url], project),
                     run_skillreg(["remove", "csv-profiler"], project),
                     run_skillreg(["install", "csv-profiler", "--agent", "codex", "--registry", server.url], project)]
        outcomes = [p.communicate(timeout=120) + (p.returncode,) for p in processes]
    for out, err, code in outcomes:
        assert "Traceback" not in err
        assert code == 0 or "not installed" in err, (out, err)  # a remove or update that came after the remove
    lock = lock_of(project) if (project / "skills-lock.json").exists() else {}
    for entry in lock.values():
        for target in entry["targets"]:
            assert (project / target).is_dir()
    for folder in (project / ".claude/skills/csv-profiler", project / ".agents/skills/csv-profiler"):
        assert folder.exists() == (folder.relative_to(project).as_posix() in
                                   lock.get("csv-profiler", {}).get("targets", []))
    assert run("verify").exit_code == 0


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_waiting_writer_says_so_and_a_killed_holder_never_blocks(site: Path, project: Path) -> None:
    side = side_lock_path(project / "skills-lock.json")
    side.parent.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(side)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with RegistryServer(site) as server:
            install = run_skillreg(["install", "csv-profiler", "--registry", server.url], project)
            assert install.stderr is not None
            line: list[str] = []
            reader = threading.Thread(target=lambda: line.append(install.stderr.readline()), daemon=True)
            reader.start()
            reader.join(60)
            assert line == [f"Waiting for another skillreg command to finish changing "
                            f"{project / 'skills-lock.json'} ...\n"]
            assert not (project / "skills-lock.json").exists()
            holder.send_signal(signal.SIGKILL)  # dies holding the lock: the kernel lets go of it
            out, err = install.communicate(timeout=60)
        assert install.returncode == 0, (out, err)
    finally:
        holder.kill()
        holder.wait(10)
    assert sorted(lock_of(project)) == ["csv-profiler"]


def test_a_link_in_place_of_the_side_lock_file_is_refused(site: Path, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    side_lock_path(project / "skills-lock.json").parent.mkdir(parents=True)
    os.symlink(elsewhere, side_lock_path(project / "skills-lock.json"))
    with RegistryServer(site) as server:
        result = run("install", "csv-profiler", "--registry", server.url)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {side_lock_path(project / 'skills-lock.json')} is a symbolic link; the lock's "
                             "side file must be a plain file (delete the link and run the command again)\n")
    assert not elsewhere.exists() and not (project / ".claude").exists()


# -- the download cache -----------------------------------------------------------------------------------------

def cached_bundles(home: Path) -> dict[str, bytes]:
    root = Path(os.environ["SKILLREG_CACHE_DIR"]) / "registries"
    return {p.name: p.read_bytes() for p in root.rglob("*.zip")}


def test_processes_fetching_one_bundle_share_a_sound_cache(site: Path, tmp_path: Path) -> None:
    detail = json.loads((site / DETAIL.format("log-summarizer")).read_text())
    bundle = detail["bundles"]["zip"]
    projects = [tmp_path / f"p{i}" for i in range(9)]
    for folder in projects:
        folder.mkdir()
    with RegistryServer(site) as server:
        finish([run_skillreg(["install", "log-summarizer", "--registry", server.url], p) for p in projects[:8]])
        cached = cached_bundles(tmp_path)
        assert list(cached) == [Path(bundle["path"]).name]
        assert cached[Path(bundle["path"]).name] == (site / bundle["path"]).read_bytes()
        server.state.log.clear()
        finish([run_skillreg(["install", "log-summarizer", "--registry", server.url], projects[8])])
        assert bundle["path"] not in [p for p, _ in server.state.paths()]  # served from the cache
        # A damaged cache entry is never used: it is fetched again.
        cache_file = next((Path(os.environ["SKILLREG_CACHE_DIR"]) / "registries").rglob("*.zip"))
        cache_file.write_bytes(b"damaged")
        (projects[8] / "skills-lock.json").unlink()
        (projects[8] / ".claude/skills/log-summarizer/SKILL.md").unlink()
        server.state.log.clear()
        assert run_skillreg(["install", "log-summarizer", "--force", "--registry", server.url],
                            projects[8]).wait(60) == 0
        assert (bundle["path"], 200) in server.state.paths()
    assert cache_file.read_bytes() == (site / bundle["path"]).read_bytes()


def cache_size() -> int:
    root = Path(os.environ["SKILLREG_CACHE_DIR"])
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_the_cache_keeps_within_its_bound_evicting_the_least_recently_used(site: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["adr-writer", "branch-cleanup", "csv-profiler", "log-summarizer"]
    bundle = {n: Path(json.loads((site / DETAIL.format(n)).read_text())["bundles"]["zip"]["path"]).name
              for n in names}
    for i in range(5):
        (tmp_path / f"p{i}").mkdir()
    with RegistryServer(site) as server:
        for i, name in enumerate(names[:3]):
            monkeypatch.chdir(tmp_path / f"p{i}")
            assert run("install", name, "--registry", server.url).exit_code == 0
        limit = cache_size()
        monkeypatch.setenv("SKILLREG_CACHE_MAX_MB", repr(limit / (1024 * 1024)))
        monkeypatch.chdir(tmp_path / "p3")
        assert run("install", names[0], "--registry", server.url).exit_code == 0  # adr-writer: used again
        monkeypatch.chdir(tmp_path / "p4")
        assert run("install", names[3], "--registry", server.url).exit_code == 0
    assert cache_size() <= limit
    kept = cached_bundles(tmp_path)
    assert bundle["branch-cleanup"] not in kept  # the least recently used
    assert bundle["adr-writer"] in kept and bundle["log-summarizer"] in kept


def test_one_process_writing_many_entries_keeps_the_cache_within_its_bound(site: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is walked only when what this process wrote may have passed the bound; it must still hold it."""
    from builder.client.registry import Registry

    cache = Path(os.environ["SKILLREG_CACHE_DIR"])
    with RegistryServer(site) as server:
        Registry(server.url, cache_dir=cache).search().rank("review")
        limit = cache_size()
        monkeypatch.setenv("SKILLREG_CACHE_MAX_MB", repr(limit / (1024 * 1024)))
        registry = Registry(server.url, cache_dir=cache)
        search = registry.search()
        for query in ("csv", "log", "branch", "adr", "test", "docs", "git", "data"):
            search.rank(query)
    assert 0 < cache_size() <= limit


def test_a_cache_bound_that_is_not_a_number_is_a_usage_error(site: Path, project: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLREG_CACHE_MAX_MB", "lots")
    with RegistryServer(site) as server:
        result = run("search", "csv", "--registry", server.url)
    assert (result.exit_code, result.stderr) == (2, "Error: SKILLREG_CACHE_MAX_MB must be a number of mebibytes\n")


# -- a full or read-only disk -----------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MiB tmpfs mounted for the test (we run as root in CI); skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the disk, then give back ``leave`` bytes."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


# With no room at all the new lock cannot be written (it is written first); with one page left it can, and the
# skill's files cannot. Either way nothing changes.
@pytest.mark.parametrize("leave, failing", [(0, "cannot write {project}/skills-lock.json: "),
                                            (4096, "cannot install csv-profiler into {folder}: ")])
def test_a_full_disk_during_an_update_leaves_the_installed_version(leave: int, failing: str, small_disk: Path,
                                                                   site: Path, site_v2: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = small_disk / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    folder = project / ".claude/skills/csv-profiler"
    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
        before = (tree(folder), (project / "skills-lock.json").read_bytes())
        server.state.root = site_v2
        filler = fill(small_disk, leave)
        result = run("update", "--registry", server.url)
        assert result.exit_code == 1, result.output
        assert result.stderr == "Error: " + failing.format(project=project, folder=folder) + \
            "the disk is full; free some space and run the command again\n"
        assert "Traceback" not in result.output
        assert (tree(folder), (project / "skills-lock.json").read_bytes()) == before
        assert sorted(os.listdir(folder.parent)) == ["csv-profiler"]
        assert sorted(os.listdir(project)) == [".claude", "skills-lock.json"]
        installing = run("install", "log-summarizer", "--registry", server.url)
        assert installing.exit_code == 1 and "the disk is full" in installing.stderr
        assert not (project / ".claude/skills/log-summarizer").exists()
        assert sorted(lock_of(project)) == ["csv-profiler"]
        filler.unlink()
        assert run("update", "--registry", server.url).exit_code == 0
    assert run("verify").exit_code == 0


def test_a_read_only_disk_is_a_message(small_disk: Path, site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = small_disk / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
        before = tree(project)
        subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
        result = run("install", "log-summarizer", "--registry", server.url)
        removed = run("remove", "csv-profiler")
    for outcome in (result, removed):
        assert outcome.exit_code == 1, outcome.output
        assert "the file system is read-only; pick a writable location" in outcome.stderr
        assert outcome.stderr.count("\n") == 1 and "Traceback" not in outcome.output
    assert tree(project) == before
