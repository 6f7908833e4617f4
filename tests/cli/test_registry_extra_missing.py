"""A client-only install (no `registry` extra) running a registry's command: one line saying how to add the extra
in the way the installation was made, pip, pipx or uv, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, write_tree

from builder.cli.app import REGISTRY_EXTRA_MODULES, WITH_EXTRA, extra_install

# `skillreg` in a process where none of the extra's packages can be imported, as in a client-only install.
WITHOUT_EXTRA = (f"import sys; sys.modules.update(dict.fromkeys({sorted(REGISTRY_EXTRA_MODULES)!r})); "
                 "from builder.cli.app import cli; cli(prog_name='skillreg')")


@pytest.mark.parametrize("args", [["validate"], ["build"], ["new", "my-skill", "--category", "data"],
                                  ["serve", "--port", "0"]])
def test_a_registry_command_without_the_extra_says_how_to_add_it(tmp_path: Path, args: list[str]) -> None:
    write_tree(tmp_path, {"registry.yaml": (REPO / "registry.yaml").read_text(encoding="utf-8"),
                          "skills/csv-profiler/SKILL.md": (REPO / "skills/csv-profiler/SKILL.md").read_bytes()})
    done = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(f"Error: `skillreg {args[0]}` works on a registry's skills and needs the "
                                  "packages of the `registry` extra, which this installation lacks (no module named ")
    assert done.stderr.endswith(f"; add them with: {extra_install(Path(sys.prefix))}\n")
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "site").exists() and not (tmp_path / "skills/my-skill").exists()


@pytest.mark.parametrize(("marker", "command"), [("pipx_metadata.json", f"pipx install --force {WITH_EXTRA}"),
                                                 ("uv-receipt.toml", f"uv tool install --force {WITH_EXTRA}")])
def test_a_pipx_or_uv_installation_is_told_its_own_command(tmp_path: Path, marker: str, command: str) -> None:
    (tmp_path / marker).write_text("", encoding="utf-8")  # what pipx and uv leave in the environments they make
    assert extra_install(tmp_path) == command


def test_any_other_installation_is_told_pip_with_pipx_and_uv_beside_it(tmp_path: Path) -> None:
    assert extra_install(tmp_path) == (
        f"pip install {WITH_EXTRA} (or, for an install made by pipx or uv, `pipx install --force` or "
        "`uv tool install --force` with the same argument)")
