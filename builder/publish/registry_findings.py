"""The build's registry-wide findings (unique names and the like, ``validate.names``) over every skill's outcome,
made only when a name, folder or SKILL.md changed; otherwise read back from the build record."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from typing import overload

from ..core.diagnostics import Diagnostic
from ..core.model import Skill
from ..validate.names import check_registry
from .manifest import StoredManifest
from .outcome import SkillOutcome, findings_from_json, findings_json


class Heads(Sequence[Skill]):
    """What the registry-wide rules read of each outcome (``SkillOutcome.head``), all made on first use: a
    rebuild that keeps the registry-wide findings as the manifest recorded them only counts them."""

    def __init__(self, outcomes: Sequence[SkillOutcome], folders: Sequence[Path]) -> None:
        self._outcomes = outcomes
        self._folders = folders
        self._heads: tuple[Skill, ...] | None = None

    def _made(self) -> tuple[Skill, ...]:
        if self._heads is None:
            paths = {str(folder): folder for folder in self._folders}  # (str of a Path is kept once computed)
            self._heads = tuple(o.head(paths.get(o.folder)) for o in self._outcomes)
        return self._heads

    def __len__(self) -> int:
        return len(self._outcomes)

    @overload
    def __getitem__(self, index: int) -> Skill: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Skill]: ...

    def __getitem__(self, index: int | slice) -> Skill | Sequence[Skill]:
        return self._made()[index]

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._made())


def registry_findings(outcomes: Sequence[SkillOutcome], heads: Sequence[Skill], keys: Sequence[str],
                       stored: StoredManifest | None) -> tuple[list[Diagnostic], dict[str, str]]:
    """``check_registry`` over the heads, or its findings as the manifest keeps them when no skill's name,
    folder or SKILL.md changed (nor the folder paths are shown from); with the build record's entries of them."""
    key = hashlib.sha1("\n".join([os.getcwd(), *(f"{o.name}\0{o.folder}\0{o.skill_md}\0{o.declared}\0{o.name_line}"
                                                 for o in outcomes)]).encode("utf-8", "surrogateescape")).hexdigest()
    if stored is not None and stored.meta.get("registry") == key and "registry_findings" in stored.meta:
        with suppress(ValueError, KeyError, TypeError):
            found = list(findings_from_json(stored.meta["registry_findings"]))
            return found, {"registry": key, "registry_findings": stored.meta["registry_findings"]}
    found = check_registry(heads, keys)
    return found, {"registry": key, "registry_findings": findings_json(found)}
