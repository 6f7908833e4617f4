"""Signed registries for the trust tests: the bundled registry with keys from `skillreg trust init`, and signed
builds of it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from builder.core.config import load_config
from builder.publish.build import BuildOptions, build
from helpers import LONG_LIVED, missing
from helpers.client import commit, copy_registry, edit_csv_profiler, run, tree

SKILL = "adr-writer"


def signed_build(registry: Path, out: Path, keys: Path) -> Path:
    build(load_config(registry / "registry.yaml"), out, BuildOptions(keep_going=True, site=False, sign=keys))
    return out


def signing_registry(base: Path, trust: str) -> tuple[Path, Path]:
    """The bundled registry as a git repository in ``base`` with ``trust`` (lines of registry.yaml's `trust:`
    section), keys made by `skillreg trust init` and the first root committed: (registry, keys)."""
    registry = copy_registry(base / "registry")
    with open(registry / "registry.yaml", "a", encoding="utf-8") as fh:
        fh.write(f"trust:\n{trust}{LONG_LIVED}")
    keys = base / "keys"
    cwd = Path.cwd()
    os.chdir(registry)
    try:
        result = run("trust", "init", str(keys))
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    commit(registry, "trust: first root")
    return registry, keys


def signed_builds(base: Path) -> dict[str, Path]:
    """Two signed builds of the bundled registry (v2 changes csv-profiler), with the keys that signed them."""
    registry, keys = signing_registry(base, "  bins: 16\n")
    v1 = copy_tree(signed_build(registry, base / "site", keys), base / "site-v1")
    edit_csv_profiler(registry)
    v2 = signed_build(registry, base / "site", keys)  # a rebuild of the same output
    return {"registry": registry, "keys": keys, "v1": v1, "v2": v2, "base": base}


def copy_tree(folder: Path, dest: Path) -> Path:
    shutil.copytree(folder, dest)
    return dest


def faketime_program() -> str:
    """libfaketime's ``faketime``, to run the real client or CLI with its clock moved (skips, or fails under CI,
    when it is not installed)."""
    found = shutil.which("faketime")
    if found is None:
        missing("faketime is missing; .ci/run installs Debian's faketime package",
                "faketime (Debian's libfaketime) is not installed")
    return found


def refused(code: int, output: str, project: Path, before: dict[str, tuple[bytes, int]], *needles: str) -> str:
    """Assert a refusal as users meet it: a non-zero exit, one `Error:` line holding every needle, no traceback,
    and ``project`` byte for byte as ``before`` (nothing installed, the lock and its pin as committed); the line."""
    assert code != 0, output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], output
    assert "Traceback" not in output
    assert tree(project) == before
    return errors[0]
