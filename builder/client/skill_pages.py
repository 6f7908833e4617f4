"""The published registry read as the MCP Skills extension lists it: pages of skills, each with its frontmatter and
complete file list, and the verified bytes of one skill's files, read lazily.

A page is one shard of the skill manifest (api/v1/skills-manifest.json and the shard it names, checked against the
sha256 the manifest gives it). A registry published before the manifest existed is paged from index.json, with one
detail document per skill. File bytes always come from the skill's bundle, verified against the published digest
and then against the manifest row the listing showed. At most a few shards and skills are held in memory.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.errors import ClientError
from ..core.limits import MCP_MAX_FILES, MCP_MAX_SKILL_BYTES
from ..core.model import SkillFile
from ..core.urls import INDEX_PATH, SKILLS_MANIFEST_PATH
from .documents import DIGEST, NAME, SHA256, parse_json, value_limit
from .locations import check_site_path
from .registry import Registry
from .transport import NotFound

FALLBACK_PAGE = 1500  # skills a page when the registry publishes no manifest (as many as a manifest shard)
KEPT_SHARDS = 2
KEPT_SKILLS = 4

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class ManifestFile:
    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class SkillRow:
    """One skill as a listing shows it: what its manifest row (or detail document) says."""

    name: str
    digest: str
    skill_md: str
    frontmatter: Mapping[str, Any]
    files: tuple[ManifestFile, ...]

    @property
    def servable(self) -> bool:
        return len(self.files) <= MCP_MAX_FILES and sum(f.size for f in self.files) <= MCP_MAX_SKILL_BYTES


def skill_row(row: object, where: str) -> SkillRow:
    """A manifest row or detail document, checked: the registry is as untrusted as any download."""
    if not isinstance(row, Mapping):
        raise ClientError(f"{where}: a skill row is not a JSON object")
    name, digest, skill_md, front = row.get("name"), row.get("digest"), row.get("skill_md"), row.get("frontmatter")
    files = row.get("files")
    if not (isinstance(name, str) and NAME.match(name) and len(name) <= 64):
        raise ClientError(f"{where}: {name!r} is not a skill name")
    if not (isinstance(digest, str) and DIGEST.match(digest)) or not isinstance(front, Mapping) \
            or not isinstance(files, list) or skill_md not in ("SKILL.md", "skill.md"):
        raise ClientError(f"{where}: the row of {name} lacks its digest, frontmatter, SKILL.md or files")
    listed = []
    for f in files:
        if not (isinstance(f, Mapping) and isinstance(f.get("sha256"), str) and SHA256.match(f["sha256"])
                and isinstance(f.get("size"), int) and f["size"] >= 0):
            raise ClientError(f"{where}: a file of {name} has no sha256 or size")
        listed.append(ManifestFile(check_site_path(f.get("path"), "skill file"), f["sha256"], f["size"]))
    if skill_md not in {f.path for f in listed}:
        raise ClientError(f"{where}: {name} lists no {skill_md}")
    return SkillRow(name, digest, str(skill_md), dict(front), tuple(listed))


class _Kept(OrderedDict[K, V]):
    """The last few values used, so paging and reading hold a bounded amount of the registry."""

    def __init__(self, most: int) -> None:
        super().__init__()
        self.most = most

    def keep(self, key: K, make: Callable[[], V]) -> V:
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = self[key] = make()
        while len(self) > self.most:
            self.popitem(last=False)
        return value


class SkillPages:
    """Pages of skills and their verified files, from one registry."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._shards: _Kept[str, list[SkillRow]] = _Kept(KEPT_SHARDS)
        self._skills: _Kept[tuple[str, str], dict[str, SkillFile]] = _Kept(KEPT_SKILLS)

    # -- the listing -------------------------------------------------------------------------------------------

    def _manifest(self) -> dict[str, Any] | None:
        try:
            doc = self.registry.document(SKILLS_MANIFEST_PATH)
        except NotFound:
            return None
        shards = doc.get("shards")
        if not isinstance(shards, list) or not all(
                isinstance(s, dict) and isinstance(s.get("sha256"), str) and SHA256.match(s["sha256"])
                and isinstance(s.get("size"), int) and isinstance(s.get("first"), str) for s in shards):
            raise ClientError(f"{self.registry.url}{SKILLS_MANIFEST_PATH} does not list its shards")
        return doc

    def listing(self) -> tuple[str, int]:
        """(what identifies this listing, so a cursor from another one is refused; how many pages it has)."""
        manifest = self._manifest()
        if manifest is not None:
            token = "".join(s["sha256"][:12] for s in manifest["shards"])
            return hashlib.sha256(token.encode()).hexdigest()[:16], len(manifest["shards"])
        names = self._names()
        token = hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]
        return token, max(1, -(-len(names) // FALLBACK_PAGE)) if names else 0

    def page(self, number: int) -> list[SkillRow]:
        manifest = self._manifest()
        if manifest is not None:
            return self._shard(manifest["shards"][number])
        names = self._names()[number * FALLBACK_PAGE:(number + 1) * FALLBACK_PAGE]
        with ThreadPoolExecutor(max_workers=8) as pool:
            return list(pool.map(self._detail_row, names))

    def row(self, name: str) -> SkillRow | None:
        """The skill ``name`` as the listing shows it, or None when the registry does not publish it."""
        if not NAME.match(name):
            return None
        manifest = self._manifest()
        if manifest is None:
            return self._detail_row(name) if name in set(self._names()) else None
        shards = manifest["shards"]
        at = bisect_right([s["first"] for s in shards], name) - 1
        if at < 0:
            return None
        return next((row for row in self._shard(shards[at]) if row.name == name), None)

    def _shard(self, shard: Mapping[str, Any]) -> list[SkillRow]:
        path = check_site_path(shard.get("path"), "manifest shard")

        def load() -> list[SkillRow]:
            where = f"{self.registry.url}{path}"
            doc = parse_json(self.registry.artifact(path, shard["sha256"], shard["size"]), where, value_limit(path))
            rows = doc.get("skills") if isinstance(doc, dict) else None
            if not isinstance(rows, list):
                raise ClientError(f"{where} lists no skills")
            return [skill_row(row, where) for row in rows]

        return self._shards.keep(str(shard["sha256"]), load)

    def _names(self) -> list[str]:
        return sorted(str(s.get("name")) for s in self.registry.index()["skills"] if isinstance(s, dict))

    def _detail_row(self, name: str) -> SkillRow:
        return skill_row(self.registry.detail(name), f"{self.registry.url}{INDEX_PATH}")

    # -- the files ---------------------------------------------------------------------------------------------

    def files(self, row: SkillRow) -> dict[str, SkillFile]:
        """Every file of the skill ``row`` shows, from its bundle, verified: the bundle against the published
        sha256 and digest, each file against the row. Anything else is refused, never served."""
        from .install import fetch_skill

        def load() -> dict[str, SkillFile]:
            try:
                fetched = fetch_skill(self.registry, row.name)
            except NotFound:
                raise
            except ClientError as exc:  # what install says, less its word on installing
                raise ClientError(f"refusing to serve {row.name}: "
                                  + str(exc).removeprefix(f"{row.name}: ").replace("; nothing was installed", "")
                                  ) from None
            files = {f.path: f for f in fetched.files}
            if fetched.digest != row.digest or {p: (f.sha256, f.size) for p, f in files.items()} != \
                    {f.path: (f.sha256, f.size) for f in row.files}:
                raise ClientError(f"{row.name} changed since it was listed; list the skills again")
            return files

        return self._skills.keep((row.name, row.digest), load)
