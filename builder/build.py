"""``skillreg build``: validate every skill, then write the JSON API, bundles, discovery indexes and website.

Nothing in the output changes until everything is ready. New files are staged in a temporary folder beside
the output. A first build, or one whose cache cannot be trusted, stages everything and swaps the whole
folder in (atomically exchanged where Linux allows). A rebuild stages only the skills whose files changed
(found by comparing file sizes, times and inodes with the last build, as git's index does), plus the
indexes and the website, then moves those units into place under a journal: if the process dies part way,
the next build puts the previous output back before doing anything else.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from . import __version__
from .api import (API_ROOT, INDEX_PATH, WELL_KNOWN_V1, WELL_KNOWN_V2, Artifact, bundle_stem, detail_document,
                  detail_path, discovery_v1_document, discovery_v1_entry, discovery_v2_document, discovery_v2_entry,
                  index_document, index_entry, raw_path)
from .bundle import dumps, json_bundle, zip_bytes
from .config import RegistryConfig
from .diagnostics import Diagnostic, Severity
from .errors import BuildError, UsageError
from .fs import exchange
from .loader import display_path, find_skill_folders, load_skill
from .model import Frontmatter, Skill, sha256_hex
from .provenance import History, read_history
from .schemas import SCHEMA_DIR, write_schemas
from .search import SEARCH_INDEX_PATH, search_entry, search_index
from .validate import ValidationReport, check_registry, check_skill
from .workers import run_parallel

MANIFEST_VERSION = 2
GLOBAL_UNITS = (INDEX_PATH, SEARCH_INDEX_PATH, SCHEMA_DIR, f"{WELL_KNOWN_V1}/index.json",
                f"{WELL_KNOWN_V2}/index.json", ".nojekyll")


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
    reused: tuple[str, ...]  # skills left as the previous build wrote them
    skipped: tuple[str, ...]  # invalid skills left out under --keep-going
    removed: tuple[str, ...]  # skills the previous output had and this one has not
    commit: str | None


def skill_units(name: str) -> tuple[str, ...]:
    """The paths a skill owns in the output; each is replaced as a whole."""
    return (detail_path(name), f"{API_ROOT}/skills/{name}", f"{API_ROOT}/bundles/{name}", f"{WELL_KNOWN_V1}/{name}")


@dataclass(frozen=True)
class _Job:
    """What every worker needs, sent once per process."""

    config: RegistryConfig
    profile: str
    history: History
    tmp: Path


@dataclass(frozen=True)
class _Outcome:
    """One skill, as the manifest remembers it: enough to publish its index rows without reading it again."""

    name: str
    folder: str
    skill_md: str
    declared: str | None  # `name` as written in SKILL.md, for registry-wide rules
    name_line: int
    diagnostics: tuple[Diagnostic, ...]
    signature: str
    digest: str | None = None
    key: str | None = None
    index: dict[str, Any] | None = None
    v1: dict[str, Any] | None = None
    v2: dict[str, Any] | None = None
    search: list[Any] | None = None
    fresh: bool = True  # built in this run (False: taken from the manifest)

    def head(self) -> Skill:
        data = {"name": self.declared} if self.declared is not None else {}
        fm = Frontmatter(data, {"name": self.name_line}, 1, 1)
        return Skill(self.name, Path(self.folder), self.skill_md, fm, "", 1, ())

    def to_json(self) -> dict[str, Any]:
        """The manifest keeps each row once: the discovery and search rows repeat the index row's fields."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__
                if name not in ("fresh", "v1", "v2", "search")}
        data["diagnostics"] = [d.to_dict() for d in self.diagnostics]
        if self.v1 is not None and self.v2 is not None and self.search is not None:
            data["extra"] = {"files": self.v1["files"], "url": self.v2["url"], "archive": self.v2["digest"],
                             "headings": self.search[4]}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Outcome:
        diagnostics = tuple(Diagnostic(**{**d, "severity": Severity(d["severity"])}) for d in data["diagnostics"])
        extra, index = data.pop("extra", None), data.get("index")
        rows: dict[str, Any] = {}
        if extra is not None and index is not None:
            name, description = index["name"], index["description"]
            rows = {"v1": {"name": name, "description": description, "files": extra["files"]},
                    "v2": {"name": name, "type": "archive", "description": description, "url": extra["url"],
                           "digest": extra["archive"]},
                    "search": [name, description, index["category"] or "", index["tags"], extra["headings"]]}
        return cls(**{**data, **rows, "diagnostics": diagnostics, "fresh": False})


_JOB: _Job | None = None


def _init_worker(job: _Job) -> None:
    global _JOB
    _JOB = job
    _MADE.clear()


def signature(folder: Path) -> str:
    """What changes when any file of the folder changes: path, type, size, mtime and inode of every entry."""
    lines: list[str] = []
    stack = [(str(folder), "")]
    while stack:
        current, prefix = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            lines.append(f"unreadable:{prefix}")
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                lines.append(f"gone:{prefix}{entry.name}")
                continue
            lines.append(f"{prefix}{entry.name}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}")
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, f"{prefix}{entry.name}/"))
    lines.sort()
    return hashlib.sha1("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _skill_key(config: RegistryConfig, history: History, name: str, digest: str, folder: str,
               skill_md: str) -> str:
    """Everything a skill's own output files depend on, beyond the build settings; equal keys, identical files."""
    prov = history.of(name)
    material = "\0".join([digest, folder, skill_md, str(history.source.top), str(prov.created), str(prov.updated),
                          str(prov.commit), "\x1f".join(prov.authors)])
    return hashlib.sha1(material.encode("utf-8", "surrogateescape")).hexdigest()


_MADE: set[Path] = set()  # folders this process created; on a slow disk even a failing mkdir costs


def _mkdirs(folder: Path) -> None:
    if folder not in _MADE:
        folder.mkdir(parents=True, exist_ok=True)
        _MADE.add(folder)


def _write(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    _mkdirs(path.parent)
    with open(path, "xb") as fh:
        fh.write(data)
    return path


def _build_one(folder: Path) -> _Outcome:
    job = _JOB
    assert job is not None
    sig = signature(folder)
    loaded = load_skill(folder, job.config)
    skill = loaded.skill
    diagnostics = loaded.diagnostics + tuple(check_skill(skill, job.config, job.profile))
    declared = skill.field("name")
    checked = _Outcome(name=skill.name, folder=str(folder), skill_md=skill.skill_md,
                       declared=declared if isinstance(declared, str) else None,
                       name_line=skill.frontmatter.line_of("name") if skill.frontmatter else 0,
                       diagnostics=diagnostics, signature=sig)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return checked
    prov = job.history.of(skill.name)
    stem = bundle_stem(skill)
    zipped = zip_bytes(skill.files)
    bundle = dumps(json_bundle(skill))
    zip_art = Artifact(stem + ".zip", sha256_hex(zipped), len(zipped))
    json_art = Artifact(stem + ".json", sha256_hex(bundle), len(bundle))
    _write(job.tmp, zip_art.path, zipped)
    _write(job.tmp, json_art.path, bundle)
    _write(job.tmp, detail_path(skill.name),
           dumps(detail_document(job.config, job.history.source, skill, prov, zip_art, json_art)))
    for f in skill.files:
        raw = _write(job.tmp, raw_path(skill.name, f.path), f.data)
        copy = job.tmp / WELL_KNOWN_V1 / skill.name / f.path
        _mkdirs(copy.parent)
        os.link(raw, copy)  # the same bytes under the discovery path, without writing them twice
    key = _skill_key(job.config, job.history, skill.name, skill.digest, str(folder), skill.skill_md)
    return replace(checked, digest=skill.digest, key=key, index=index_entry(skill, prov),
                   v1=discovery_v1_entry(skill), v2=discovery_v2_entry(skill, zip_art), search=search_entry(skill))


# ---------------------------------------------------------------------------------------------- the manifest

def _manifest_path(config: RegistryConfig, out: Path) -> Path:
    tag = hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]
    return config.root / ".skillreg-cache" / f"build-{tag}.json"


def _settings(config: RegistryConfig, profile: str, site: bool) -> str:
    """A rebuild may reuse skills only when everything else the output depends on is unchanged."""
    settings = asdict(config)
    settings["root"] = str(config.root.resolve())
    settings["path"] = str(config.path.resolve()) if config.path else None
    return sha256_hex(json.dumps({"builder": __version__, "config": settings, "profile": profile, "site": site},
                                 sort_keys=True, default=str).encode())


def _read_manifest(path: Path, settings: str, out: Path) -> dict[str, _Outcome] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != MANIFEST_VERSION or data.get("settings") != settings:
            return None
        if data.get("index_sha256") != sha256_hex((out / INDEX_PATH).read_bytes()):
            return None  # the output was changed by something else since
        return {name: _Outcome.from_json(entry) for name, entry in data["skills"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_manifest(path: Path, settings: str, out: Path, outcomes: list[_Outcome]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"version": MANIFEST_VERSION, "settings": settings,
            "index_sha256": sha256_hex((out / INDEX_PATH).read_bytes()),
            "skills": {o.name: o.to_json() for o in outcomes}}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


# ----------------------------------------------------------------------------------- putting the output in place

def _journal_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.journal.json")


def recover(out: Path) -> bool:
    """Finish or undo a commit that was interrupted; True when there was one."""
    journal_file = _journal_path(out)
    if not journal_file.exists():
        return False
    journal = json.loads(journal_file.read_text(encoding="utf-8"))
    backup, tmp = Path(journal["backup"]), Path(journal["tmp"])
    if journal["state"] != "committed":
        for unit in reversed(journal["units"]):
            rel, had_old, has_new = unit["path"], unit["had_old"], unit["has_new"]
            current, saved = out / rel, backup / rel
            if had_old and (saved.exists() or saved.is_symlink()):
                _remove(current)
                current.parent.mkdir(parents=True, exist_ok=True)
                os.rename(saved, current)
            elif not had_old and has_new and not (tmp / rel).exists():
                _remove(current)
    shutil.rmtree(backup, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    journal_file.unlink()
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _commit_units(tmp: Path, out: Path, units: list[str]) -> None:
    """Move each staged unit over its old self, keeping the old ones aside until every unit is in place."""
    journal_file = _journal_path(out)
    backup = out.with_name(f".{out.name}.backup-{os.getpid()}")
    plan: list[dict[str, Any]] = [
        {"path": rel, "had_old": (out / rel).exists() or (out / rel).is_symlink(), "has_new": (tmp / rel).exists()}
        for rel in units]
    journal = {"tmp": str(tmp), "backup": str(backup), "units": plan, "state": "prepared"}
    _write_json_atomic(journal_file, journal)
    try:
        for unit in plan:
            rel = unit["path"]
            if unit["had_old"]:
                (backup / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(out / rel, backup / rel)
            if unit["has_new"]:
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(tmp / rel, out / rel)
    except BaseException:
        recover(out)  # put every unit back as it was; a process killed here is recovered by the next build
        raise
    journal["state"] = "committed"
    _write_json_atomic(journal_file, journal)
    if backup.exists():
        _discard(backup, out)
    journal_file.unlink()


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _swap(tmp: Path, out: Path) -> None:
    """Put ``tmp`` at ``out``; an existing ``out`` is exchanged atomically where the OS allows, then discarded."""
    if out.exists():
        if exchange(tmp, out):
            _discard(tmp, out)
            return
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.rename(out, old)
        os.rename(tmp, out)
        _discard(old, out)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.rename(tmp, out)


def _trash_prefix(out: Path) -> str:
    return f".{out.name}.trash-"


def _discard(folder: Path, out: Path) -> None:
    """Delete a replaced tree in a detached process: on a slow disk removing 100,000 files takes minutes, and
    nothing needs to wait for it. A leftover whose deleter died is removed by the next build."""
    trash = out.with_name(f"{_trash_prefix(out)}{os.getpid()}-{secrets.token_hex(4)}")
    os.rename(folder, trash)
    try:
        subprocess.Popen([sys.executable, "-c", "import shutil, sys; shutil.rmtree(sys.argv[1], True)", str(trash)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        shutil.rmtree(trash, ignore_errors=True)


def _being_deleted(trash: Path) -> bool:
    """Whether a running process was started to delete ``trash`` (its path is on that process's command line)."""
    needle = os.fsencode(str(trash))
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def _empty_trash(out: Path) -> None:
    """Remove trees a detached deletion did not finish, unless one is still at work on them."""
    if not out.parent.is_dir():
        return
    for entry in out.parent.iterdir():
        if entry.name.startswith(_trash_prefix(out)) and not _being_deleted(entry):
            shutil.rmtree(entry, ignore_errors=True)


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


# ------------------------------------------------------------------------------------------------- the build

def build(config: RegistryConfig, out: Path, *, paths: Sequence[Path] | None = None, base_url: str | None = None,
          jobs: int | None = None, keep_going: bool = False, profile: str | None = None, site: bool = True,
          on_progress: Callable[[int, int], None] | None = None) -> BuildResult:
    """Validate, then write the output; see the module docstring for how it is put in place."""
    if base_url is not None:
        config = replace(config, base_url=base_url)
    profile = profile or config.profile
    roots = list(paths) if paths else [config.skills_path]
    for root in roots:
        if not root.is_dir():
            raise UsageError(f"{display_path(root)}: no such folder")
    recover(out)
    _empty_trash(out)
    _check_out(out, config)
    folders = sorted({f for root in roots for f in find_skill_folders(root)}, key=lambda p: (p.name, str(p)))
    history = read_history(roots[0])
    settings = _settings(config, profile, site)
    manifest_file = _manifest_path(config, out)
    index_before = (out / INDEX_PATH).read_bytes() if (out / INDEX_PATH).is_file() else None
    previous = _read_manifest(manifest_file, settings, out) if index_before is not None else None

    reused: list[_Outcome] = []
    to_build: list[Path] = []
    for folder in folders:
        old = previous.get(folder.name) if previous is not None else None
        if (old is not None and old.folder == str(folder) and old.signature == signature(folder)
                and (old.digest is None or old.key == _skill_key(config, history, old.name, old.digest, old.folder,
                                                                   old.skill_md))):
            reused.append(old)
        else:
            to_build.append(folder)

    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    _remove(tmp)
    tmp.mkdir(parents=True)
    try:
        built = run_parallel(_build_one, to_build, initializer=_init_worker,
                             initargs=(_Job(config, profile, history, tmp),), jobs=jobs, on_progress=on_progress)
        outcomes = sorted(reused + built, key=lambda o: (o.name, o.folder))
        heads = tuple(o.head() for o in outcomes)
        diagnostics = [d for o in outcomes for d in o.diagnostics]
        diagnostics += check_registry(heads)
        diagnostics.sort(key=Diagnostic.sort_key)
        report = ValidationReport(heads, tuple(diagnostics))
        invalid = report.invalid_names()
        if invalid and not keep_going:
            raise BuildFailed(report)
        kept = [o for o in outcomes if o.name not in invalid and o.index is not None]
        for o in built:
            if o.name in invalid:
                for unit in skill_units(o.name):
                    _remove(tmp / unit)
        source = history.source
        _write(tmp, INDEX_PATH, dumps(index_document(config, source, [o.index for o in kept if o.index])))
        _write(tmp, SEARCH_INDEX_PATH, dumps(search_index([o.search for o in kept if o.search])))
        _write(tmp, f"{WELL_KNOWN_V1}/index.json", dumps(discovery_v1_document([o.v1 for o in kept if o.v1])))
        _write(tmp, f"{WELL_KNOWN_V2}/index.json", dumps(discovery_v2_document([o.v2 for o in kept if o.v2])))
        write_schemas(tmp)
        _write(tmp, ".nojekyll", b"")
        if site:
            from .site import write_site

            write_site(config, tmp, report, api_roots=(tmp, out) if previous is not None else (tmp,))
        removed: list[str] = []
        if previous is None:
            _swap(tmp, out)
        else:
            kept_names = {o.name for o in kept}
            removed = sorted(set(previous) - kept_names)
            changed = [o.name for o in built if o.name in kept_names] + removed
            site_units = sorted(p.name for p in tmp.iterdir() if p.name not in ("api", ".well-known", ".nojekyll"))
            _commit_units(tmp, out, [u for name in changed for u in skill_units(name)] + list(GLOBAL_UNITS)
                          + site_units)
    finally:
        _remove(tmp)
    if previous is None or built or removed or (out / INDEX_PATH).read_bytes() != index_before:
        _write_manifest(manifest_file, settings, out, kept)
    fresh = {o.name for o in built}
    return BuildResult(
        out=out, report=report,
        published=tuple(o.name for o in kept),
        written=tuple(o.name for o in kept if o.name in fresh),
        reused=tuple(o.name for o in kept if o.name not in fresh),
        skipped=tuple(sorted(invalid)),
        removed=tuple(removed),
        commit=source.commit,
    )
