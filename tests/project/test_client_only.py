"""The client-only install: `pipx install` of the checkout, as the README's one line does it, takes none of the
registry extra's packages and installs a skill from a build served on 127.0.0.1.

The wheels come from a local folder `.ci/run` fills (``SKILLREG_CLIENT_WHEELHOUSE``), and pip is told to use
nothing else, so the test touches no network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, missing
from helpers.client import RegistryServer

from builder.cli.app import REGISTRY_EXTRA_MODULES

pytestmark = pytest.mark.slow  # pipx makes a venv and builds the project: half a minute
WHEELHOUSE = os.environ.get("SKILLREG_CLIENT_WHEELHOUSE", "")
PIPX = Path(sys.prefix) / "bin" / "pipx"


@pytest.fixture(scope="module")
def client_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `skillreg` of a pipx install of a copy of this checkout: its path."""
    if not WHEELHOUSE or not Path(WHEELHOUSE).is_dir() or not PIPX.is_file():
        missing("CI must provide SKILLREG_CLIENT_WHEELHOUSE (.ci/run fills it) and pipx (the test extras)",
                "no wheelhouse for the client-only install: run .ci/run, or set SKILLREG_CLIENT_WHEELHOUSE")
    root = tmp_path_factory.mktemp("client-only")
    source = root / "skill-registry"
    skip_top = {".git", ".venv", "site", "build", "tests", "bench", "test-artifacts"}

    def ignore(folder: str, names: list[str]) -> set[str]:
        top = skip_top if Path(folder) == REPO else set()
        return {n for n in names if n in top or n == "__pycache__" or n.endswith(".egg-info")}

    shutil.copytree(REPO, source, ignore=ignore)
    env = {**os.environ, "PIPX_HOME": str(root / "pipx"), "PIPX_BIN_DIR": str(root / "bin"),
           "PIPX_MAN_DIR": str(root / "man"), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": WHEELHOUSE,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run([str(PIPX), "install", str(source)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return root / "bin" / "skillreg"


def test_the_client_only_install_has_none_of_the_registry_packages(client_install: Path) -> None:
    venv = client_install.resolve().parent.parent
    (site_packages,) = venv.glob("lib/python3*/site-packages")
    installed = {p.name.split("-")[0].lower() for p in site_packages.iterdir()}
    assert not installed & REGISTRY_EXTRA_MODULES, sorted(installed & REGISTRY_EXTRA_MODULES)
    assert {"click", "yaml", "platformdirs", "mcp", "jsonschema"} <= installed


def test_the_client_only_install_installs_and_verifies_a_skill(client_install: Path, site: Path,
                                                               tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with RegistryServer(site) as server:
        for args in (["search", "csv"], ["install", "csv-profiler"], ["verify"]):
            done = subprocess.run([str(client_install), *args, *(["--registry", server.url] if args[0] != "verify"
                                                                  else [])],
                                  cwd=project, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert (project / ".claude/skills/csv-profiler/SKILL.md").is_file()
    assert "csv-profiler" in (project / "skills-lock.json").read_text(encoding="utf-8")


def test_a_registry_command_names_the_extra_it_needs(client_install: Path, tmp_path: Path) -> None:
    shutil.copy(REPO / "registry.yaml", tmp_path / "registry.yaml")
    shutil.copytree(REPO / "skills" / "csv-profiler", tmp_path / "skills" / "csv-profiler")
    done = subprocess.run([str(client_install), "build"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("Error: `skillreg build` works on a registry's skills and needs the packages of "
                                  "the `registry` extra, which this installation lacks (no module named ")
    assert done.stderr.endswith("); add them with: pipx install --force "
                                "'skill-registry[registry] @ git+https://github.com/skill-registry/skill-registry'\n")
    assert not (tmp_path / "site").exists()
