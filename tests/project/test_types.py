"""The type checker runs over the package in strict mode: full hints are part of the contract (STYLE.md)."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from helpers import REPO


def test_mypy_is_configured_strict() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True and config["files"] == ["builder"]


def test_mypy_passes_on_builder() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "builder"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
