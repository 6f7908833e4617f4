"""The published documents, as plain data: slim index, per-skill detail, discovery indexes.

Paths are relative to the site root; ``url`` fields add the registry's base URL when one is set, so a
mirror can serve the same files and clients resolve paths against the registry they were given.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from ..core.config import Publish, RegistryConfig
from ..core.content_types import kept_to_archives
from ..core.diagnostics import Diagnostic
from ..core.loader import display_path
from ..core.model import Skill, SkillFile
from ..core.urls import (
    API_ROOT,
    API_VERSION,
    INDEX_PATH,
    WELL_KNOWN_V2,
    detail_path,
    page_path,
    raw_copy_path,
    versions_path,
)
from ..site.render import resolve_link
from ..validate.body import found_links
from .permissions import permissions
from .provenance import Provenance, Source

DISCOVERY_V2_SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"


def bundle_stem(skill: Skill) -> str:
    return f"{API_ROOT}/bundles/{skill.name}/{skill.name}-{skill.digest.removeprefix('sha256:')[:12]}"


def linked_files(skill: Skill) -> frozenset[str]:
    """The skill's files that its SKILL.md body links to or embeds, resolved as the website resolves them (the
    validator's CommonMark link finder, then the page renderer's own rule), so every body link has its file. The
    links are those the validator found when it has just checked this body (``found_links``): no second parse."""
    paths = {f.path for f in skill.files}
    found: set[str] = set()
    for link in found_links(skill.body):
        target = resolve_link(link.href, paths, "\0")  # a prefix no URL it keeps (http, mailto, #id) starts with
        if target is not None and target.startswith("\0"):
            found.add(unquote(target[1:]))
    return frozenset(found)


def archive_only(skill: Skill) -> frozenset[str]:
    """The paths of ``skill`` a browser would run as a page if the site served them (``kept_to_archives``): they
    travel in its archives only, never as raw copies on the registry's origin."""
    return frozenset(f.path for f in skill.files if kept_to_archives(f.path, f.data) is not None)


def raw_copies(skill: Skill, publish: Publish, kept: frozenset[str] | None = None) -> dict[str, str]:
    """Each path of ``skill`` that gets a raw copy, and where that one copy is published: under
    .well-known/skills/<name>/ when discovery v0.1 publishes the skill's files (then every file, which that index
    needs), else under api/v1/skills/<name>/files/ (``publish.raw_files``); never a file kept to archives
    (``kept``: the skill's ``archive_only`` paths, when the caller has them)."""
    if kept is None:
        kept = archive_only(skill)
    in_discovery = publish.well_known_skills and not kept  # as discovery_v1_entry decides
    if in_discovery or publish.raw_files == "all":
        chosen = [f.path for f in skill.files if f.path not in kept]
    else:
        chosen = sorted(linked_files(skill) - kept)
    return {path: raw_copy_path(skill.name, path, in_discovery=in_discovery) for path in chosen}


def url_of(config: RegistryConfig | str, path: str) -> str:
    base = config if isinstance(config, str) else config.base_url
    quoted = quote(path, safe="/")
    return (base.rstrip("/") + "/" + quoted) if base else quoted


@dataclass(frozen=True)
class Artifact:
    """A written file that a document points to, with what a client needs to verify it."""

    path: str
    sha256: str
    size: int

    def to_dict(self, config: RegistryConfig) -> dict[str, Any]:
        return {"path": self.path, "url": url_of(config, self.path), "sha256": self.sha256, "size": self.size}


def json_safe(value: Any) -> Any:
    """YAML can hold dates, sets and bytes; JSON cannot. Convert them the same way every time.

    Iterative, so no nesting depth can exhaust the stack (validation bounds the depth anyway).
    """
    root: list[Any] = []
    # (value to convert, container to add the result to, key in that container or None to append)
    todo: list[tuple[Any, Any, Any]] = [(value, root, None)]
    sets: list[list[Any]] = []
    while todo:
        item, into, key = todo.pop()
        if isinstance(item, dict):
            result: Any = {}
            todo.extend((v, result, str(k)) for k, v in reversed(list(item.items())))
        elif isinstance(item, (list, tuple, set, frozenset)):
            result = [None] * len(item)
            todo.extend((v, result, i) for i, v in reversed(list(enumerate(item))))
            if isinstance(item, (set, frozenset)):
                sets.append(result)
        else:
            result = _json_scalar(item)
        if key is None:
            into.append(result)
        else:
            into[key] = result
    for converted in reversed(sets):  # innermost last-made first, so a set's members are final when it is sorted
        converted.sort()
    return root[0]


def _json_scalar(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value


@dataclass(frozen=True)
class Conformance:
    """How a published skill stands to the open standard: whether it meets it, the findings it was published
    with (each departure from the standard among them) and the fields it has outside the standard."""

    meets_standard: bool = True
    findings: tuple[Diagnostic, ...] = ()
    outside: tuple[str, ...] = ()

    def findings_json(self, folder: str) -> list[dict[str, Any]]:
        """The findings for the detail document, each file relative to the skill's folder (``folder`` as the
        findings name it), so the document is the same wherever the build ran."""
        return [{"code": d.code, "severity": d.severity.value, "source": d.source, "file": _in_folder(d.file, folder),
                 "line": d.line, "column": d.column, "message": d.message, "hint": d.hint} for d in self.findings]


def _in_folder(file: str, folder: str) -> str:
    if file == folder:
        return "."
    return file[len(folder) + 1:] if file.startswith(folder + "/") else file.rpartition("/")[2]


def declared_name(skill: Skill) -> dict[str, str]:
    """``{"declared_name": ...}`` when the skill's own name is not the slug it publishes under, else nothing:
    registries whose skills are named as their slugs publish the same bytes as before."""
    own = skill.field("name")
    return {"declared_name": own} if isinstance(own, str) and own.strip() and own != skill.name else {}


def index_entry(skill: Skill, prov: Provenance, conformance: Conformance = Conformance()) -> dict[str, Any]:
    return {
        **declared_name(skill),
        "name": skill.name,
        "description": skill.description,
        "category": skill.category,
        "tags": list(skill.tags),
        "version": skill.version,
        "digest": skill.digest,
        "updated": prov.updated,
        "files": len(skill.files),
        "size": skill.size,
        "meets_standard": conformance.meets_standard,
    }


def index_document(config: RegistryConfig, source: Source, entries: list[dict[str, Any]],
                   collections: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """``collections``: listed only when there are some, so a registry without any publishes what it did."""
    return {
        **({"collections": [dict(c) for c in collections]} if collections else {}),
        "api_version": API_VERSION,
        "count": len(entries),
        "registry": {"title": config.title, "url": config.base_url, "description": config.description},
        "source": {"repository": config.repository or None, "commit": source.commit, "time": source.time},
        "categories": [{"slug": c.slug, "title": c.title, "description": c.description} for c in config.categories],
        "skills": sorted(entries, key=lambda e: e["name"]),
    }


def _source_links(config: RegistryConfig, prov: Provenance, source_path: str) -> dict[str, Any]:
    repo = config.repository.rstrip("/")
    ref = prov.commit
    return {
        "source_url": f"{repo}/tree/{ref}/{quote(source_path)}" if repo and ref else None,
        "history_url": f"{repo}/commits/{ref}/{quote(source_path)}" if repo and ref else None,
    }


def _file_entry(config: RegistryConfig, f: SkillFile, raw: Mapping[str, str], kept: frozenset[str]) -> dict[str, Any]:
    """One ``files[]`` row; ``raw`` (where its one raw copy is) and ``url`` only for a file published raw, so nothing
    points at a missing copy; ``archive_only`` for one kept to the archives."""
    entry: dict[str, Any] = {"path": f.path, "size": f.size, "sha256": f.sha256, "executable": f.executable,
                             "type": "text" if f.is_text else "binary"}
    if f.path in kept:
        entry["archive_only"] = True
    elif f.path in raw:
        entry["raw"] = raw[f.path]
        entry["url"] = url_of(config, entry["raw"])
    return entry


def detail_document(config: RegistryConfig, source: Source, skill: Skill, prov: Provenance,
                    zip_artifact: Artifact, json_artifact: Artifact | None,
                    raw: Mapping[str, str] | None = None, conformance: Conformance = Conformance(),
                    kept: frozenset[str] | None = None) -> dict[str, Any]:
    """``raw``: each path published raw and where (``raw_copies`` of the registry's settings when None);
    ``json_artifact`` None: no JSON bundle; ``kept``: the skill's ``archive_only`` paths, when the caller has them."""
    frontmatter = json_safe(dict(skill.frontmatter.data)) if skill.frontmatter else {}
    if kept is None:
        kept = archive_only(skill)
    if raw is None:
        raw = raw_copies(skill, config.publish, kept)
    body = skill.body
    source_path = _source_path(config, source, skill)
    return {
        "api_version": API_VERSION,
        **declared_name(skill),
        "name": skill.name,
        "description": skill.description,
        "category": skill.category,
        "tags": list(skill.tags),
        "version": skill.version,
        "license": skill.field("license") if isinstance(skill.field("license"), str) else None,
        "frontmatter": frontmatter,
        "body": {"line": skill.body_line, "length": len(body), "lines": body.count("\n") + (not body.endswith("\n")),
                 "words": len(body.split())},
        "skill_md": skill.skill_md,
        "files": [_file_entry(config, f, raw, kept) for f in skill.files],
        "size": skill.size,
        "digest": skill.digest,
        "bundles": {"zip": zip_artifact.to_dict(config),
                    **({"json": json_artifact.to_dict(config)} if json_artifact is not None else {})},
        "permissions": permissions(skill).to_dict(),
        "meets_standard": conformance.meets_standard,
        "fields_outside_standard": list(conformance.outside),
        "findings": conformance.findings_json(display_path(skill.folder)),
        "provenance": {
            "created": prov.created,
            "updated": prov.updated,
            "authors": list(prov.authors),
            "commit": prov.commit,
            "source_path": source_path,
            **_source_links(config, prov, source_path),
        },
        "links": {
            "page": url_of(config, page_path(skill.name)),
            "detail": url_of(config, detail_path(skill.name)),
            "index": url_of(config, INDEX_PATH),
            "versions": url_of(config, versions_path(skill.name)),
        },
    }


def _source_path(config: RegistryConfig, source: Source, skill: Skill) -> str:
    """The skill's folder in the repository: its real path below the git top, else below the registry's real root
    (one ``realpath`` of the folder, and of the root only outside git), else where skills_dir puts it."""
    folder = os.path.realpath(skill.folder)
    for top in (source.top, config.root):
        if top is not None:
            real = str(top) if top is source.top else os.path.realpath(top)
            if folder == real or folder.startswith(real.rstrip("/") + "/"):
                return Path(folder).relative_to(real).as_posix()
    return f"{config.skills_dir}/{skill.name}"


def discovery_v1_entry(skill: Skill, kept: frozenset[str] | None = None) -> dict[str, Any] | None:
    """The skill's entry of the discovery v0.1 index, or None when it holds a file kept to archives: that index's
    clients fetch every listed file raw, so such a skill is offered in v0.2 (an archive) only (``kept``: its
    ``archive_only`` paths, when the caller has them)."""
    if archive_only(skill) if kept is None else kept:
        return None
    return {"name": skill.name, "description": skill.description, "files": [f.path for f in skill.files]}


def discovery_v2_entry(skill: Skill, zip_artifact: Artifact, index_path: str = f"{WELL_KNOWN_V2}/index.json"
                       ) -> dict[str, Any]:
    # v0.2 names one artifact per skill; its digest is the SHA-256 of that artifact's bytes.
    # The URL is relative to the index at ``index_path``, so the site works under any base path.
    up = "../" * index_path.count("/")
    return {"name": skill.name, "type": "archive", "description": skill.description,
            "url": up + quote(zip_artifact.path, safe="/"), "digest": "sha256:" + zip_artifact.sha256}


def discovery_v1_document(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"skills": sorted(entries, key=lambda e: e["name"])}


def discovery_v2_document(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"$schema": DISCOVERY_V2_SCHEMA, "skills": sorted(entries, key=lambda e: e["name"])}
