"""A signed registry that needs credentials: the verifier's fetches carry them, and so do the operations that read a
live registry (`check-deploy`, with its expiry warnings, and CI's `trust fetch-previous`); without them each says
in one line that the registry needs credentials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.client import RegistryServer, run, source_files, tree
from helpers.trust import SKILL, signed_builds

from builder.client.credentials import GUIDE
from builder.client.trust import TRUST_ROOT_ENV

TOKEN = "s3cr3t-signed-4be07a"
BEARER = f"Bearer {TOKEN}"


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return signed_builds(tmp_path_factory.mktemp("signed"))


def _leaks(*folders: Path) -> list[Path]:
    return [path for folder in folders for path in folder.rglob("*")
            if path.is_file() and TOKEN.encode() in path.read_bytes()]


def test_the_verifier_fetches_with_the_credentials_and_keeps_them_nowhere(
        signed: dict[str, Path], project: Path, isolated_user_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TRUST_ROOT_ENV, str(signed["registry"] / "trust/1.root.json"))
    monkeypatch.setenv("SKILLREG_TOKEN", TOKEN)
    with RegistryServer(signed["v1"]) as server:
        server.state.auth = BEARER
        installed = run("install", SKILL, "--registry", server.url)
        fetched = [path for path, _ in server.state.paths()]
        sent = set(server.state.authorizations)
    assert installed.exit_code == 0, installed.output
    assert any("/tuf/" in path for path in fetched)  # the verifier read the signed metadata, with the token
    assert sent == {BEARER}
    assert tree(project / f".claude/skills/{SKILL}") == source_files(signed["v1"], SKILL)
    assert (isolated_user_dirs / ".local/state/skillreg/trust").is_dir()
    assert not _leaks(project, isolated_user_dirs) and TOKEN not in installed.output


def test_check_deploy_sends_the_credentials_and_says_when_it_has_none(signed: dict[str, Path],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    commit = json.loads((signed["v2"] / "api/v1/index.json").read_text())["source"]["commit"]
    with RegistryServer(signed["v2"]) as server:
        server.state.auth = BEARER
        without = run("check-deploy", server.url, "--commit", commit, "--timeout", "0")
        monkeypatch.setenv("SKILLREG_TOKEN", TOKEN)
        checked = run("check-deploy", server.url, "--commit", commit, "--timeout", "0")
    assert without.exit_code == 1 and without.stderr.count("\n") == 1, without.output
    assert without.stderr == (f"Error: {server.url}api/v1/index.json: the registry needs credentials (HTTP 401 "
                              f"Unauthorized) and none are set for http://127.0.0.1:{server.port}; give them as "
                              f"{GUIDE} says\n")
    assert checked.exit_code == 0, checked.output
    assert "Warning" not in checked.output and TOKEN not in checked.output  # the live timestamp was read too


def test_fetch_previous_sends_the_credentials(signed: dict[str, Path], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def fetch(folder: Path) -> tuple[int, str]:
        cwd = Path.cwd()
        monkeypatch.chdir(signed["registry"])
        try:
            result = run("trust", "fetch-previous", server.url, str(folder))
        finally:
            monkeypatch.chdir(cwd)
        return result.exit_code, result.output

    with RegistryServer(signed["v1"]) as server:
        server.state.auth = BEARER
        refused = fetch(tmp_path / "refused")
        monkeypatch.setenv("SKILLREG_TOKEN", TOKEN)
        kept = fetch(tmp_path / "previous")
    assert refused[0] == 0 and "the registry needs credentials (HTTP 401 Unauthorized)" in refused[1], refused
    assert kept[0] == 0 and kept[1].startswith("Kept 19 signed metadata files in "), kept
    assert "Warning" not in kept[1] and not _leaks(tmp_path)


def test_a_signed_registry_without_credentials_is_one_line(signed: dict[str, Path], project: Path) -> None:
    with RegistryServer(signed["v1"]) as server:
        server.state.auth = BEARER
        result = run("install", SKILL, "--registry", server.url)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.output
    assert "the registry needs credentials (HTTP 401 Unauthorized)" in result.stderr, result.stderr
    assert not (project / ".claude").exists()
