"""A signed registry's operations: CI restoring the live metadata before a cold build (`skillreg trust
fetch-previous`), clients working offline from verified caches, and pinning a root other than the first.

Real signed builds served on 127.0.0.1, real keys from `skillreg trust init`, python-tuf's client as the verifier.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from client_helpers import RegistryServer, run
from test_trust import _copy, _signed_build, signed_builds

from builder.publish.trust import TUF_DIR


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
    return _signed_build(signed["registry"], tmp_path / "cold", signed["keys"])


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
    site = _copy(signed["v1"], tmp_path / "site")
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
    site = _copy(signed["v1"], tmp_path / "site")
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
