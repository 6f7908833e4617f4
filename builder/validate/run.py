"""Validating many skills at once: the skill folders below the given paths, checked in worker processes, their
findings streamed in report order with the registry-wide name rules applied as they come."""

from __future__ import annotations

import bisect
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ..core.config import PROFILES, RegistryConfig, merge_flags
from ..core.diagnostics import RULES, Diagnostic
from ..core.discovery import Discovery, FoundSkill, Refusal, discover_paths, refusal_finding, registry_skills
from ..core.errors import UsageError
from ..core.git_ignored import without_ignored
from ..core.loader import display_path, load_skill
from ..core.model import Skill
from ..core.workers import default_jobs, frozen_with, iter_parallel
from .checks import check_skill
from .names import NameKey, RegistryNames
from .report import Tally, ValidationReport

_SETTINGS: tuple[RegistryConfig, str, bool] | None = None


class SkillJudge(Protocol):
    """What judges each skill's findings once all of them are in (``baseline.BaselineCheck``), and adds its own
    findings when the run ends."""

    def apply(self, folder: str | Path, findings: Sequence[Diagnostic], *, whole: bool = True
              ) -> list[Diagnostic]: ...

    def closing(self) -> list[Diagnostic]: ...


def _init_worker(config: RegistryConfig, profile: str, keep_skills: bool = False) -> None:
    global _SETTINGS
    _SETTINGS = (config, profile, keep_skills)


_Checked = tuple[Skill | None, list[Diagnostic], NameKey, str]
_Folder = tuple[str, str, tuple[str, ...]]  # a skill folder, its repository path, the paths in it git ignores


def _check_folders(folders: list[_Folder]) -> list[_Checked]:
    """Load and check a few skills (folder, repository path): their findings and name keys, and (when asked) each
    skill without its file bytes (they stay in the worker)."""
    assert _SETTINGS is not None
    config, profile, keep_skills = _SETTINGS
    out: list[_Checked] = []
    for folder, key, ignored in folders:
        skill, found = validate_folder(Path(folder), config, profile, key=key, ignored=ignored)
        out.append((replace(skill, files=()) if keep_skills else None, found, NameKey.of(skill, key), folder))
    return out


def validate_folder(folder: Path, config: RegistryConfig, profile: str, *, name: str | None = None,
                    key: str | None = None, ignored: Collection[str] = ()) -> tuple[Skill, list[Diagnostic]]:
    """Load one skill folder and check it: what loading found, then what the rules found. ``name``: the slug it
    publishes as (the folder's name by default); ``key``: what its findings name it by (its repository path);
    ``ignored``: paths below the folder that git ignores (``load_skill``)."""
    loaded = load_skill(folder, config, name, ignored=ignored)
    found = [*loaded.diagnostics, *check_skill(loaded.skill, config, profile)]
    if key is not None:
        found = [frozen_with(d, skill=key) for d in found]
    return loaded.skill, found


# Skills sent to a worker at once: few enough that results stream, enough that sending them costs little. Near
# the end of a run chunks shrink to a quarter of what is left per worker, down to _LAST_CHUNK, so that no worker
# is still busy with a whole chunk while the others have nothing left to do.
_CHUNK = 32
_LAST_CHUNK = 4


def _chunks(folders: list[_Folder], jobs: int) -> list[list[_Folder]]:
    chunks: list[list[_Folder]] = []
    start, count = 0, len(folders)
    while start < count:
        size = _CHUNK if jobs <= 1 else max(_LAST_CHUNK, min(_CHUNK, (count - start) // (jobs * 4)))
        chunks.append(folders[start:start + size])
        start += size
    return chunks


class ValidationRun:
    """``validate_paths`` as a stream: iterating yields every finding in report order (file, line, column,
    code, message) while the skills are still being checked, so memory holds a few skills' findings and one
    compact key per skill, whatever the number of skills. ``tally`` is complete once iteration ends."""

    def __init__(self, paths: Sequence[Path], config: RegistryConfig, profile: str | None = None,
                 jobs: int | None = None, *, keep_skills: bool = False, baseline: SkillJudge | None = None
                 ) -> None:
        config = merge_flags(config, profile=profile)
        self.profile = config.profile
        if self.profile not in PROFILES:
            raise UsageError(f"unknown profile {self.profile!r}; choose one of {', '.join(PROFILES)}")
        self.config, self.jobs, self.keep_skills, self.baseline = config, jobs, keep_skills, baseline
        self.tally = Tally()
        self.skills: list[Skill] = []  # filled only with keep_skills
        self._early: list[Diagnostic] = []
        found = _named_skills(paths, config, self._early) if paths else registry_skills(config).require()
        self._early.extend(refusal_finding(r) for r in found.refused)
        found, ignored = without_ignored(config.root, found)  # what git ignores is checked no more than published
        # (folder, repository path, ignored paths) as strings, not Paths: a tenth of the memory for a large registry
        self.folders = [(os.fspath(s.folder), s.path, ignored.get(s.path, ())) for s in found.skills]

    def __iter__(self) -> Iterator[Diagnostic]:
        jobs = self.jobs if self.jobs is not None else default_jobs(len(self.folders))
        chunks = _chunks(self.folders, jobs)
        bounds: list[str | None] | None = None
        pending = list(self._early)  # in the order found; a stable sort keeps that order among equal keys
        names = RegistryNames()
        for k, checked in enumerate(iter_parallel(_check_folders, chunks, initializer=_init_worker,
                                                  initargs=(self.config, self.profile, self.keep_skills), jobs=jobs)):
            if bounds is None:  # worked out while the workers check the chunks already sent, not before
                bounds = _bounds(chunks)
            for skill, found, key, folder in checked:
                self.tally.skills += 1
                if skill is not None:
                    self.skills.append(skill)
                found.extend(names.add(key))
                pending.extend(found if self.baseline is None else self.baseline.apply(folder, found))
            if not pending:
                continue
            pending.sort(key=Diagnostic.sort_key)
            limit = bounds[k]
            ready = len(pending) if limit is None else bisect.bisect_left(pending, limit, key=_file_of)
            for d in pending[:ready]:
                self.tally.count(d)
                yield d
            del pending[:ready]
        if self.baseline is not None:
            pending.extend(self.baseline.closing())
        for d in sorted(pending, key=Diagnostic.sort_key):  # findings of no skill (or the baseline's)
            self.tally.count(d)
            yield d


def _real_path(folder: str, parents: dict[str, str]) -> str:
    """``os.path.realpath(folder)``, resolving each parent once (``parents`` keeps them) for all its skill
    folders: a folder that is not a link, named without dots, is its real parent joined with its name."""
    parent, name = os.path.split(folder)
    if parent and name and name not in (".", "..") and not os.path.islink(folder):
        real = parents.get(parent)
        if real is None:
            real = parents[parent] = os.path.realpath(parent)
        return os.path.join(real, name)
    return os.path.realpath(folder)


def _named_skills(paths: Sequence[Path], config: RegistryConfig, early: list[Diagnostic]) -> Discovery:
    """The skills in the folders a user named, each once, in the order named (the first of two skills of one
    name is the one SK601 leaves alone); SK604 for a folder holding none."""
    skills: dict[str, FoundSkill] = {}
    parents: dict[str, str] = {}
    refused: list[Refusal] = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise UsageError(f"{display_path(path)}: no such file or folder")
        if path.is_file() and path.name in ("SKILL.md", "skill.md"):
            path = path.parent
        if not path.is_dir():
            raise UsageError(f"{display_path(path)}: not a folder")
        if not os.access(path, os.R_OK | os.X_OK):
            raise UsageError(f"{display_path(path)}: cannot be read (Permission denied)")
        found = discover_paths([path], config.root)
        if not found.skills and not found.refused:
            early.append(RULES["SK604"].at(display_path(path), 0, f"no skill folders in {display_path(path)}"))
        for skill in found.skills:
            skills.setdefault(_real_path(os.fspath(skill.folder), parents), skill)
        refused.extend(found.refused)
    return Discovery(config.root, tuple(skills.values()), (), tuple(refused), True)  # in the order named


def _bounds(chunks: list[list[_Folder]]) -> list[str | None]:
    """When each chunk's findings may be written: ``bounds[k]`` is the least folder path of the chunks after
    chunk ``k`` (None after the last).

    A finding can be written once no skill still to come can report one that sorts before it. Every finding of a
    skill names its folder or a path below it, so none sorts before the folder's own path: the least path among
    the skills still to come bounds them all. Findings are written after each chunk of skills.
    """
    bounds: list[str | None] = [None] * len(chunks)
    for k in range(len(chunks) - 1, 0, -1):
        least = min(display_path(Path(folder)) for folder, _, _ in chunks[k])
        later = bounds[k]
        bounds[k - 1] = least if later is None or least < later else later
    return bounds


def _file_of(diagnostic: Diagnostic) -> str:
    return diagnostic.file


def validate_paths(paths: Sequence[Path], config: RegistryConfig, profile: str | None = None,
                   jobs: int | None = None) -> ValidationReport:
    """Load every skill under ``paths`` (skill folders or folders of skills) and check each and all together.

    The report's skills carry no file bytes; ``ValidationRun`` streams the findings without holding the skills.
    """
    run = ValidationRun(paths, config, profile, jobs, keep_skills=True)
    diagnostics = tuple(run)
    return ValidationReport(tuple(run.skills), diagnostics)
