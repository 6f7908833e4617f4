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
    if parts[-1] == "skills":
        return "skills folders further down (.../skills/<skill>)"
    agent = next((a for a in agent_folders() if folder.startswith(f"{a}/")), None)
    if agent is not None:
        return f"groups in an agent's folder ({agent}/<group>/<skill>)"
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
    """registry.yaml's ``skills:`` for what ``found`` holds, the shortest list that finds exactly the same skills:
    the folders holding skills (a skill at the top as itself), without those inside another listed one, dot
    folders by the folder above them, the plugins' folders as one pattern. None when no list of at most
    ``MAX_LOCATIONS`` does (a folder listed is read strictly: a sub-folder without SKILL.md there would be
    reported as a broken skill)."""
    folders = sorted({container(s.path) if container(s.path) != "." else s.path for s in found.skills})
    outer = _outermost(folders)
    undotted = _outermost(sorted({_undotted(f) for f in outer}))
    plugins = [f for f in undotted if _is_plugin_folder(f)]
    candidates = [sorted({PLUGINS, *(f for f in undotted if f not in plugins)})] if len(plugins) > 1 else []
    candidates += [undotted, outer, folders]
    wanted = {s.path for s in found.skills}
    tried: set[tuple[str, ...]] = set()
    for locations in candidates:
        key = tuple(locations)
        if key in tried or len(locations) > MAX_LOCATIONS:
            continue
        tried.add(key)
        if _finds(found.root, locations, wanted):
            return key
    return None


def _outermost(folders: list[str]) -> list[str]:
    return [f for f in folders if not any(f.startswith(g + "/") for g in folders if g != ".")]


def _undotted(folder: str) -> str:
    """A dot folder's parent (``skills/.curated`` -> ``skills``): discovery looks into dot folders below it."""
    head, _, last = folder.rpartition("/")
    return head if head and last.startswith(".") else folder


def _is_plugin_folder(folder: str) -> bool:
    parts = folder.split("/")
    return len(parts) == 3 and parts[0] == "plugins" and parts[2] == "skills"


def _finds(root: Path, locations: list[str], wanted: set[str]) -> bool:
    return {s.path for s in discover(root, locations).skills} == wanted
