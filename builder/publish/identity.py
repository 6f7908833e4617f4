"""Which slug each skill folder of a build publishes under: ``core.slugs``' rule over the names the skills' SKILL.md
files give, with git history deciding which folder keeps a slug two of them ask for.

A build assigns slugs twice. Before its workers run it guesses each skill's name (the one the last build read
from the same folder, else the folder's name) so that every worker writes under a slug no other one writes under;
once the workers have read each SKILL.md, the names they found decide, and a skill whose guess was wrong is built
again under its slug (``Identities.settle``). A registry whose skills are named as their folders are builds once.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.config import RegistryConfig
from ..core.discovery import SKILL_FILES, FoundSkill, group_of
from ..core.frontmatter import parse_skill_md
from ..core.slugs import NOT_YET, SlugClaim, assign_slugs, base_slug
from .git_objects import GitObjects
from .history_walk import GitHistory, Snapshot


class _SnapshotNames:
    """The ``name`` a snapshot's SKILL.md declares, each blob read from git once (only for the few skills whose
    slug is contended, or gone from the work tree)."""

    def __init__(self, git: GitHistory, config: RegistryConfig) -> None:
        self.git = git
        self.config = config
        self.objects: GitObjects | None = None
        self.names: dict[str, object] = {}

    def of(self, snap: Snapshot) -> object:
        oid = next((o for name in SKILL_FILES for p, _, o in snap.entries if p == name), None)
        if oid is None or self.git.top is None:
            return None
        if oid not in self.names:
            if self.objects is None:
                self.objects = GitObjects(self.git.top)
            name: object = None
            if self.objects.size(oid) <= self.config.limits.max_file_bytes:
                parsed = parse_skill_md(self.objects.read(oid), "SKILL.md",
                                        max_frontmatter_bytes=self.config.limits.max_frontmatter_bytes)
                name = parsed.frontmatter.data.get("name") if parsed.frontmatter is not None else None
            self.names[oid] = name
        return self.names[oid]

    def close(self) -> None:
        if self.objects is not None:
            self.objects.close()


def _folder_name(path: str, root: str) -> str:
    return posixpath.basename(path) if path != "." else root


@dataclass(frozen=True)
class Identities:
    """A build's slugs: each present skill's by its path, each gone skill's (one git history still publishes)."""

    slugs: Mapping[str, str]  # repository path -> slug

    def path_of(self) -> dict[str, str]:
        return {slug: path for path, slug in self.slugs.items()}


def assign(found: Sequence[FoundSkill], declared: Mapping[str, object], gone: Sequence[str], git: GitHistory,
           config: RegistryConfig) -> Identities:
    """Slugs for the skills ``found`` (their SKILL.md names in ``declared``, by path; a missing one is guessed
    from the folder's name) and for those ``gone`` from the work tree (named by their last committed SKILL.md)."""
    names = _SnapshotNames(git, config)
    root = config.root.name
    try:
        claims = [SlugClaim(s.path, s.group, base_slug(declared.get(s.path), s.name)) for s in found]
        for path in gone:
            snaps = git.of(path)
            claims.append(SlugClaim(path, group_of(path), base_slug(names.of(snaps[-1]) if snaps else None,
                                                                    _folder_name(path, root))))

        def since(claim: SlugClaim) -> int:
            """The first commit at which the folder's SKILL.md asked for the slug it asks for now."""
            folder = _folder_name(claim.path, root)
            for snap in git.of(claim.path):
                if base_slug(names.of(snap), folder) == claim.base:
                    return snap.position
            return NOT_YET

        return Identities(assign_slugs(claims, since))
    finally:
        names.close()
