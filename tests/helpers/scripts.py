"""What every skill-script test needs: run a bundled script as a user would, and an isolated git."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_script(script: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
               stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The script in its own process (bash for .sh, this Python otherwise), output captured as text."""
    command = ["bash", str(script)] if script.suffix == ".sh" else [sys.executable, str(script)]
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=cwd, env=env, input=stdin,
                          timeout=60)


def git_env(home: Path, author: str, email: str, committer: str | None = None,
            committer_email: str | None = None) -> dict[str, str]:
    """An environment where git sees no user or system configuration and stops looking above ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
               GIT_CEILING_DIRECTORIES=str(home),
               GIT_AUTHOR_NAME=author, GIT_AUTHOR_EMAIL=email,
               GIT_COMMITTER_NAME=committer or author, GIT_COMMITTER_EMAIL=committer_email or email)
    return env
