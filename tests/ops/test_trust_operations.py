"""A signed registry's operations: CI restoring the live metadata before a cold build (`skillreg trust
fetch-previous`), clients working offline from verified caches, and pinning a root other than the first.

Real signed builds served on 127.0.0.1, real keys from `skillreg trust init`, python-tuf's client as the verifier.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.client import RegistryServer, run, tree
from helpers.trust import SKILL, copy_tree, faketime_program, signed_build, signed_builds

from builder.signing.metadata import TUF_DIR


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return signed_builds(tmp_path_factory.mktemp("signed"))


def _in(folder: Path, *args: str) -> tuple[int, str]:
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        result = run(*args)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output


def _fetch(signed: dict[str, Path], url: str, folder: Path) -> tuple[int, str]:
    return _in(signed["registry"], "trust", "fetch-previous", url, str(folder))


def _cold_build(signed: dict[str, Path], tmp_path: Path, previous: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLREG_TRUST_PREVIOUS", str(previous))
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / "ci-state"))  # a fresh runner: no kept copy
    return signed_build(signed["registry"], tmp_path / "cold", signed["keys"])


def _metadata(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _snapshot_version(files: dict[str, bytes]) -> int:
    return int(json.loads(files["timestamp.json"])["signed"]["meta"]["snapshot.json"]["version"])


def test_fetch_previous_then_a_cold_build_keeps_unchanged_bins_and_versions_go_up(
        signed: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with RegistryServer(signed["v1"]) as server:
        code, output = _fetch(signed, server.url, tmp_path / "previous")
        fetched = [path.lstrip("/") for path, _ in server.state.paths()]
    assert code == 0, output
    assert output.startswith("Kept 19 signed metadata files in ") and "Warning" not in output
    assert all(path.startswith(f"{TUF_DIR}/") for path in fetched) and len(fetched) == 19
    assert f"{TUF_DIR}/timestamp.json" in fetched and not any("root.json" in path for path in fetched)
    live = _metadata(signed["v1"] / TUF_DIR)
    assert all(live[name] == data for name, data in _metadata(tmp_path / "previous").items())
    cold = _metadata(_cold_build(signed, tmp_path, tmp_path / "previous", monkeypatch) / TUF_DIR)
    bins = {name for name in cold if ".bins-" in name}
    assert len(bins & set(live)) == 15 and all(cold[name] == live[name] for name in bins & set(live))
    assert _snapshot_version(cold) > _snapshot_version(live)
    old_stamp, new_stamp = (json.loads(files["timestamp.json"])["signed"]["version"] for files in (live, cold))
    assert new_stamp > old_stamp


def test_fetch_previous_of_a_first_deploy_warns_and_the_build_signs_everything(
        signed: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "www"
    empty.mkdir()
    with RegistryServer(empty) as server:
        code, output = _fetch(signed, server.url, tmp_path / "previous")
    assert code == 0, output
    assert output == (f"Warning: {server.url}{TUF_DIR}/timestamp.json: not published (a first deploy, or an unsigned "
                      "site); the build signs every file afresh\n")
    assert not (tmp_path / "previous").exists()
    cold = _metadata(_cold_build(signed, tmp_path, tmp_path / "previous", monkeypatch) / TUF_DIR)
    assert "timestamp.json" in cold and len([n for n in cold if ".bins-" in n]) == 16


def test_fetch_previous_of_an_unreachable_site_warns(signed: dict[str, Path], tmp_path: Path) -> None:
    with RegistryServer(tmp_path) as server:
        url = server.url
    code, output = _fetch(signed, url, tmp_path / "previous")  # the server is gone: connection refused
    assert code == 0, output
    assert output.count("\n") == 1
    assert output.startswith(f"Warning: {url}{TUF_DIR}/: cannot read the last signed metadata (")
    assert "connection refused" in output and output.endswith("the build signs every file afresh\n")


def test_fetch_previous_keeps_nothing_of_a_forged_timestamp(signed: dict[str, Path], tmp_path: Path) -> None:
    site = copy_tree(signed["v1"], tmp_path / "site")
    stamp = json.loads((site / TUF_DIR / "timestamp.json").read_text())
    stamp["signed"]["version"] += 1  # the signature no longer covers what it says
    (site / TUF_DIR / "timestamp.json").write_text(json.dumps(stamp))
    with RegistryServer(site) as server:
        code, output = _fetch(signed, server.url, tmp_path / "previous")
    assert code == 0, output
    assert output.count("\n") == 1
    assert output.startswith(f"Warning: {server.url}{TUF_DIR}/timestamp.json: not metadata signed by this "
                             "registry's keys")
    assert "nothing of it is reused" in output
    assert not (tmp_path / "previous").exists()


def test_fetch_previous_leaves_out_a_tampered_bin_which_is_signed_again(
        signed: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = copy_tree(signed["v1"], tmp_path / "site")
    tampered = next(p for p in sorted((site / TUF_DIR).iterdir()) if ".bins-" in p.name)
    doc = json.loads(tampered.read_text())
    doc["signatures"][0]["sig"] = "00" * 64
    tampered.write_text(json.dumps(doc, indent=1))
    with RegistryServer(site) as server:
        code, output = _fetch(signed, server.url, tmp_path / "previous")
    assert code == 0, output
    assert f"1 of 19 metadata files could not be read or are not signed by this registry's keys (first: " \
           f"{tampered.name})" in output
    assert not (tmp_path / "previous" / tampered.name).exists()
    assert len(list((tmp_path / "previous").iterdir())) == 18
    cold = _metadata(_cold_build(signed, tmp_path, tmp_path / "previous", monkeypatch) / TUF_DIR)
    live = _metadata(signed["v1"] / TUF_DIR)
    kept = {n for n in cold if ".bins-" in n and cold[n] == live.get(n)}
    assert len(kept) == 14 and tampered.name not in kept


def test_fetch_previous_refuses_a_folder_that_holds_files(signed: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "previous"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me")
    code, output = _fetch(signed, "http://127.0.0.1:9/", folder)
    assert code != 0
    assert output == f"Error: {folder}: must be an empty folder or not exist yet (the fetched metadata goes there)\n"
    assert (folder / "mine.txt").read_text() == "keep me"


# --- offline ------------------------------------------------------------------------------------------------

def _use(url: str, project: Path, *args: str) -> tuple[int, str]:
    project.mkdir(exist_ok=True)
    return _in(project, *args, "--registry", url)


def _online_then_stopped(site: Path, project: Path) -> str:
    """Install SKILL, show it and search once while the registry answers; returns its URL, which then refuses connections."""
    with RegistryServer(site) as server:
        for args in (("install", SKILL), ("info", SKILL), ("search", "csv")):
            code, output = _use(server.url, project, *args)
            assert code == 0, output
        return server.url


def test_offline_a_signed_registry_works_from_verified_caches_with_one_warning(signed: dict[str, Path],
                                                                               tmp_path: Path) -> None:
    url = _online_then_stopped(signed["v2"], tmp_path / "p")
    expires = json.loads((signed["v2"] / TUF_DIR / "timestamp.json").read_text())["signed"]["expires"]
    for project, args, expected in ((tmp_path / "p", ("info", SKILL), SKILL),
                                    (tmp_path / "p", ("search", "csv"), "csv-profiler"),
                                    (tmp_path / "q", ("install", SKILL), "Installed")):
        code, output = _use(url, project, *args)
        assert code == 0, output
        assert expected in output
        offline = [line for line in output.splitlines() if "working offline with the signed metadata" in line]
        assert len(offline) == 1, output
        assert [line for line in output.splitlines() if line.startswith("Warning:")] == offline, output
        assert offline[0].startswith(f"Warning: cannot fetch {url}{TUF_DIR}/")
        assert "connection refused" in offline[0] and f"(valid until {expires})" in offline[0]
        assert "Traceback" not in output
    assert (tmp_path / "q/.claude/skills" / SKILL / "SKILL.md").read_bytes() == \
        (tmp_path / "p/.claude/skills" / SKILL / "SKILL.md").read_bytes()


def test_offline_expired_trusted_metadata_is_refused_and_nothing_changes(signed: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    import datetime as dt

    from builder.client.trust import store_folder
    from builder.core.config import load_config
    from builder.signing.metadata import refresh_timestamp

    url = _online_then_stopped(signed["v2"], tmp_path / "p")
    later = copy_tree(signed["v2"], tmp_path / "later")  # the registry's next timestamp, valid once and expired now
    refresh_timestamp(load_config(signed["registry"] / "registry.yaml"), later, signed["keys"],
                      now=dt.datetime.now(dt.UTC) - dt.timedelta(days=30))
    store = store_folder(url)
    shutil.copy(later / TUF_DIR / "timestamp.json", store / "timestamp.json")
    expires = json.loads((store / "timestamp.json").read_text())["signed"]["expires"]
    before = (tree(tmp_path / "p"), tree(store))
    for args in (("info", SKILL), ("install", SKILL, "--force")):
        code, output = _use(url, tmp_path / "p", *args)
        assert code != 0, output
        errors = [line for line in output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, output
        assert f"the signed metadata of {url} kept here expired on {expires}" in errors[0]
        assert "cannot be used offline" in errors[0] and "connection refused" in errors[0]
        assert (tree(tmp_path / "p"), tree(store)) == before


def test_offline_a_skill_never_fetched_is_refused_with_one_line(signed: dict[str, Path], tmp_path: Path) -> None:
    url = _online_then_stopped(signed["v2"], tmp_path / "p")
    before = tree(tmp_path / "p")
    code, output = _use(url, tmp_path / "p", "install", "csv-profiler")
    assert code != 0
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    assert "csv-profiler" in errors[0] and "connection refused" in errors[0], output
    assert "Traceback" not in output
    assert tree(tmp_path / "p") == before


def _metadata_bytes(store: Path) -> dict[str, bytes]:
    return {name: data for name, (data, _mode) in tree(store).items()}


def test_an_outage_halfway_through_a_refresh_leaves_the_verified_metadata_usable(signed: dict[str, Path],
                                                                                tmp_path: Path) -> None:
    """The registry moves on to its next signed build and fails after the timestamp, which python-tuf has saved
    by then: the client works offline from what it verified before, with one warning, and the trust store is as it
    was; once the registry answers again the next command verifies the new build."""
    from helpers.client import Fault

    from builder.client.trust import store_folder

    served = shutil.copytree(signed["v1"], tmp_path / "served")
    with RegistryServer(served) as server:
        code, output = _use(server.url, tmp_path / "p", "install", SKILL)
        assert code == 0, output
        store = store_folder(server.url)
        before = _metadata_bytes(store)
        shutil.rmtree(served)
        shutil.copytree(signed["v2"], served)
        newer = _snapshot_version(_metadata(served / TUF_DIR))
        assert newer > _snapshot_version({"timestamp.json": (store / "timestamp.json").read_bytes()})
        server.state.fault(f"{TUF_DIR}/{newer}.snapshot.json", *[Fault(status=503) for _ in range(10)])
        code, output = _use(server.url, tmp_path / "p", "info", SKILL)
        assert code == 0, output
        warned = [line for line in output.splitlines() if "working offline with the signed metadata" in line]
        assert len(warned) == 1 and f"{newer}.snapshot.json" in warned[0], output
        assert "Traceback" not in output
        assert _metadata_bytes(store) == before
        server.state.faults.clear()
        code, output = _use(server.url, tmp_path / "p", "info", SKILL)
        assert code == 0 and "Warning" not in output, output
        assert _snapshot_version({"timestamp.json": (store / "timestamp.json").read_bytes()}) == newer


# --- a pinned root other than the first -----------------------------------------------------------------------

def test_a_pinned_later_root_is_recorded_so_a_teammate_verifies_against_the_same_keys(
        signed: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from helpers.client import commit

    from builder.client.trust import TRUST_ROOT_ENV

    registry = copy_tree(signed["registry"], tmp_path / "registry")
    keys = copy_tree(signed["keys"], tmp_path / "keys")
    for _ in range(2):  # root v3: the first root's key is long retired
        code, output = _in(registry, "trust", "rotate", "root", "--keys", str(keys))
        assert code == 0, output
        commit(registry, "trust: rotate the root key")
    site = signed_build(registry, tmp_path / "site", keys)
    pinned = registry / "trust/3.root.json"
    assert (site / TUF_DIR / "3.root.json").read_bytes() == pinned.read_bytes()
    project = tmp_path / "p"
    with RegistryServer(site) as server:
        monkeypatch.setenv(TRUST_ROOT_ENV, str(pinned))  # what `skillreg --trust-root FILE` sets
        code, output = _use(server.url, project, "install", SKILL)
        assert code == 0, output
        assert "trusting the signing keys" not in output
        monkeypatch.delenv(TRUST_ROOT_ENV)
        entry = json.loads((project / "skills-lock.json").read_text())["skills"][SKILL]
        assert entry["trust_root"] == hashlib.sha256(pinned.read_bytes()).hexdigest()
        assert entry["trust_root_version"] == 3
        shutil.rmtree(project / ".claude")
        monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / "teammate-state"))  # a fresh clone elsewhere
        code, output = _use(server.url, project, "install")
        assert code == 0, output
        assert "trusting the signing keys" not in output
        assert (project / ".claude/skills" / SKILL / "SKILL.md").is_file()
        served = site / TUF_DIR / "3.root.json"
        served.write_bytes(served.read_bytes() + b"\n")  # another file under that name
        shutil.rmtree(project / ".claude")
        monkeypatch.setenv("SKILLREG_STATE_DIR", str(tmp_path / "another-state"))
        before = tree(project)
        code, output = _use(server.url, project, "install")
    assert code != 0
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    assert f"{TUF_DIR}/3.root.json is not the root the lock trusts" in errors[0]
    assert tree(project) == before


def test_the_lock_writes_the_root_version_only_when_it_is_not_the_first() -> None:
    from builder.client.lock_format import LockEntry

    entry = LockEntry(SKILL, "https://example.org/", "1.0.0", "sha256:" + "0" * 64, (f".claude/skills/{SKILL}",),
                      trust_root="a" * 64, trust_root_version=3)
    assert entry.to_json()["trust_root_version"] == 3
    assert "trust_root_version" not in LockEntry(SKILL, "https://example.org/", "1.0.0", "sha256:" + "0" * 64,
                                                 (f".claude/skills/{SKILL}",), trust_root="a" * 64).to_json()


# --- the clock moved --------------------------------------------------------------------------------------------

def test_with_the_clock_moved_past_expiry_the_client_refuses_the_registry(signed: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    """The real client under libfaketime: a day later it still installs; a month later (the timestamp lasts seven
    days) the same registry, served unchanged, is refused as expired, and nothing on disk changes."""
    import subprocess

    from helpers.client import SKILLREG

    faketime = faketime_program()
    project = tmp_path / "p"
    project.mkdir()
    expires = json.loads((signed["v2"] / TUF_DIR / "timestamp.json").read_text())["signed"]["expires"]
    with RegistryServer(signed["v2"]) as server:
        def skillreg(offset: str, *args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([faketime, "-f", offset, str(SKILLREG), *args, "--registry", server.url],
                                  cwd=project, capture_output=True, text=True, timeout=300)

        tomorrow = skillreg("+1d", "install", SKILL)
        assert tomorrow.returncode == 0, tomorrow.stderr
        before = tree(project)
        later = skillreg("+30d", "install", SKILL, "--force")
    assert later.returncode != 0
    errors = [line for line in later.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, later.stderr
    assert f"expired on {expires}" in errors[0] and "skillreg trust refresh" in errors[0]
    assert "Traceback" not in later.stderr
    assert tree(project) == before


# --- refreshing the timestamp ------------------------------------------------------------------------------------

def test_trust_refresh_signs_a_later_timestamp_and_nothing_else(signed: dict[str, Path], tmp_path: Path) -> None:
    site = copy_tree(signed["v2"], tmp_path / "site")
    before = _metadata(site / TUF_DIR)
    code, output = _in(signed["registry"], "trust", "refresh", "--sign", str(signed["keys"]), "--out", str(site))
    assert code == 0, output
    assert output.startswith("Refreshed ") and "expires in 7 days" in output and "Warning" not in output
    after = _metadata(site / TUF_DIR)
    assert {name for name in after if after[name] != before.get(name)} == {"timestamp.json"}
    assert json.loads(after["timestamp.json"])["signed"]["version"] > \
        json.loads(before["timestamp.json"])["signed"]["version"]


def test_signing_warns_when_a_file_only_a_new_commit_renews_expires_within_30_days(tmp_path: Path) -> None:
    """The scheduled rebuild keeps the timestamp fresh, but the snapshot, targets and bins expire a while after the
    commit they were built from: a signed build and a refresh say so while there is time to push a commit."""
    import datetime as dt
    import subprocess

    from helpers import LONG_LIVED
    from helpers.client import commit
    from helpers.trust import signing_registry

    registry, keys = signing_registry(tmp_path, "")
    committed = int(subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=registry, check=True,
                                   capture_output=True, text=True).stdout)  # the test repository's fixed dates
    days = (dt.datetime.now(dt.UTC) - dt.datetime.fromtimestamp(committed, dt.UTC)).days + 20
    config = registry / "registry.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(LONG_LIVED, f"  metadata_days: {days}\n"),
                      encoding="utf-8")
    commit(registry, "trust: metadata that expires in about 20 days")
    site = tmp_path / "site"
    for command in (("build", "--no-site", "--out", str(site), "--sign", str(keys)),
                    ("trust", "refresh", "--sign", str(keys), "--out", str(site))):
        code, output = _in(registry, *command)
        assert code == 0, output
        warnings = [line for line in output.splitlines() if line.startswith("Warning:")]
        version = _snapshot_version(_metadata(site / TUF_DIR))
        assert len(warnings) == 1, output
        assert f"{version}.snapshot.json expires " in warnings[0], warnings[0]
        assert "(in 19 days)" in warnings[0] or "(in 20 days)" in warnings[0], warnings[0]
        assert "push a commit" in warnings[0]
