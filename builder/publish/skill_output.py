"""One skill's own output files, written into the staging folder by a worker process: its detail document,
bundles, raw and discovery copies, and every version its git history published (``versions.json``).

The worker reads each skill's SKILL.md once: the links the validator found choose the files published raw
(``raw_files: linked``), and with the website the worker renders the body for the skill's page into the output's
state (``site.bodies``), where the page workers read it; the parent never holds a body or its rendering."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.bundle import dumps, json_bundle, zip_bytes
from ..core.config import RegistryConfig
from ..core.diagnostics import Diagnostic, Severity
from ..core.model import Skill, sha256_hex
from ..core.search import search_entry
from ..core.urls import detail_path, head_path, scoped_discovery_path, versions_path
from ..core.workers import collect_as_usual
from ..signing.digests import DigestRecorder
from ..site.bodies import body_key, render_once
from ..validate.checks import departures
from ..validate.run import validate_folder
from .api import (
    Artifact,
    Conformance,
    archive_only,
    bundle_stem,
    detail_document,
    discovery_v1_entry,
    discovery_v2_document,
    discovery_v2_entry,
    index_entry,
    raw_copies,
)
from .bundlecache import BundleCache
from .folder_changes import signed, survey
from .git_objects import GitObjects
from .history import (
    GitHistory,
    Head,
    head_document,
    latest_of,
    skill_versions,
    version_of,
    versions_document,
)
from .outcome import LEFT_OUT, SkillOutcome
from .provenance import ProvenanceHistory
from .transaction import forget_made_folders, stage_file
from .worktree import WorkTree


@dataclass(frozen=True)
class SkillJob:
    """What every worker needs, sent once per process."""

    config: RegistryConfig  # with the command's flags merged in
    history: ProvenanceHistory
    tmp: Path  # the staging folder
    git: GitHistory
    cache: Path | None  # the bundle cache folder
    bodies: Path | None = None  # where the website's rendered bodies go (``site.bodies``); None: no website
    digests: bool = False  # write each skill's digests.json from the bytes staged (a signing build)
    work: WorkTree = field(default_factory=WorkTree)  # git's view: paths it ignores, folders' signatures


class _Stager:
    """Stages one skill's files below the staging folder; in a signing build, records each file's digest and
    stages the skill's digests.json last (``finish``)."""

    def __init__(self, job: SkillJob, name: str) -> None:
        self.tmp = job.tmp
        self.recorder = DigestRecorder(name) if job.digests else None

    def __call__(self, rel: str, data: bytes) -> Path:
        path = stage_file(self.tmp, rel, data)
        if self.recorder is not None:
            self.recorder.add(rel, data)
        return path

    def finish(self) -> tuple[int, str] | None:
        """Stage digests.json (a signing build); returns its length and sha256, which the signing stage signs
        without reading the file again (None: not a signing build)."""
        if self.recorder is None:
            return None
        rel, data = self.recorder.document()
        stage_file(self.tmp, rel, data)
        return len(data), sha256_hex(data)


_JOB: SkillJob | None = None
_OBJECTS: GitObjects | None = None  # this process's reader of git objects, started when first needed


def init_worker(job: SkillJob) -> None:
    global _JOB
    collect_as_usual()
    _JOB = job
    forget_made_folders()


def _objects(job: SkillJob) -> GitObjects | None:
    global _OBJECTS
    if _OBJECTS is None and job.git.top is not None:
        _OBJECTS = GitObjects(job.git.top)
    return _OBJECTS


def close_objects() -> None:
    """Stop the reader of git objects this process started when it built skills itself."""
    global _OBJECTS
    if _OBJECTS is not None:
        _OBJECTS.close()
        _OBJECTS = None


def _publish_versions(job: SkillJob, stage: _Stager, name: str, path: str, head: Head | None,
                      updated: str | None = None) -> tuple[tuple[str, ...], str | None, int]:
    """Write ``versions.json``, ``head.json`` and the zip of every old version that keeps its bytes; returns the
    digests, the latest one and the number of zips packed from git (the others came from the bundle cache)."""
    cache = BundleCache(job.cache)
    versions, packed = skill_versions(name, path, job.git.of(path), head, _objects(job), cache, job.config,
                                      job.config.profile, stage)
    latest = latest_of(versions, head.digest if head else None)
    stage(versions_path(name), dumps(versions_document(name, job.git.kind, latest, versions, job.git.start)))
    stage(head_path(name), dumps(head_document(name, head, latest, updated)))
    return tuple(v.digest for v in versions), latest, packed


def _build_retired(name: str, path: str) -> SkillOutcome:
    """A skill gone from the work tree: its history stays published (versions.json and the zips), nothing else."""
    job = _JOB
    assert job is not None
    stage = _Stager(job, name)
    digests, latest, packed = _publish_versions(job, stage, name, path, None)
    return SkillOutcome.versions_only(name, job.git.fingerprint(path), digests, latest, packed=packed,
                                      signed=stage.finish())


def build_task(task: tuple[str, str, Path | None]) -> SkillOutcome:
    """Build one skill: (its slug, its path in the repository, its folder; None for a skill gone from it)."""
    name, path, folder = task
    return (_build_one(name, path, folder) if folder is not None else _build_retired(name, path)).encoded()




def skill_key(config: RegistryConfig, history: ProvenanceHistory, path: str, digest: str, folder: str,
               skill_md: str) -> str:
    """Everything a skill's own output files depend on, beyond the build settings; equal keys, identical files."""
    prov = history.of(path)
    material = "\0".join([digest, folder, skill_md, str(history.source.top), str(prov.created), str(prov.updated),
                          str(prov.commit), "\x1f".join(prov.authors)])
    return hashlib.sha1(material.encode("utf-8", "surrogateescape")).hexdigest()



def _render_body(job: SkillJob, folder: Path, skill: Skill, raw: Mapping[str, str]) -> None:
    """The body as the skill's page shows it, rendered here once (the page workers read it back)."""
    skill_md = next(f for f in skill.files if f.path == skill.skill_md)
    key = body_key(skill.name, skill_md.sha256, raw, job.config.limits.max_frontmatter_bytes)
    render_once(folder, skill.name, key, skill.body, raw)


def _build_one(name: str, path: str, folder: Path) -> SkillOutcome:
    job = _JOB
    assert job is not None
    ignored = job.work.ignored.get(path, ())
    from_git = job.work.signatures.get(path)
    sig, entries = (from_git, "") if from_git is not None else survey(folder)
    skill, found = validate_folder(folder, job.config, job.config.profile, name=name, key=path, ignored=ignored)
    diagnostics = tuple(found)
    declared = skill.field("name")
    checked = SkillOutcome(name=skill.name, folder=str(folder), skill_md=skill.skill_md,
                       declared=declared if isinstance(declared, str) else None,
                       name_line=skill.frontmatter.line_of("name") if skill.frontmatter else 0,
                       diagnostics=diagnostics, signature=sig if from_git else signed(sig, ignored), entries=entries,
                       history=job.git.fingerprint(path))  # without it an invalid skill is never reused
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return checked
    prov = job.history.of(path)
    publish = job.config.publish
    stage = _Stager(job, skill.name)
    stem = bundle_stem(skill)
    zipped = zip_bytes(skill.files)
    zip_art = Artifact(stem + ".zip", sha256_hex(zipped), len(zipped))
    stage(zip_art.path, zipped)
    json_art: Artifact | None = None
    if publish.json_bundles:
        bundle = dumps(json_bundle(skill))
        json_art = Artifact(stem + ".json", sha256_hex(bundle), len(bundle))
        stage(json_art.path, bundle)
    kept = archive_only(skill)  # sniffs every file's bytes: once a skill
    raw = raw_copies(skill, publish, kept)
    if job.bodies is not None:
        _render_body(job, job.bodies, skill, raw)
    meets, outside = departures(skill, diagnostics)
    conformance = Conformance(meets, tuple(sorted(diagnostics, key=Diagnostic.sort_key)), tuple(outside))
    stage(detail_path(skill.name), dumps(detail_document(job.config, job.history.source, skill, prov, zip_art,
                                                         json_art, raw, conformance, kept)))
    v1 = discovery_v1_entry(skill, kept)  # None: left out of discovery v0.1, which would fetch its files raw
    for f in skill.files:  # one copy each: under .well-known/skills/ when discovery v0.1 lists the skill
        if f.path in raw:
            stage(raw[f.path], f.data)
    scoped = scoped_discovery_path(skill.name)
    stage(scoped, dumps(discovery_v2_document([discovery_v2_entry(skill, zip_art, scoped)])))
    key = skill_key(job.config, job.history, path, skill.digest, str(folder), skill.skill_md)
    digests, latest, packed = _publish_versions(job, stage, skill.name, path, Head(skill.digest, version_of(skill),
                                                                                   zip_art.to_dict(job.config),
                                                                                   skill.files), prov.updated)
    return replace(checked, digest=skill.digest, key=key, index=index_entry(skill, prov, conformance),
                   v1=LEFT_OUT if v1 is None else v1, v2=discovery_v2_entry(skill, zip_art), search=search_entry(skill),
                   history=job.git.fingerprint(path), digests=digests, latest=latest, packed=packed,
                   signed=stage.finish())

