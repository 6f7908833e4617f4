"""The package as a user gets it: build the sdist, then the wheel from that sdist (as `python -m build` does),
check what each carries, install the wheel into a fresh virtual environment and build a registry with it.

The build runs without isolation (the test extras pin setuptools>=77) and the fresh environment borrows the
test environment's dependencies through a .pth file, so nothing is downloaded.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import REPO
from helpers.build import make_registry

pytestmark = pytest.mark.slow


def run(args: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)], cwd=out)
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def templates() -> set[str]:
    return {p.relative_to(REPO / "site_templates").as_posix()
            for p in (REPO / "site_templates").rglob("*") if p.is_file()}


def test_the_wheel_carries_the_templates_schemas_and_data_and_no_tests(dists: tuple[Path, Path]) -> None:
    names = set(zipfile.ZipFile(dists[1]).namelist())
    assert {f"builder/site/templates/{t}" for t in templates()} <= names
    schemas = {p.name for p in (REPO / "builder/publish/schemas").glob("*.json")}
    assert len(schemas) == 13 and {f"builder/publish/schemas/{s}" for s in schemas} <= names
    assert {"builder/data/agents.yaml", "builder/data/content_types.yaml", "builder/site/pages.py"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.startswith(("tests/", "site/", "skills/", "bench/", "site_templates/"))]
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "builder").rglob("*.py")}
    assert modules <= names


def test_the_sdist_carries_the_sources_templates_and_license(dists: tuple[Path, Path]) -> None:
    with tarfile.open(dists[0]) as archive:
        top = archive.getnames()[0].split("/")[0]
        names = {n.removeprefix(f"{top}/") for n in archive.getnames()}
    assert {"LICENSE", "README.md", "pyproject.toml"} <= names
    assert {f"site_templates/{t}" for t in templates()} <= names
    assert {"builder/publish/schemas/index.schema.json", "builder/data/agents.yaml"} <= names


def test_the_installed_wheel_builds_a_site_outside_the_repository(dists: tuple[Path, Path], tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    bin_dir = venv / "bin"
    # The wheel goes into the fresh environment without its dependencies ...
    run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(dists[1])],
        cwd=tmp_path)
    # ... which it finds in the test environment's site-packages, listed after its own (no editable finder runs
    # from there: .pth files are read only in site directories).
    (purelib,) = (venv / "lib").glob("python3*/site-packages")
    (purelib / "test-deps.pth").write_text("".join(f"{p}\n" for p in site.getsitepackages()), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = run([str(bin_dir / "python"), "-c", "import builder; print(builder.__file__)"], cwd=tmp_path, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv)

    registry = make_registry(tmp_path / "registry", ["csv-profiler"])
    done = run([str(bin_dir / "skillreg"), "build", "--out", "out"], cwd=registry, env=env)
    assert done.stdout.startswith("Built 1 skill into out/ at commit ")
    out = registry / "out"
    assert (out / "index.html").is_file() and (out / "skills/csv-profiler/index.html").is_file()
    assert (out / "assets/search.js").read_bytes() == (REPO / "site_templates/assets/search.js").read_bytes()
    assert (out / "api/v1/index.json").is_file() and (out / "api/v1/schema/index.schema.json").is_file()
