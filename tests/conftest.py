"""Shared test set-up: no test sees the real home directory, user cache or a real registry setting."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parent.parent
# Signed metadata expires a set number of days after the commit it was built from, and the tests' commits carry
# fixed dates (2026-01-02 in client_helpers' GIT_ENV): registries signed in tests give it a century, so the tests
# do not start failing a year after those dates. Lines of registry.yaml's `trust:` section.
LONG_LIVED = "  metadata_days: 36500\n"


def _point_user_dirs(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("SKILLREG_CACHE_DIR", str(home / ".cache" / "skillreg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(home / ".local" / "state" / "skillreg"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("SKILLREG_REGISTRY", "SKILLREG_CONFIG", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
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


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``{relative path: text or bytes}`` below ``root`` and return ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


# The client tests' registries: built once per session from the bundled skills (tests/client_helpers.py).
@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from client_helpers import sites

    return sites(tmp_path_factory)[0]



def missing(in_ci: str, elsewhere: str) -> NoReturn:
    """Something a test needs is not installed: under CI, which installs it (.ci/run), the test fails with
    ``in_ci``; elsewhere it skips with ``elsewhere``."""
    if os.environ.get("CI") == "true":
        pytest.fail(in_ci)
    pytest.skip(elsewhere)


def grows_linearly(work: Callable[[int], object], size: int) -> tuple[bool, str]:
    """Whether ``work(n)`` grows with ``n`` as linear work does rather than as quadratic work, measured in CPU time
    of this process at an eighth of ``size`` and at ``size``: linear work costs 8 times as much, quadratic work 64
    times. The bound, 8 ** 1.5 (22.6), is the geometric midpoint of the two, so neither a busy machine nor a
    working set that outgrows a cache shared with another process (on a 2-core machine that alone took one
    linear render from 4.7 to 8.2 times the cost at a quarter of the size) fails a linear read, and a quadratic
    one still fails. CPU time rather than wall time, the quickest of five runs of each size, taken in turn so
    that a slow spell weighs on both sizes, and a collected heap before each, for the same reason. Below 0.08 s
    at ``size`` the work passes whatever its growth: timings that small are mostly noise. Returns the verdict and
    the two times, for the failure message."""
    small = size // 8
    best = {small: float("inf"), size: float("inf")}
    for _ in range(5):
        for n in best:
            gc.collect()
            started = time.process_time()
            work(n)
            best[n] = min(best[n], time.process_time() - started)
    part, full = best[small], best[size]
    return full < max(8 ** 1.5 * part, 0.08), f"{part:.3f} s at {small:,}, {full:.3f} s at {size:,}"


@pytest.fixture(scope="session")
def site_v2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from client_helpers import sites

    return sites(tmp_path_factory)[1]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder, made the current folder: where installs and the lock file go."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder
