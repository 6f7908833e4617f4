"""The type checker runs over the core: full hints are part of the contract (STYLE.md)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_mypy_passes_on_builder() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "builder"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
