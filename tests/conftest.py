"""Shared fixtures: no test sees the real home directory, user cache or a real registry setting. Helpers that are
not fixtures live in the ``helpers`` package beside this file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


def _point_user_dirs(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("SKILLREG_CACHE_DIR", str(home / ".cache" / "skillreg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(home / ".local" / "state" / "skillreg"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("SKILLREG_REGISTRY", "SKILLREG_CONFIG", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "SKILLREG_TOKEN",
                "SKILLREG_TOKEN_ORIGIN", "SKILLREG_CLIENT_CONFIG", "NETRC"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True, scope="session")
def isolated_session_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The same for module- and session-scoped fixtures, which are set up before any test's own fixture."""
    home = tmp_path_factory.mktemp("session-home")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _point_user_dirs(monkeypatch, home)
        yield home


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    _point_user_dirs(monkeypatch, home)
    return home


# The client tests' registries: built once per session from the bundled skills (tests/helpers/client.py).
@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers.client import sites

    return sites(tmp_path_factory)[0]


@pytest.fixture(scope="session")
def site_v2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers.client import sites

    return sites(tmp_path_factory)[1]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder, made the current folder: where installs and the lock file go."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture(scope="module")
def skills_cli() -> list[str]:
    """vercel's ``skills`` CLI of tests/foreign; skips (fails under CI) when that is not installed."""
    from helpers.foreign import SKILLS_CLI, foreign_command

    return foreign_command(SKILLS_CLI)


@pytest.fixture(scope="module")
def claude_cli() -> list[str]:
    """Claude Code of tests/foreign; skips (fails under CI) when that is not installed."""
    from helpers.foreign import claude_command

    return claude_command()


@pytest.fixture(scope="module")
def codex_cli() -> list[str]:
    """Codex CLI of tests/foreign; skips (fails under CI) when that is not installed."""
    from helpers.foreign import CODEX_CLI, foreign_command

    return foreign_command(CODEX_CLI)
