"""Clients other projects wrote install from a real build served on 127.0.0.1: vercel's ``skills`` CLI, pinned in
tests/foreign/package.json and installed there by .ci/run (``npm ci``), with the Node.js 22 it needs.

The CLI reads the agent-skills discovery index (v0.2) and downloads the archive it names. Given the registry's
root it downloads every skill's archive to pick one; given a skill's API folder it reads the one-skill index
published there and downloads one archive, which is what the skill page tells users to run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import REPO
from helpers.client import RegistryServer
from helpers.foreign import installed_files, skills_add
from helpers.site import bundled_site

from builder.core.urls import API_ROOT, INDEX_PATH, WELL_KNOWN_V2, detail_path, scoped_discovery_path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled registry built with its website (the client tests' ``site`` has no pages)."""
    return bundled_site(tmp_path_factory.getbasetemp())


def zips_fetched(server: RegistryServer) -> list[str]:
    return [path for path, status in server.state.paths() if path.endswith(".zip") and status == 200]


def test_a_skill_folder_url_installs_that_skill_from_one_archive(site: Path, skills_cli: list[str],
                                                                 tmp_path: Path) -> None:
    name = "csv-profiler"
    project = tmp_path / "project"
    project.mkdir()
    # The command the skill's page gives, pointed at the test server instead of the registry's address.
    page = (site / "skills" / name / "index.html").read_text(encoding="utf-8")
    base = (json.loads((site / INDEX_PATH).read_text())["registry"]["url"] or "").rstrip("/") + "/"
    [source] = re.findall(r"npx skills add (\S+)", re.sub(r"<[^>]+>", "", page))  # the URL sits in a span
    assert source == f"{base}{API_ROOT}/skills/{name}"
    with RegistryServer(site) as server:
        done = skills_add(skills_cli, server.url + source.removeprefix(base), project)
        assert done.returncode == 0, done.stdout + done.stderr
        zip_path = json.loads((site / detail_path(name)).read_text())["bundles"]["zip"]["path"]
        assert zips_fetched(server) == [zip_path]
        assert (scoped_discovery_path(name), 200) in server.state.paths()
    assert installed_files(project / ".claude/skills" / name) == installed_files(REPO / "skills" / name)


def test_the_registry_root_with_a_skill_named_still_installs_it(site: Path, skills_cli: list[str],
                                                                tmp_path: Path) -> None:
    name = "adr-writer"
    project = tmp_path / "project"
    project.mkdir()
    with RegistryServer(site) as server:
        done = skills_add(skills_cli, server.url, project, "--skill", name)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (f"{WELL_KNOWN_V2}/index.json", 200) in server.state.paths()
    assert installed_files(project / ".claude/skills" / name) == installed_files(REPO / "skills" / name)
    assert sorted(p.name for p in (project / ".claude/skills").iterdir()) == [name]


def test_an_archive_that_does_not_match_its_digest_is_refused(site: Path, skills_cli: list[str],
                                                              tmp_path: Path) -> None:
    """The foreign client checks the digest the scoped index gives: a tampered archive installs nothing."""
    name = "csv-profiler"
    project = tmp_path / "project"
    project.mkdir()
    zip_path = json.loads((site / detail_path(name)).read_text())["bundles"]["zip"]["path"]
    other = json.loads((site / detail_path("adr-writer")).read_text())["bundles"]["zip"]["path"]
    with RegistryServer(site) as server:
        server.state.overrides[zip_path] = (site / other).read_bytes()  # a real archive, of another skill
        done = skills_add(skills_cli, f"{server.url}{API_ROOT}/skills/{name}", project)
    assert not (project / ".claude/skills" / name).exists(), done.stdout + done.stderr
    assert done.returncode != 0 and "No skills found" in done.stdout + done.stderr
