"""What a skill may do, spotted from what it ships: scripts, allowed tools, network and shell use in scripts.

A summary for a reader deciding whether to install, not a sandbox: a script can always do more than a
pattern can see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.model import Skill

NETWORK = re.compile(
    r"\b(?:urllib\.request|urlopen|requests\.(?:get|post|put|delete|Session)|httpx|aiohttp|socket\.|"
    r"http\.client|curl|wget|fetch\(|Invoke-WebRequest|nc\s+-)|https?://(?!localhost|127\.0\.0\.1|example\.)")
SHELL = re.compile(r"\b(?:subprocess|os\.system|os\.popen|os\.exec\w*|pty\.spawn|shell=True|eval\s*\(|exec\s*\()")
# Substrings one of which every match of the patterns above contains: a fast test before the regex.
NETWORK_HINTS = ("url", "request", "aiohttp", "socket", "http", "curl", "wget", "fetch", "WebRequest", "nc ", "nc\t",
                 "nc\n")
SHELL_HINTS = ("subprocess", "os.", "pty", "shell=True", "eval", "exec")
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".rb", ".pl", ".ps1")


@dataclass(frozen=True)
class Permissions:
    scripts: tuple[str, ...]
    allowed_tools: tuple[str, ...]
    network: tuple[str, ...]  # scripts that appear to use the network
    shell: tuple[str, ...]  # scripts that appear to run other programs

    def to_dict(self) -> dict[str, list[str]]:
        return {"scripts": list(self.scripts), "allowed_tools": list(self.allowed_tools),
                "network": list(self.network), "shell": list(self.shell)}


def allowed_tools(skill: Skill) -> tuple[str, ...]:
    value = skill.field("allowed-tools")
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, str):
        # Tools are space-separated, but a tool's argument pattern may hold spaces inside parentheses.
        return tuple(t for t in re.findall(r"[^\s(]+(?:\([^)]*\))?", value) if t)
    return ()


def permissions(skill: Skill) -> Permissions:
    scripts = [f for f in skill.files
               if f.is_text and (f.path.startswith("scripts/") or f.executable or f.path.endswith(SCRIPT_SUFFIXES))
               and f.path not in ("SKILL.md", "skill.md") and not f.path.endswith(".md")]
    network, shell = [], []
    for f in scripts:
        text = f.data.decode("utf-8")
        if any(h in text for h in NETWORK_HINTS) and NETWORK.search(text):
            network.append(f.path)
        if any(h in text for h in SHELL_HINTS) and SHELL.search(text):
            shell.append(f.path)
    return Permissions(tuple(f.path for f in scripts), allowed_tools(skill), tuple(network), tuple(shell))
