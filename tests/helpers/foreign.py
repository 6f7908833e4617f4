"""Clients other projects wrote, pinned in tests/foreign/package.json and installed there by .ci/run (``npm ci``)
with the Node.js 22 they need: vercel's ``skills`` CLI and the official MCP conformance suite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from helpers import REPO, missing

FOREIGN = REPO / "tests" / "foreign"
NODE = FOREIGN / "node_modules" / ".bin" / "node"
SKILLS_CLI = FOREIGN / "node_modules" / "skills" / "bin" / "cli.mjs"


def foreign_command(script: Path) -> list[str]:
    """``script`` of tests/foreign run by its pinned node; skips (fails under CI) when that is not installed."""
    if not (NODE.exists() and script.exists()):
        missing("tests/foreign is not installed (npm ci --prefix tests/foreign), and CI must run it",
                "tests/foreign is not installed: npm ci --prefix tests/foreign")
    return [str(NODE), str(script)]


def skills_add(cli: list[str], source: str, project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return skills_run(cli, project, "add", source, "-y", "--agent", "claude-code", "--copy", *extra)


def skills_run(cli: list[str], project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """vercel's CLI run in ``project`` with a home folder of the test's own and no request beyond 127.0.0.1."""
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local/share"), "XDG_STATE_HOME": str(home / ".local/state"),
           "XDG_CACHE_HOME": str(home / ".cache"),
           # No telemetry or audit requests, and nothing of skills.sh: the test touches only 127.0.0.1.
           "DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1", "SKILLS_API_URL": "http://127.0.0.1:9",
           "SKILLS_DOWNLOAD_URL": "http://127.0.0.1:9", "NO_COLOR": "1"}
    return subprocess.run([*cli, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)


def installed_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
