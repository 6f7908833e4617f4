"""The site tests' shared fixtures: the bundled registry's site, built once a module, and headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.site import BROWSER_WAIT, bundled_site, chromium


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundled_site(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    with chromium(tmp_path_factory.mktemp("chromium-profile"), BROWSER_WAIT) as browser:
        yield browser
