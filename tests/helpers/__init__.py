"""What the tests share beyond fixtures (those stay in tests/conftest.py): where the repository is, a file tree
written from a dict, and what a test does when something it needs is not installed. The modules beside this one
hold each area's helpers: ``helpers.build``, ``helpers.client``, ``helpers.site`` and so on.

Importable as ``helpers`` because pyproject.toml's pytest section puts tests/ on the import path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[2]
# Signed metadata expires a set number of days after the commit it was built from, and the tests' commits carry
# fixed dates (2026-01-02 in helpers.client's GIT_ENV): registries signed in tests give it a century, so the tests
# do not start failing a year after those dates. Lines of registry.yaml's `trust:` section.
LONG_LIVED = "  metadata_days: 36500\n"


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


def missing(in_ci: str, elsewhere: str) -> NoReturn:
    """Something a test needs is not installed: under CI, which installs it (.ci/run), the test fails with
    ``in_ci``; elsewhere it skips with ``elsewhere``."""
    if os.environ.get("CI") == "true":
        pytest.fail(in_ci)
    pytest.skip(elsewhere)
