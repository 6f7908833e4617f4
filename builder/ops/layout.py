"""How a repository lays out its skills, in the words ``init`` prints, and the ``skills:`` locations that find
the same skills again."""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..core.discovery import Discovery, agent_folders, discover

PLUGINS = "plugins/*/skills"
MAX_LOCATIONS = 20  # past this many, registry.yaml names none and discovery searches as it did for init


@dataclass(frozen=True)
class Layout:
    """The skills found, by the folder holding them (``"."``: the repository's top folder) and by kind of layout:
    (kind, folders, skills), the kind with most skills first."""

    skills: int
    folders: tuple[str, ...]
    kinds: tuple[tuple[str, int, int], ...]

    def summary(self) -> str:
        return (f"{self.skills} skill{'s' if self.skills != 1 else ''} in {len(self.folders)} "
                f"folder{'s' if len(self.folders) != 1 else ''}")


def container(path: str) -> str:
    """The folder holding the skill at ``path`` ("." for one at the top, or for the repository itself)."""
    return posixpath.dirname(path) or "."


def kind_of(folder: str) -> str:
    """The layout a folder of skills belongs to, as people name it."""
    parts = folder.split("/")
    if folder == ".":
        return "skill folders at the top (<skill>/)"
    if folder == "skills":
        return "skills/<skill>"
    if len(parts) == 2 and parts[0] == "skills" and parts[1].startswith("."):
        return "dot folders in skills/ (skills/.<group>/<skill>)"
    if folder in agent_folders():
        return f"an agent's folder ({folder}/<skill>)"
    if len(parts) == 3 and parts[0] == "plugins" and parts[2] == "skills":
        return "plugins (plugins/<plugin>/skills/<skill>)"
    if len(parts) == 2 and parts[1] == "skills":
        return "category folders (<category>/skills/<skill>)"
    return f"{folder}/<skill>"


def describe_layout(found: Discovery) -> Layout:
    by_folder = Counter(container(s.path) for s in found.skills)
    kinds: dict[str, list[int]] = {}
    for folder, count in by_folder.items():
        entry = kinds.setdefault(kind_of(folder), [0, 0])
        entry[0] += 1
        entry[1] += count
    ordered = sorted(((k, f, n) for k, (f, n) in kinds.items()), key=lambda item: (-item[2], item[0]))
    return Layout(len(found.skills), tuple(sorted(by_folder)), tuple(ordered))


def skill_locations(found: Discovery) -> tuple[str, ...] | None:
    """registry.yaml's ``skills:`` for what ``found`` holds: the folders holding skills (a skill at the top as
    itself), the plugins' folders as one pattern. None when no short list finds exactly the same skills (a
    folder listed is read strictly: a sub-folder without SKILL.md there would be reported as a broken skill)."""
    folders = sorted({container(s.path) if container(s.path) != "." else s.path for s in found.skills})
    plugins = [f for f in folders if _is_plugin_folder(f)]
    candidates = [folders]
    if len(plugins) > 1:
        candidates.insert(0, sorted({PLUGINS, *(f for f in folders if f not in plugins)}))
    wanted = {s.path for s in found.skills}
    for locations in candidates:
        if len(locations) <= MAX_LOCATIONS and _finds(found.root, locations, wanted):
            return tuple(locations)
    return None


def _is_plugin_folder(folder: str) -> bool:
    parts = folder.split("/")
    return len(parts) == 3 and parts[0] == "plugins" and parts[2] == "skills"


def _finds(root: Path, locations: list[str], wanted: set[str]) -> bool:
    return {s.path for s in discover(root, locations).skills} == wanted
