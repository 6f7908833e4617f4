"""``skillreg build``: validate every skill, then write the JSON API, bundles and discovery indexes.

The output is assembled in a temporary folder beside the target and swapped in at the end, so a failed
or interrupted build leaves the previous output as it was. A skill whose inputs have not changed since the
last build has its files hard-linked from the previous output instead of written again.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from . import __version__
from .api import (INDEX_PATH, WELL_KNOWN_V1, WELL_KNOWN_V2, Artifact, bundle_stem, detail_document, detail_path,
                  discovery_v1_document, discovery_v1_entry, discovery_v2_document, discovery_v2_entry,
                  index_document, index_entry, raw_path)
from .bundle import dumps, json_bundle, zip_bytes
from .config import RegistryConfig
from .diagnostics import Diagnostic, Severity
from .errors import BuildError, UsageError
from .loader import display_path, find_skill_folders, load_skill
from .model import Skill, sha256_hex
from .provenance import History, read_history
from .schemas import write_schemas
from .search import SEARCH_INDEX_PATH, search_entry, search_index
from .validate import ValidationReport, check_registry, check_skill

# Below this many skills a pool of processes costs more than it saves.
PARALLEL_THRESHOLD = 200


class BuildFailed(BuildError):
    """Validation found errors; nothing was written. Carries the findings for the CLI to show."""

    def __init__(self, report: ValidationReport) -> None:
        super().__init__(f"the build stopped: {report.summary()}; nothing was written")
        self.report = report


@dataclass(frozen=True)
class BuildResult:
    out: Path
    report: ValidationReport
    published: tuple[str, ...]  # skill names in the output
    written: tuple[str, ...]  # skills whose files were generated this time
    reused: tuple[str, ...]  # skills whose files were linked from the previous output
    skipped: tuple[str, ...]  # invalid skills left out under --keep-going
    commit: str | None


@dataclass(frozen=True)
class _Job:
    """What every worker needs, sent once per process."""

    config: RegistryConfig
    profile: str
    history: History
    tmp: Path
    previous: Path | None
    manifest: dict[str, dict[str, Any]]


@dataclass(frozen=True)
class _Outcome:
    head: Skill  # the skill without file bytes, for registry-wide rules
    diagnostics: tuple[Diagnostic, ...]
    key: str | None = None
    outputs: tuple[str, ...] = ()
    index: dict[str, Any] | None = None
    v1: dict[str, Any] | None = None
    v2: dict[str, Any] | None = None
    search: list[Any] | None = None
    reused: bool = False


_JOB: _Job | None = None


def _init_worker(job: _Job) -> None:
    global _JOB
    _JOB = job


def _write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as fh:
        fh.write(data)


def _skill_key(job: _Job, skill: Skill) -> str:
    """Everything a skill's own output files depend on; equal keys mean byte-identical files."""
    prov = job.history.of(skill.name)
    material = {"builder": __version__, "digest": skill.digest, "provenance": asdict(prov),
                "base_url": job.config.base_url, "repository": job.config.repository,
                "skills_dir": job.config.skills_dir, "skill_md": skill.skill_md,
                "top": str(job.history.source.top), "folder": str(skill.folder.resolve())}
    return sha256_hex(json.dumps(material, sort_keys=True).encode())


def _link_previous(job: _Job, name: str, key: str) -> dict[str, Any] | None:
    """Hard-link a skill's files from the previous output when nothing they depend on changed."""
    entry = job.manifest.get(name)
    if job.previous is None or not entry or entry.get("key") != key:
        return None
    linked: list[Path] = []
    try:
        for rel in entry["outputs"]:
            target = job.tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(job.previous / rel, target)
            linked.append(target)
    except OSError:
        for target in linked:
            target.unlink(missing_ok=True)
        return None
    return entry


def _build_one(folder: Path) -> _Outcome:
    job = _JOB
    assert job is not None
    loaded = load_skill(folder, job.config)
    skill = loaded.skill
    diagnostics = loaded.diagnostics + tuple(check_skill(skill, job.config, job.profile))
    head = replace(skill, files=())
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return _Outcome(head, diagnostics)
    key = _skill_key(job, skill)
    previous = _link_previous(job, skill.name, key)
    if previous is not None:
        return _Outcome(head, diagnostics, key, tuple(previous["outputs"]), previous["index"], previous["v1"],
                        previous["v2"], previous["search"], reused=True)
    prov = job.history.of(skill.name)
    stem = bundle_stem(skill)
    zipped = zip_bytes(skill.files)
    bundle = dumps(json_bundle(skill))
    zip_art = Artifact(stem + ".zip", sha256_hex(zipped), len(zipped))
    json_art = Artifact(stem + ".json", sha256_hex(bundle), len(bundle))
    files: dict[str, bytes] = {
        zip_art.path: zipped,
        json_art.path: bundle,
        detail_path(skill.name): dumps(detail_document(job.config, job.history.source, skill, prov,
                                                       zip_art, json_art)),
    }
    for f in skill.files:
        files[raw_path(skill.name, f.path)] = f.data
        files[f"{WELL_KNOWN_V1}/{skill.name}/{f.path}"] = f.data
    for rel, data in files.items():
        _write(job.tmp, rel, data)
    return _Outcome(head, diagnostics, key, tuple(sorted(files)), index_entry(skill, prov),
                    discovery_v1_entry(skill), discovery_v2_entry(skill, zip_art), search_entry(skill))


def _manifest_path(config: RegistryConfig, out: Path) -> Path:
    tag = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]
    return config.root / ".skillreg-cache" / f"build-{tag}.json"


def _read_manifest(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data["skills"] if data.get("builder") == __version__ else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _check_out(out: Path, config: RegistryConfig) -> None:
    resolved = out.resolve()
    for protected in (config.root.resolve(), config.skills_path.resolve()):
        if resolved == protected or protected.is_relative_to(resolved):
            raise UsageError(f"--out {display_path(out)} would replace {display_path(protected)}; pick another folder")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {display_path(out)} is a file")
    if out.is_dir() and any(out.iterdir()) and not (out / INDEX_PATH).is_file():
        raise UsageError(f"--out {display_path(out)} is not empty and holds no previous build; "
                         "refusing to replace it")


def _swap(tmp: Path, out: Path) -> None:
    """Put ``tmp`` at ``out``; an existing ``out`` is exchanged atomically where the OS allows, then removed."""
    if out.exists():
        if _exchange(tmp, out):
            shutil.rmtree(tmp)
            return
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old)
    else:
        os.rename(tmp, out)


def _exchange(a: Path, b: Path) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def build(config: RegistryConfig, out: Path, *, paths: Sequence[Path] | None = None, base_url: str | None = None,
          jobs: int | None = None, keep_going: bool = False, profile: str | None = None, site: bool = True,
          on_progress: Callable[[int, int], None] | None = None,
          extra: Callable[[RegistryConfig, Path, ValidationReport], None] | None = None) -> BuildResult:
    """Validate, then write the whole output to a temporary folder and swap it in at ``out``."""
    if base_url is not None:
        config = replace(config, base_url=base_url)
    profile = profile or config.profile
    roots = list(paths) if paths else [config.skills_path]
    for root in roots:
        if not root.is_dir():
            raise UsageError(f"{display_path(root)}: no such folder")
    _check_out(out, config)
    folders = sorted({f for root in roots for f in find_skill_folders(root)}, key=lambda p: (p.name, str(p)))
    history = read_history(roots[0])
    manifest_file = _manifest_path(config, out)
    previous = out if (out / INDEX_PATH).is_file() else None
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    job = _Job(config, profile, history, tmp, previous, _read_manifest(manifest_file) if previous else {})
    try:
        outcomes = _run(job, folders, jobs, on_progress)
        diagnostics = [d for o in outcomes for d in o.diagnostics]
        diagnostics += check_registry([o.head for o in outcomes])
        diagnostics.sort(key=Diagnostic.sort_key)
        report = ValidationReport(tuple(o.head for o in outcomes), tuple(diagnostics))
        invalid = report.invalid_names()
        if invalid and not keep_going:
            raise BuildFailed(report)
        kept = [o for o in outcomes if o.head.name not in invalid]
        for o in outcomes:
            if o.head.name in invalid:
                for rel in o.outputs:
                    (tmp / rel).unlink(missing_ok=True)
        source = history.source
        _write(tmp, INDEX_PATH, dumps(index_document(config, source, [o.index for o in kept if o.index])))
        _write(tmp, f"{WELL_KNOWN_V1}/index.json", dumps(discovery_v1_document([o.v1 for o in kept if o.v1])))
        _write(tmp, f"{WELL_KNOWN_V2}/index.json", dumps(discovery_v2_document([o.v2 for o in kept if o.v2])))
        _write(tmp, SEARCH_INDEX_PATH, dumps(search_index([o.search for o in kept if o.search])))
        write_schemas(tmp)
        _write(tmp, ".nojekyll", b"")
        if site:
            from .site import write_site

            write_site(config, tmp, report)
        if extra is not None:
            extra(config, tmp, report)
        _swap(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    manifest_file.parent.mkdir(parents=True, exist_ok=True)
    tmp_manifest = manifest_file.with_suffix(".tmp")
    tmp_manifest.write_text(json.dumps({"builder": __version__, "skills": {
        o.head.name: {"key": o.key, "outputs": list(o.outputs), "index": o.index, "v1": o.v1, "v2": o.v2,
                      "search": o.search}
        for o in kept}}, sort_keys=True), encoding="utf-8")
    os.replace(tmp_manifest, manifest_file)
    return BuildResult(
        out=out, report=report,
        published=tuple(o.head.name for o in kept),
        written=tuple(o.head.name for o in kept if not o.reused),
        reused=tuple(o.head.name for o in kept if o.reused),
        skipped=tuple(sorted(invalid)),
        commit=source.commit,
    )


def _run(job: _Job, folders: list[Path], jobs: int | None,
         on_progress: Callable[[int, int], None] | None) -> list[_Outcome]:
    total = len(folders)
    if jobs is None:
        jobs = min(os.cpu_count() or 1, 8) if total >= PARALLEL_THRESHOLD else 1
    outcomes: list[_Outcome] = []
    if jobs <= 1:
        _init_worker(job)
        for folder in folders:
            outcomes.append(_build_one(folder))
            if on_progress:
                on_progress(len(outcomes), total)
        return outcomes
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(job,)) as pool:
        for outcome in pool.map(_build_one, folders, chunksize=max(1, min(64, total // (jobs * 8) or 1))):
            outcomes.append(outcome)
            if on_progress:
                on_progress(len(outcomes), total)
    return outcomes
