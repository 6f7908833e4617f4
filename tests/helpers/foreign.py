"""Clients other projects wrote, pinned in tests/foreign/package.json and installed there by .ci/run (``npm ci``)
with the Node.js 22 they need: vercel's ``skills`` CLI, the official MCP conformance suite, Claude Code and Codex
CLI (the last two native binaries from per-platform packages)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from helpers import REPO, missing

FOREIGN = REPO / "tests" / "foreign"
NODE = FOREIGN / "node_modules" / ".bin" / "node"
SKILLS_CLI = FOREIGN / "node_modules" / "skills" / "bin" / "cli.mjs"
CLAUDE = FOREIGN / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"  # its postinstall's
CODEX_CLI = FOREIGN / "node_modules" / "@openai" / "codex" / "bin" / "codex.js"
# A request to any host but 127.0.0.1 goes to a closed port: the agents' tests never reach the network.
NO_NETWORK = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9",
              "NO_PROXY": "127.0.0.1", "DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1", "NO_COLOR": "1"}


def foreign_command(script: Path) -> list[str]:
    """``script`` of tests/foreign run by its pinned node; skips (fails under CI) when that is not installed."""
    if not (NODE.exists() and script.exists()):
        missing("tests/foreign is not installed (npm ci --prefix tests/foreign), and CI must run it",
                "tests/foreign is not installed: npm ci --prefix tests/foreign")
    return [str(NODE), str(script)]


def claude_command() -> list[str]:
    """Claude Code's native binary, put in place by its package's postinstall; skips (fails under CI) when absent."""
    if not CLAUDE.exists() or CLAUDE.stat().st_size < 1 << 20:  # the package's placeholder before postinstall
        missing("tests/foreign is not installed (npm ci --prefix tests/foreign), and CI must run it",
                "tests/foreign is not installed: npm ci --prefix tests/foreign")
    return [str(CLAUDE)]


def agent_run(cli: list[str], home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Claude Code or Codex run in ``cwd`` with ``home`` as its home folder (its settings, plugin caches and
    marketplaces), logged out, with no telemetry, update check or request beyond 127.0.0.1."""
    (home / ".codex").mkdir(parents=True, exist_ok=True)  # Codex refuses a CODEX_HOME that does not exist
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local/share"),
           "XDG_STATE_HOME": str(home / ".local/state"), "CODEX_HOME": str(home / ".codex"),
           "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", **NO_NETWORK}
    return subprocess.run([*cli, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


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
