"""The agents' skill folders, read from ``builder/data/agents.yaml`` so a new agent is data, not code."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path, PurePosixPath

import yaml

from ..core.errors import UsageError


@dataclass(frozen=True)
class Agent:
    name: str
    title: str
    project: str  # folder relative to the project root, e.g. ".claude/skills"
    user: str  # folder below the home folder, written with a leading "~/"

    def folder(self, *, global_: bool, project_root: Path) -> Path:
        """The folder that holds this agent's skills (one sub-folder per skill)."""
        return Path(self.user).expanduser() if global_ else project_root / self.project


@dataclass(frozen=True)
class AgentTable:
    agents: dict[str, Agent]
    default: str

    def get(self, name: str | None) -> Agent:
        key = name or self.default
        try:
            return self.agents[key]
        except KeyError:
            raise UsageError(f"unknown agent {key!r}; known agents: {', '.join(sorted(self.agents))}") from None


def _check(name: str, entry: object) -> Agent:
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("title", "project", "user")):
        raise ValueError(f"agents.yaml: agent {name!r} needs string `title`, `project` and `user`")
    project = PurePosixPath(entry["project"])
    if project.is_absolute() or ".." in project.parts or not entry["user"].startswith("~/"):
        raise ValueError(f"agents.yaml: agent {name!r}: `project` must be relative and `user` start with ~/")
    return Agent(name, entry["title"], entry["project"], entry["user"])


@lru_cache(maxsize=1)
def agent_table() -> AgentTable:
    text = resources.files("builder").joinpath("data/agents.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    agents = {name: _check(name, entry) for name, entry in data["agents"].items()}
    if data.get("default") not in agents:
        raise ValueError("agents.yaml: `default` must name one of the agents")
    return AgentTable(agents, data["default"])
