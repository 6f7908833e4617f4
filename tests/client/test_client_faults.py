"""The client when things go wrong: server errors, missing skills, cut and forged downloads, hostile archives,
a slow server, no server, and the process killed in the middle of an install. Every case ends with one clear
message, a non-zero exit, no traceback, and the previously installed version byte-identical."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import time
import zipfile
from pathlib import Path

import pytest
from click.testing import Result
from helpers.client import Fault, RegistryServer, run, run_skillreg, tree, wait_for, zeros_bomb

from builder.client.archive import UnpackLimits, UnsafeBundle, read_bundle
from builder.core.bundle import zip_bytes
from builder.core.model import SkillFile, sha256_hex, skill_digest

DETAIL = "api/v1/skills/csv-profiler.json"
VERSIONS = "api/v1/skills/csv-profiler/versions.json"  # what install and update read


@pytest.fixture
def installed(site: Path, site_v2: Path, project: Path):
    """csv-profiler installed from a live server, which then serves its next version; yields (server, snapshot)."""
    with RegistryServer(site) as server:
        assert run("install", "csv-profiler", "--registry", server.url).exit_code == 0
        server.state.root = site_v2
        folder = project / ".claude/skills/csv-profiler"
        before = (tree(folder), (project / "skills-lock.json").read_bytes())
        server.state.log.clear()
        yield server, before


def unchanged(project: Path, before: tuple) -> bool:
    folder = project / ".claude/skills/csv-profiler"
    leftovers = [p.name for p in folder.parent.iterdir() if p.name != "csv-profiler"]
    return (tree(folder), (project / "skills-lock.json").read_bytes()) == before and not leftovers


def bundle_path(site: Path) -> str:
    return json.loads((site / DETAIL).read_text())["bundles"]["zip"]["path"]


def serve_bundle(server: RegistryServer, site: Path, data: bytes, digest: str | None = None) -> None:
    """Serve ``data`` as csv-profiler's newest bundle, with a detail document and a versions.json that vouch for
    exactly these bytes."""
    detail = json.loads((site / DETAIL).read_text())
    detail["bundles"]["zip"].update(sha256=sha256_hex(data), size=len(data))
    versions = json.loads((site / VERSIONS).read_text())
    newest = versions["versions"][0]
    assert newest["digest"] == versions["latest"] == detail["digest"]
    newest["zip"].update(sha256=sha256_hex(data), size=len(data))
    if digest is not None:
        detail["digest"] = newest["digest"] = versions["latest"] = digest
    server.state.overrides[DETAIL] = json.dumps(detail).encode()
    server.state.overrides[VERSIONS] = json.dumps(versions).encode()
    server.state.overrides[detail["bundles"]["zip"]["path"]] = data


def failed(result: Result, message: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr, result.stderr


def test_server_error_then_success_is_retried(installed, project: Path, site_v2: Path) -> None:
    server, _ = installed
    server.state.fault(VERSIONS, Fault(status=500))
    result = run("update", "--registry", server.url)
    assert result.exit_code == 0, result.output
    assert server.state.paths()[2:4] == [(VERSIONS, 500), (VERSIONS, 200)]  # after state.json and head.json
    assert tree(project / ".claude/skills/csv-profiler")["SKILL.md"][0].endswith(b"automatic.\n")


def test_server_errors_that_persist(installed, project: Path) -> None:
    server, before = installed
    index = "api/v1/state.json"  # the update check's first request
    server.state.fault(index, *[Fault(status=503)] * 3)
    failed(run("update", "--registry", server.url), f"cannot fetch {server.url}{index}: HTTP 503 Service Unavailable (tried 3 times)")
    assert server.state.paths() == [(index, 503)] * 3
    assert unchanged(project, before)
    other = "api/v1/skills/log-summarizer/versions.json"
    server.state.fault(other, *[Fault(status=500)] * 3)
    failed(run("install", "log-summarizer", "--registry", server.url),
           f"cannot fetch {server.url}{other}: HTTP 500 Internal Server Error (tried 3 times)")
    assert not (project / ".claude/skills/log-summarizer").exists()


def test_missing_skill_is_a_404(installed, project: Path) -> None:
    server, before = installed
    failed(run("install", "no-such-skill", "--registry", server.url),
           f"no skill named 'no-such-skill' in {server.url}")
    server.state.fault(VERSIONS, Fault(status=404))  # a registry without csv-profiler at all
    server.state.fault(DETAIL, Fault(status=404))
    failed(run("update", "--registry", server.url), f"no skill named 'csv-profiler' in {server.url}")
    assert unchanged(project, before)


def test_redirects_stay_on_https_or_this_machine(installed, project: Path, site_v2: Path) -> None:
    server, before = installed
    index = "api/v1/state.json"
    server.state.fault(index, Fault(status=302, location=f"{server.url}mirror/{index}"))
    server.state.overrides[f"mirror/{index}"] = (site_v2 / index).read_bytes()
    server.state.fault(VERSIONS, Fault(status=301, location=f"http://example.invalid/{VERSIONS}"))
    failed(run("update", "--registry", server.url), f"{server.url}{VERSIONS} redirects to http://example.invalid/{VERSIONS}; "
                          "refusing to follow it off https://")
    assert server.state.paths()[:4] == [(index, 302), (f"mirror/{index}", 200),
                                        ("api/v1/skills/csv-profiler/head.json", 200), (VERSIONS, 301)]
    assert unchanged(project, before)


def test_truncated_bundle(installed, project: Path, site_v2: Path) -> None:
    server, before = installed
    server.state.fault(bundle_path(site_v2), *[Fault(cut_at=0.5)] * 3)
    failed(run("update", "--registry", server.url), "bytes early (tried 3 times)")
    assert unchanged(project, before)


def test_bundle_bytes_that_differ_from_the_published_sha256(installed, project: Path, site_v2: Path) -> None:
    server, before = installed
    real = (site_v2 / bundle_path(site_v2)).read_bytes()
    server.state.overrides[bundle_path(site_v2)] = real[:-1] + bytes([real[-1] ^ 1])
    failed(run("update", "--registry", server.url), "the download does not match the published sha256")
    assert "nothing was installed" in run("update", "--registry", server.url).stderr
    assert unchanged(project, before)


def test_files_that_differ_from_the_published_digest(installed, project: Path, site_v2: Path) -> None:
    server, before = installed
    files = [SkillFile(p, d) for p, d in (("SKILL.md", b"---\nname: csv-profiler\ndescription: x\n---\n"),)]
    serve_bundle(server, site_v2, zip_bytes(files))  # the sha256 is right, the digest is the real one
    failed(run("update", "--registry", server.url), f"csv-profiler: the bundle {bundle_path(site_v2)} that {server.url}{VERSIONS} names does "
                          "not hold the files of sha256:")
    assert unchanged(project, before)


def test_a_skill_md_naming_another_skill_is_not_installed(installed, project: Path, site_v2: Path) -> None:
    server, before = installed
    files = [SkillFile("SKILL.md", b"---\nname: other-skill\ndescription: x\n---\n")]
    serve_bundle(server, site_v2, zip_bytes(files), digest=skill_digest(files))
    failed(run("update", "--registry", server.url), "csv-profiler: its SKILL.md names the skill 'other-skill'; nothing was installed")
    assert unchanged(project, before)


def _zip(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info, data in entries:
            archive.writestr(info, data)
    return buffer.getvalue()


def _info(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


SKILL_MD = b"---\nname: csv-profiler\ndescription: x\n---\n"
HOSTILE = {
    "parent": ([("SKILL.md", SKILL_MD), ("../evil", b"x")], "entry path '../evil' is absolute or contains a `..`"),
    "absolute": ([("SKILL.md", SKILL_MD), ("/tmp/evil", b"x")], "entry path '/tmp/evil' is absolute"),
    "symlink": ([("SKILL.md", SKILL_MD), (_info("scripts/link", stat.S_IFLNK | 0o777), b"/etc/passwd")],
                "entry 'scripts/link' is a symbolic link"),
    "device": ([("SKILL.md", SKILL_MD), (_info("dev", stat.S_IFCHR | 0o644), b"")], "entry 'dev' is a character device"),
    "control": ([("SKILL.md", SKILL_MD), ("bad\x1bname", b"x")], "contains a control character"),
    "backslash": ([("SKILL.md", SKILL_MD), ("..\\evil", b"x")], "contains a backslash"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archives_are_refused_before_anything_is_written(case: str, installed, project: Path,
                                                                site_v2: Path) -> None:
    server, before = installed
    entries, message = HOSTILE[case]
    serve_bundle(server, site_v2, _zip(entries))
    failed(run("update", "--registry", server.url), message)
    assert unchanged(project, before)
    assert not (project.parent / "evil").exists() and not Path("/tmp/evil").exists()


def test_duplicate_entries_are_refused(installed, project: Path, site_v2: Path) -> None:
    server, before = installed
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning):
        archive.writestr("SKILL.md", SKILL_MD)
        archive.writestr("SKILL.md", SKILL_MD + b"second")
    serve_bundle(server, site_v2, buffer.getvalue())
    failed(run("update", "--registry", server.url), "entry 'SKILL.md' appears twice in the bundle")
    assert unchanged(project, before)


def test_a_gigabyte_of_zeros_is_refused(installed, project: Path, site_v2: Path) -> None:
    server, before = installed
    bomb = zeros_bomb()
    assert len(bomb) < 2_000_000
    serve_bundle(server, site_v2, bomb)
    failed(run("update", "--registry", server.url), "entry 'SKILL.md' unpacks to 1,073,741,824 bytes; the limit per file is 16,777,216")
    assert unchanged(project, before)


def test_a_bomb_whose_headers_lie_is_caught_while_reading() -> None:
    lying = zeros_bomb(64 << 20, declared=1000)  # says 1,000 bytes, holds 64 MiB
    with pytest.raises(UnsafeBundle, match="entry 'SKILL.md' (unpacks to more bytes than it declares|cannot be read)"):
        read_bundle(lying)
    with pytest.raises(UnsafeBundle, match="expands 1,0[0-9][0-9] times"):
        read_bundle(zeros_bomb(64 << 20), UnpackLimits(max_file_bytes=1 << 30, max_total_bytes=1 << 30))


def test_a_slow_server_times_out(installed, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server, before = installed
    monkeypatch.setenv("SKILLREG_TIMEOUT", "0.3")
    server.state.fault("api/v1/state.json", *[Fault(delay=1.0)] * 3)
    started = time.monotonic()
    failed(run("update", "--registry", server.url), f"cannot fetch {server.url}api/v1/state.json: no answer within 0.3 s (tried 3 times)")
    assert time.monotonic() - started < 5
    assert unchanged(project, before)


def test_a_cached_index_is_used_offline_with_a_warning(site: Path, project: Path) -> None:
    with RegistryServer(site) as server:
        url = server.url
        assert run("search", "csv", "--registry", url).exit_code == 0
    result = run("search", "csv", "--registry", url)  # the server is gone now
    assert result.exit_code == 0
    assert result.stdout.startswith("csv-profiler")
    # Only the search index's manifest is revalidated; its other files are named by their digest.
    assert result.stderr.startswith(f"Warning: cannot fetch {url}api/v1/search/index.json: connection refused "
                                    "(tried 3 times); working offline with the copy of api/v1/search/index.json "
                                    "cached ")
    nothing = run("info", "csv-profiler", "--registry", url)  # never cached: a clear error
    failed(nothing, f"cannot fetch {url}{DETAIL}: connection refused (tried 3 times)")


def test_an_unsigned_registry_last_seen_long_ago_is_still_used_offline(site: Path, project: Path) -> None:
    """Past the hour in which the client takes an unsigned registry's answer as still true, it asks again whether
    the registry signs; offline it cannot, and it goes on as the registry was last seen (unsigned), with the one
    warning of an unsigned registry's cached copy."""
    import os
    import time

    from builder.client.trust import UNSIGNED_NAME, store_folder

    with RegistryServer(site) as server:
        url = server.url
        assert run("search", "csv", "--registry", url).exit_code == 0
    marker = store_folder(url) / UNSIGNED_NAME
    long_ago = time.time() - 7200
    os.utime(marker, (long_ago, long_ago))
    result = run("search", "csv", "--registry", url)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("csv-profiler")
    assert [line for line in result.stderr.splitlines() if line.startswith("Warning:")] == [
        line for line in result.stderr.splitlines() if "working offline with the copy of" in line], result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


@pytest.mark.parametrize("point", ["versions", "bundle-half", "bundle-done", "bundle-done+5ms", "bundle-done+30ms"])
def test_killed_in_the_middle_of_an_install(point: str, installed, project: Path, site: Path,
                                            site_v2: Path) -> None:
    """``skillreg update`` in a real process, killed with SIGKILL at one point: the folder holds the old version
    or the complete new one, never a mix; the next run cleans up and finishes."""
    server, before = installed
    bundle = bundle_path(site_v2)
    if point == "versions":
        server.state.fault(VERSIONS, Fault(stall_at=0.3))
    elif point == "bundle-half":
        server.state.fault(bundle, Fault(stall_at=0.5))
    else:
        server.state.finished[bundle] = done = __import__("threading").Event()
    process = run_skillreg(["update", "--registry", server.url, "csv-profiler"], project)
    try:
        if point in ("versions", "bundle-half"):
            wait_for(server.state.stalled.is_set)
        else:
            wait_for(done.is_set)
            time.sleep(float(point.partition("+")[2].removesuffix("ms") or 0) / 1000)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(10)
        server.state.release.set()
    folder = project / ".claude/skills/csv-profiler"
    new = {p: (d, m) for p, (d, m) in tree(folder).items()}
    v2 = json.loads((site_v2 / DETAIL).read_text())
    new_files = {f["path"]: ((site_v2 / f["raw"]).read_bytes(), 0o755 if f["executable"] else 0o644)
                 for f in v2["files"]}
    if point in ("versions", "bundle-half"):
        assert tree(folder) == before[0] and (project / "skills-lock.json").read_bytes() == before[1]
    else:
        assert new in (before[0], new_files)
    # The next run removes what the killed one left and completes the update.
    server.state.faults.clear()
    finished = run("update", "--registry", server.url)
    assert finished.exit_code == 0, finished.output
    assert tree(folder) == new_files
    assert sorted(os.listdir(folder.parent)) == ["csv-profiler"]
    assert not [n for n in os.listdir(project) if n.endswith(".tmp")]  # a new lock the kill left is gone too
    assert run("verify").exit_code == 0
