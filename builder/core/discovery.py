"""Where a repository's skills are: the folders registry.yaml's ``skills:`` names, or, without them, the folders
agents and vercel's ``skills`` CLI look in.

A skill is a folder holding SKILL.md (or ``skill.md``). A SKILL.md further down a skill's folder (in its
``references/``, say) is a file of that skill, never a skill of its own. The walk reads folders with
``os.scandir`` and never stats a file it does not need: a folder of skills one level deep costs one listing of
that folder and one ``lstat`` of each skill's SKILL.md. It never enters ``.git``, ``node_modules`` or the other
generated folders the loader refuses, nor a built site (a folder holding ``.nojekyll``). A folder reached through a
symbolic link counts once, by its real path, when that path is inside the repository; a link leading out of it is
refused with one line and never followed.

``Discovery`` names every skill by its path in the repository (``plugins/docs/skills/pdf``) and by its group: the
plugin or category folder it sits under (``plugins/docs``), which tells apart two skills of one name and makes a
collection of the skills of one plugin.
"""

from __future__ import annotations

import functools
import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from .config import RegistryConfig
from .diagnostics import RULES, Diagnostic
from .errors import UsageError
from .loader import display_path, refuse_linked_folders

SKILL_FILES = ("SKILL.md", "skill.md")
# Never searched: version control, dependencies and caches (the loader's junk folders).
SKIPPED = frozenset({"__pycache__", "node_modules", ".git", ".svn", ".hg", ".mypy_cache", ".pytest_cache",
                     ".venv", ".tox"})
SITE_MARK = ".nojekyll"  # a folder holding it is a built site: its copies of SKILL.md files are no skills
MAX_DEPTH = 6  # folders below a location (or below the repository, for the search of last resort) looked into
ROOT_SKILLS = "skills"
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class FoundSkill:
    """One skill folder: where it is on disk, its path in the repository and the group folder it belongs to."""

    folder: Path  # the folder itself (its real path when it was reached through a link)
    path: str  # POSIX path relative to the repository root ("." for a skill that is the whole repository)
    group: str | None = None  # the plugin or category folder, repository-relative; None directly in skills/

    @property
    def name(self) -> str:
        """The folder's own name: what the skill was known by before discovery (and the slug's fallback)."""
        return self.folder.name

    @property
    def has_skill_md(self) -> bool:
        return any(os.path.lexists(os.path.join(self.folder, name)) for name in SKILL_FILES)


@dataclass(frozen=True)
class Refusal:
    """A folder discovery would not use, with the one line that says why."""

    path: str  # repository-relative, as written in the repository
    reason: str
    folder: Path | None = None  # the link itself

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class Discovery:
    """What discovery found in one repository, and where it looked."""

    root: Path  # the repository folder the paths are relative to (registry.yaml's folder)
    skills: tuple[FoundSkill, ...]  # sorted by path, each skill once
    searched: tuple[str, ...]  # where it looked, as people read it: "skills/", "plugins/*/skills/", ...
    refused: tuple[Refusal, ...] = ()
    configured: bool = False  # the locations came from registry.yaml (`skills:` or `skills_dir:`)
    # Where skills of this layout live, as folders or glob patterns relative to ``root``: what git history is read
    # below, so a skill deleted from one of them still publishes its versions.
    scope: tuple[str, ...] = ()

    @property
    def folders(self) -> list[Path]:
        return [s.folder for s in self.skills]

    def by_path(self) -> dict[str, FoundSkill]:
        return {s.path: s for s in self.skills}

    def where(self) -> str:
        """The places searched, in one phrase for a message."""
        return ", ".join(self.searched)

    def require(self) -> Discovery:
        """Itself, when it found a skill; else a UsageError that says where it looked (and what it refused)."""
        if self.skills:
            return self
        raise NoSkillFound(self)


class NoSkillFound(UsageError):
    """Discovery found no skill; the message says where it looked and what it refused."""

    def __init__(self, found: Discovery) -> None:
        self.discovery = found
        refused = f"; refused {'; '.join(map(str, found.refused))}" if found.refused else ""
        how = "the locations `skills` names in registry.yaml" if found.configured else "the folders agents read"
        super().__init__(f"no skill found in {found.root}: a skill is a folder holding SKILL.md; looked in {how}: "
                         f"{found.where()}{refused}; create one with `skillreg new NAME`")


# ------------------------------------------------------------------------------------------- the search itself

@dataclass
class _Walk:
    """One discovery's state: the repository, what it found (by real path), and where it must not go."""

    root: str  # real path, no trailing separator
    found: dict[str, str] = field(default_factory=dict)  # skill folder -> its real path
    refused: dict[str, Refusal] = field(default_factory=dict)
    excluded: frozenset[str] = frozenset()  # real paths never entered (the build's output)
    entered: set[str] = field(default_factory=set)  # real paths of folders already listed

    def rel(self, path: str) -> str:
        """``path`` relative to the repository, POSIX; the absolute path when outside it."""
        if path == self.root:
            return "."
        if path.startswith(self.root + os.sep):
            return path[len(self.root) + 1:].replace(os.sep, "/")
        return Path(path).as_posix()

    def add(self, folder: str, first: os.stat_result | None = None) -> None:
        """Count ``folder`` as a skill. When its SKILL.md is a link (a copy kept for another agent, such as
        ``.gemini/skills/pdf/SKILL.md`` -> ``../../../skills/pdf/SKILL.md``), the skill is the folder of the file
        it leads to, counted once by its real path; a link leading nowhere, or to a file that is not a skill's
        SKILL.md, is refused with one line. ``first``: the ``lstat`` of its SKILL.md, when the caller has it; a
        SKILL.md that is no link makes the folder the skill, whatever a ``skill.md`` beside it is."""
        if first is not None and not stat.S_ISLNK(first.st_mode):
            self.found.setdefault(folder, folder)
            return
        for name in SKILL_FILES:
            skill_md = folder + os.sep + name
            if os.path.islink(skill_md):
                real = self.linked_skill(skill_md)
                if real is None:
                    return
                folder = real
                break
        self.found.setdefault(folder, folder)

    def inside(self, real: str) -> bool:
        """Whether the real path ``real`` is the repository or inside it."""
        return real == self.root or real.startswith(self.root + os.sep)

    def refuse_link(self, link: str, shown: str, why: str) -> None:
        """Refuse the link ``link`` (reported as ``shown``, the folder left out) with one line: ``why`` follows
        what the link leads to, as written in it."""
        try:
            target = os.readlink(link)
        except OSError:
            target = os.path.realpath(link)
        rel = self.rel(shown)
        lead = f"its {os.path.basename(link)} is a" if shown != link else "a"
        self.refused.setdefault(rel, Refusal(rel, f"{lead} symbolic link to {target!r}, {why}", Path(link)))

    def linked_skill(self, skill_md: str) -> str | None:
        """The real folder of the SKILL.md the link ``skill_md`` leads to; None (refused) when it leads nowhere
        or to another kind of file. A link out of the repository keeps its own folder, where the loader refuses
        it as the safety error it is (SK501)."""
        real = os.path.realpath(skill_md)
        if not self.inside(real):
            return os.path.dirname(skill_md)
        if not os.path.exists(real):
            why = "which leads nowhere"
        elif os.path.basename(real) not in SKILL_FILES or not os.path.isfile(real):
            why = "which is not a skill's SKILL.md"
        else:
            return os.path.dirname(real)
        self.refuse_link(skill_md, os.path.dirname(skill_md), why)
        return None

    def follow(self, link: str) -> str | None:
        """The real path of a linked folder inside the repository; None when it leads nowhere, or out of the
        repository (then refused, with the line that says so)."""
        real = os.path.realpath(link)
        if not self.inside(real):
            self.refuse_link(link, link, "outside the repository; links are never followed out of it")
            return None
        return real if os.path.isdir(real) else None

    def search(self, folder: str, depth: int, *, strict: bool, hidden: bool = False) -> bool:
        """Find the skills in ``folder`` and below. ``strict`` (a location's own folder): a visible sub-folder
        that holds files but no skill is a skill missing its SKILL.md, which the loader reports. Returns whether
        ``folder`` holds anything: a file or a skill. ``hidden``: ``folder`` is a dot folder, never a skill."""
        if folder in self.entered or folder in self.excluded:
            return False
        self.entered.add(folder)
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return False
        if not hidden and any(e.name in SKILL_FILES for e in entries):
            self.add(folder)
            return True
        if folder != self.root and _is_site({e.name for e in entries}):
            return False
        holds = False
        for entry in entries:
            try:
                is_link = entry.is_symlink()
                is_dir = is_link or entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir:
                holds = holds or not entry.name.startswith((".", "_"))
                continue
            if entry.name in SKIPPED or entry.name.startswith("_") or depth >= MAX_DEPTH:
                continue
            sub = self.follow(entry.path) if is_link else entry.path
            if sub is None:
                continue
            hidden = entry.name.startswith(".")  # a dot folder is searched (skills/.curated), never a skill
            if not hidden:
                first = _lstat(sub + os.sep + SKILL_FILES[0]) if sub not in self.found else None
                if first is not None or sub in self.found:
                    self.add(sub, first)  # two ``lstat`` for a skill folder: the loader lists it
                    holds = True
                    continue
            before = len(self.found)
            below = self.search(sub, depth + 1, strict=False, hidden=hidden)
            if len(self.found) > before:
                holds = True
            elif below and strict and not hidden:
                self.add(sub)  # files but no SKILL.md: reported as a skill without one, as it always was
                holds = True
        return holds

    def location(self, folder: str, *, strict: bool) -> None:
        """Search one location: a skill folder itself, or a folder of skills (with containers below)."""
        if os.path.islink(folder):
            real = self.follow(folder)
            if real is None:
                return
            folder = real
        if os.path.isdir(folder):
            self.search(folder, 0, strict=strict)

    def result(self, searched: Sequence[str], configured: bool, scope: Sequence[str] = ()) -> Discovery:
        """The skills found, each once, none inside another's folder (a link may lead into one). Each folder's
        ``Path`` and group are made once per parent folder: a child of a ``Path`` costs half of one parsed."""
        skills: list[FoundSkill] = []
        parents: dict[str, tuple[Path, str, str | None]] = {}
        last = ""
        for real in sorted(self.found):
            if last and real.startswith(last + os.sep):
                continue  # a SKILL.md inside a skill's folder is a file of that skill
            last = real
            parent, name = os.path.split(real)
            known = parents.get(parent)
            if known is None or not name:
                path = self.rel(real)
                if not name or real == self.root:
                    skills.append(FoundSkill(Path(real), path, None))
                    continue
                prefix = self.rel(parent)
                known = parents[parent] = (Path(parent), "" if prefix == "." else prefix + "/", group_of(path))
            base, prefix, group = known
            skills.append(FoundSkill(base / name, prefix + name, group))
        skills.sort(key=lambda s: s.path)
        refused = tuple(sorted(self.refused.values(), key=lambda r: r.path))
        return Discovery(Path(self.root), tuple(skills), tuple(searched), refused, configured, tuple(scope))


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None


def _is_site(names: set[str]) -> bool:
    """A built site (ours, staged or published): it holds copies of SKILL.md files, never skills."""
    return SITE_MARK in names or {"api", ".well-known"} <= names


def group_of(path: str) -> str | None:
    """The plugin or category folder a skill at ``path`` belongs to: its parent folder, or the one above a
    ``skills`` folder (``plugins/docs/skills/pdf`` -> ``plugins/docs``, ``engineering/skills/x`` ->
    ``engineering``, ``skills/.curated/x`` -> ``skills/.curated``); None directly in the top ``skills/``, an
    agent's folder (``.claude/skills``) or the repository's top folder."""
    parent = posixpath.dirname(path)
    if posixpath.basename(parent) == ROOT_SKILLS:
        parent = posixpath.dirname(parent)
    if parent in agent_parents():
        parent = posixpath.dirname(parent)
    return parent or None


@functools.lru_cache(maxsize=1)
def agent_folders() -> tuple[str, ...]:
    """The agents' project skill folders (``.claude/skills``, ``.agents/skills``...), from the package's agents
    table, which the client's ``install --agent`` reads too."""
    text = resources.files("builder").joinpath("data/agents.yaml").read_text(encoding="utf-8")
    agents = (yaml.safe_load(text) or {}).get("agents") or {}
    folders = {entry["project"] for entry in agents.values() if isinstance(entry, dict)
               and isinstance(entry.get("project"), str)}
    return tuple(sorted(folders))


@functools.lru_cache(maxsize=1)
def agent_parents() -> frozenset[str]:
    """The folders holding an agent's ``skills`` folder: ``.claude``, ``.agents``..."""
    return frozenset(posixpath.dirname(f) for f in agent_folders()) - {""}


# ----------------------------------------------------------------------------------------------- entry points

def discover(root: Path, locations: Sequence[str] | None = None, *, exclude: Sequence[Path] = ()) -> Discovery:
    """Every skill of the repository at ``root``: in ``locations`` (registry.yaml's folders or glob patterns,
    relative to ``root``), or, when there are none, where agents and vercel's CLI look. ``exclude``: folders
    never searched (the build's output)."""
    real_root = os.path.realpath(root)
    walk = _Walk(real_root, excluded=frozenset(os.path.realpath(p) for p in exclude))
    if locations is not None:
        for pattern in locations:
            if not _GLOB_CHARS.intersection(pattern):  # a folder registry.yaml names is never reached by a link
                refuse_linked_folders(Path(root, *pattern.strip("/").split("/")))
            for folder in _matches(real_root, pattern):
                walk.location(folder, strict=True)
        return walk.result([_shown(p) for p in locations], configured=True, scope=locations)
    return _discover_usual(walk)


def discover_paths(paths: Sequence[Path], root: Path) -> Discovery:
    """The skills in folders a user named (``validate PATH``): each a skill folder or a folder of skills. A
    folder holding files but no SKILL.md and no skill below is a skill missing its SKILL.md."""
    walk = _Walk(os.path.realpath(root))
    for path in paths:
        is_skill = any(os.path.isfile(os.path.join(path, name)) for name in SKILL_FILES)
        refuse_linked_folders(path if not is_skill else path.parent)
        folder = os.path.abspath(path)
        if os.path.islink(folder):
            real = walk.follow(folder)
            if real is None:
                continue
            folder = real
        before = len(walk.found)
        if walk.search(folder, 0, strict=True) and len(walk.found) == before:
            walk.add(folder)
    shown = [walk.rel(os.path.abspath(p)) for p in paths]
    return walk.result([_shown(p) for p in shown], configured=True, scope=shown)


def _discover_usual(walk: _Walk) -> Discovery:
    """The folders agents read, skill folders at the top, then every other folder down to ``MAX_DEPTH``; the
    repository's top folder is one skill when it holds SKILL.md and those places hold none (then nothing below
    it is searched: it is the skill's own)."""
    root = walk.root
    searched = [f"{ROOT_SKILLS}/", *(f"{f}/" for f in agent_folders()), "plugins/*/skills/", "*/skills/",
                "skill folders at the top"]
    walk.location(os.path.join(root, ROOT_SKILLS), strict=True)
    for folder in agent_folders():
        walk.location(os.path.join(root, *folder.split("/")), strict=True)
    for pattern, strict in (("plugins/*/skills", True), ("*/skills", False)):
        for folder in _matches(root, pattern):
            walk.location(folder, strict=strict)
    for entry in _listing(root):
        if entry.is_dir(follow_symlinks=False) and entry.name not in SKIPPED and not entry.name.startswith("_") \
                and any(os.path.lexists(os.path.join(entry.path, name)) for name in SKILL_FILES):
            walk.add(entry.path)
    scope = [ROOT_SKILLS, *agent_folders(), "plugins/*/skills", "*/skills"]
    scope += [walk.rel(folder) for folder in walk.found if os.path.dirname(folder) == root]
    top_is_skill = any(os.path.lexists(os.path.join(root, name)) for name in SKILL_FILES)
    if top_is_skill and not walk.found:
        walk.add(root)
        searched.append("the top folder")
        scope = ["."]
    elif not top_is_skill:
        # Every other folder too: skills kept beside the usual places (``composio-skills/``, a plugin folder two
        # levels down) are skills agents load. Folders listed above are not listed again.
        usual = set(walk.found)
        walk.search(root, 0, strict=False)
        searched.append(f"every other folder {MAX_DEPTH} levels down (never .git or node_modules)")
        scope += sorted({walk.rel(os.path.dirname(folder)) for folder in walk.found if folder not in usual})
    return walk.result(searched, configured=False, scope=scope)


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def _matches(root: str, pattern: str) -> list[str]:
    """The folders ``pattern`` (a folder or a glob, relative to ``root``) names, sorted; none inside a skipped
    folder or a built site. A link is kept as found: ``location`` follows it or refuses it."""
    written = pattern.strip("/")
    if not _GLOB_CHARS.intersection(written):
        return [os.path.join(root, *written.split("/"))] if written not in ("", ".") else [root]
    found = []
    sites: dict[str, bool] = {}
    for match in Path(root).glob(written):
        rel = match.relative_to(root).parts
        if any(part in SKIPPED for part in rel):
            continue
        above = [os.path.join(root, *rel[:i]) for i in range(1, len(rel))]
        if any(sites.setdefault(folder, _is_site_folder(folder)) for folder in above):
            continue
        if match.is_dir() or match.is_symlink():
            found.append(str(match))
    return sorted(found)


def _is_site_folder(folder: str) -> bool:
    return os.path.lexists(os.path.join(folder, SITE_MARK)) or all(
        os.path.isdir(os.path.join(folder, name)) for name in ("api", ".well-known"))


def _shown(pattern: str) -> str:
    written = pattern.strip("/")
    return "the top folder" if written in ("", ".") else f"{written}/"


def registry_skills(config: RegistryConfig, *, exclude: Sequence[Path] = ()) -> Discovery:
    """``discover`` over a registry: the locations its registry.yaml names, else where agents look."""
    return discover(config.root, config.locations, exclude=exclude)


def refusal_finding(refusal: Refusal) -> Diagnostic:
    """A refused folder as the one finding validation and the build show for it (SK608)."""
    shown = display_path(refusal.folder) if refusal.folder is not None else refusal.path
    return RULES["SK608"].at(shown, 0, f"{refusal.reason}; left out")


def skills_home(config: RegistryConfig) -> Path:
    """Where ``skillreg new`` and ``import`` create a skill: the first folder registry.yaml names; without one,
    ``skills/`` when it exists or no skill is found, else the folder that holds the most skills found (the first
    by path of those holding as many)."""
    if config.locations is not None:
        return config.root / config.skills_dir
    if (config.root / ROOT_SKILLS).is_dir():
        return config.root / ROOT_SKILLS
    counts: dict[Path, int] = {}
    for found in registry_skills(config).skills:
        if found.path != ".":
            counts[found.folder.parent] = counts.get(found.folder.parent, 0) + 1
    if not counts:
        return config.root / ROOT_SKILLS
    return min(counts, key=lambda folder: (-counts[folder], str(folder)))


def pathspecs(base: str, scope: Sequence[str]) -> list[str]:
    """git pathspecs (relative to the repository's top) of the places ``scope`` names below ``base`` (the whole
    of ``base`` when it names none)."""
    specs = []
    for place in scope or (".",):
        written = place.strip("/")
        full = f"{base}/{written}" if base and written not in ("", ".") else (base or written)
        if any(c in written for c in "*?["):
            specs.append(f":(glob){full}/**")
        else:
            specs.append(f"{full}/" if full not in ("", ".") else ".")
    return sorted(set(specs))


def is_skill_folder(path: str) -> bool:
    """Whether a folder holding SKILL.md at ``path`` (relative to the repository) is a skill folder, as discovery
    decides it: no dot folder, nothing below a ``_`` folder or a skipped one."""
    parts = path.split("/")
    return not parts[-1].startswith(".") and not any(p in SKIPPED or p.startswith("_") for p in parts)
