"""Verified, atomic installation of one skill into one folder. Nothing from the skill is ever executed.

Order of trust: the detail document names the bundle's sha256 and the skill digest; the bundle's bytes
must match the sha256 before they are opened, and the unpacked files must match the digest before
anything is written. Files go into a new hidden folder next to the target (``O_NOFOLLOW | O_EXCL``), are
flushed, read back and checked, and only then swapped in with one rename. Until that rename the
previous version is untouched; a failure or a kill leaves it as it was.
"""

from __future__ import annotations

import difflib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.diagnostics import Severity
from ..core.errors import ClientError, disk_problem
from ..core.frontmatter import parse_skill_md
from ..core.fs import create_file, remove_path, swap_into, sync_path
from ..core.limits import CLIENT
from ..core.model import SkillFile, sha256_hex, short_digest, skill_digest
from ..core.slugs import slug_fits
from .archive import DEFAULT_LIMITS, UnpackLimits, read_bundle
from .registry import Registry
from .versions import PublishedVersion

TMP_PREFIX = ".skillreg-tmp-"
OLD_PREFIX = ".skillreg-old-"
MAX_FRONTMATTER_BYTES = CLIENT.max_frontmatter_bytes


@dataclass(frozen=True)
class FetchedSkill:
    """A skill's verified files, in memory, ready to be written."""

    registry: str
    name: str
    version: str | None
    digest: str
    skill_md: str
    files: tuple[SkillFile, ...]
    detail: Mapping[str, Any] | None = None  # the detail document, when the files came through it
    archive_sha256: str | None = None  # the verified zip's sha256 (the discovery index's digest of it)

    @property
    def hashes(self) -> dict[str, str]:
        return {f.path: f.sha256 for f in self.files}


@dataclass(frozen=True)
class LocalState:
    """How an installed folder differs from the files recorded for it."""

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    absent: bool = False  # the folder itself is gone

    @property
    def clean(self) -> bool:
        return not (self.changed or self.added or self.missing or self.absent)

    def describe(self) -> str:
        if self.absent:
            return "the folder is missing"
        parts = [f"{what}: {', '.join(paths)}" for what, paths in
                 (("changed", self.changed), ("added", self.added), ("missing", self.missing)) if paths]
        return "; ".join(parts)


def digest_matches(published: str, wanted: str) -> bool:
    """``wanted`` is a full ``sha256:`` digest or at least 12 hex digits of one."""
    hex_wanted = wanted.removeprefix("sha256:").lower()
    return len(hex_wanted) >= 12 and published.removeprefix("sha256:").startswith(hex_wanted)


def fetch_skill(registry: Registry, name: str, *, detail: Mapping[str, Any] | None = None,
                limits: UnpackLimits = DEFAULT_LIMITS) -> FetchedSkill:
    """The newest version through its detail document (unless given) and bundle: two requests at most, both
    verified. Any other version comes through versions.json (``fetch_version``)."""
    detail = detail if detail is not None else registry.detail(name)
    published = str(detail["digest"])
    bundle = detail["bundles"]["zip"]
    data = registry.artifact(bundle["path"], bundle["sha256"], bundle["size"])
    files = read_bundle(data, limits)
    if skill_digest(files) != published:
        raise ClientError(f"{name}: the bundle's files do not match the published digest {short_digest(published)}…; "
                          "nothing was installed")
    listed = {f.get("path"): bool(f.get("executable")) for f in detail.get("files", []) if isinstance(f, dict)}
    # Scripts keep their executable bit; nothing outside scripts/ becomes executable.
    files = [SkillFile(f.path, f.data, f.executable and listed.get(f.path, False) and f.path.startswith("scripts/"))
             for f in files]
    skill_md = detail.get("skill_md") if detail.get("skill_md") in ("SKILL.md", "skill.md") else "SKILL.md"
    return FetchedSkill(registry.url, name, detail.get("version") if isinstance(detail.get("version"), str) else None,
                        published, str(skill_md), tuple(files), detail, str(bundle["sha256"]))


def fetch_version(registry: Registry, name: str, version: PublishedVersion, where: str,
                  limits: UnpackLimits = DEFAULT_LIMITS) -> FetchedSkill:
    """One version from the skill's ``versions.json`` (read already, at ``where``): its zip, one request, verified
    against the entry's sha256 and size, then its files against the entry's digest."""
    if version.zip is None:
        raise ClientError(f"{name} {version.label}: the registry publishes no files for it")
    data = registry.artifact(version.zip.path, version.zip.sha256, version.zip.size)
    files = read_bundle(data, limits)
    if skill_digest(files) != version.digest:
        raise ClientError(f"{name}: the bundle {version.zip.path} that {where} names does not hold the files of "
                          f"{short_digest(version.digest)}…; nothing was installed")
    # Scripts keep their executable bit; nothing outside scripts/ becomes executable.
    files = [SkillFile(f.path, f.data, f.executable and f.path.startswith("scripts/")) for f in files]
    paths = {f.path for f in files}
    skill_md = "SKILL.md" if "SKILL.md" in paths or "skill.md" not in paths else "skill.md"
    return FetchedSkill(registry.url, name, version.version, version.digest, skill_md, tuple(files),
                        archive_sha256=version.zip.sha256)


# -- reading what is installed ---------------------------------------------------------------------------

def _walk(folder: Path) -> Iterable[tuple[str, os.stat_result, Path]]:
    """(relative path, lstat, path) for everything below ``folder``, never following a link. Nothing is skipped:
    a ``__pycache__/*.pyc`` or a ``.DS_Store`` the skill did not ship is a file someone put there (Python runs
    a planted .pyc instead of its .py)."""
    stack = [(folder, "")]
    while stack:
        current, prefix = stack.pop()
        with os.scandir(current) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = prefix + entry.name
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    stack.append((Path(entry.path), rel + "/"))
                    continue
                yield rel, st, Path(entry.path)


def local_state(folder: Path, expected: Mapping[str, str]) -> LocalState:
    """Compare an installed folder with the path -> sha256 map recorded when it was installed."""
    try:
        return _local_state(folder, expected)
    except OSError as exc:
        raise ClientError(f"cannot read {folder}: {exc.strerror or exc}") from None


def _local_state(folder: Path, expected: Mapping[str, str]) -> LocalState:
    if folder.is_symlink() or not folder.is_dir():
        return LocalState(absent=True)
    changed, added, seen = [], [], set()
    for rel, st, path in _walk(folder):
        seen.add(rel)
        if rel not in expected:
            added.append(rel)
            continue
        if not stat.S_ISREG(st.st_mode):
            changed.append(rel)
            continue
        with open(path, "rb") as fh:
            if sha256_hex(fh.read()) != expected[rel]:
                changed.append(rel)
    missing = sorted(set(expected) - seen)
    return LocalState(tuple(sorted(changed)), tuple(sorted(added)), tuple(missing))


def read_installed(folder: Path) -> dict[str, bytes]:
    """Regular files of an installed skill, for diffs; links and special files are left out."""
    if folder.is_symlink() or not folder.is_dir():
        return {}
    out = {}
    try:
        for rel, st, path in _walk(folder):
            if stat.S_ISREG(st.st_mode):
                out[rel] = path.read_bytes()
    except OSError as exc:
        raise ClientError(f"cannot read {folder}: {exc.strerror or exc}") from None
    return out


def unified_diff(old: Mapping[str, bytes], new: Iterable[SkillFile]) -> str:
    """One unified diff per changed file, as ``git diff`` would show them (binary files are named only)."""
    new_files = {f.path: f.data for f in new}
    out: list[str] = []
    for path in sorted(set(old) | set(new_files), key=lambda p: p.encode("utf-8")):
        before, after = old.get(path), new_files.get(path)
        if before == after:
            continue
        a = f"a/{path}" if before is not None else "/dev/null"
        b = f"b/{path}" if after is not None else "/dev/null"
        try:
            before_text = (before or b"").decode("utf-8")
            after_text = (after or b"").decode("utf-8")
        except UnicodeDecodeError:
            out.append(f"Binary files {a} and {b} differ\n")
            continue
        lines = difflib.unified_diff(before_text.splitlines(keepends=True), after_text.splitlines(keepends=True),
                                     a, b)
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


# -- writing -----------------------------------------------------------------------------------------------

def write_skill(skill: FetchedSkill, folder: Path) -> None:
    """Put ``skill`` at ``folder`` atomically; the previous folder stays until the new one is complete and checked."""
    try:
        _write_skill(skill, folder)
    except OSError as exc:
        raise ClientError(f"cannot install {skill.name} into {folder}: {disk_problem(exc)}") from None


def _write_skill(skill: FetchedSkill, folder: Path) -> None:
    parent = folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(parent)
    tmp = parent / f"{TMP_PREFIX}{skill.name}-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(tmp, 0o700)
    try:
        for f in skill.files:
            _write_file(tmp, f)
        _fsync_tree(tmp)
        check_written(tmp, skill)
        os.chmod(tmp, 0o755)
        _swap(tmp, folder)
    except BaseException:
        remove_path(tmp, ignore_errors=True)
        raise
    sync_path(parent, ignore_errors=True)


def _write_file(root: Path, f: SkillFile) -> None:
    current = root
    for part in f.path.split("/")[:-1]:
        current = current / part
        try:
            os.mkdir(current, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                raise ClientError(f"cannot write {f.path}: {part} is not a folder") from None
    # Whatever the umask says: scripts 0755, everything else 0644.
    create_file(root / f.path, f.data, mode=0o755 if f.executable else 0o644, exact_mode=True)


def _fsync_tree(root: Path) -> None:
    for current, dirs, _ in os.walk(root):
        for d in dirs:
            sync_path(Path(current) / d, ignore_errors=True)
    sync_path(root, ignore_errors=True)


def check_written(folder: Path, skill: FetchedSkill) -> None:
    """Read the written files back: same digest, and a SKILL.md whose frontmatter is valid and names the skill."""
    files = []
    for rel, st, path in _walk(folder):
        if not stat.S_ISREG(st.st_mode):
            raise ClientError(f"{skill.name}: {rel} was not written as a regular file")
        files.append(SkillFile(rel, path.read_bytes()))
    if skill_digest(files) != skill.digest:
        raise ClientError(f"{skill.name}: the files read back do not match the digest; nothing was installed")
    skill_md = next((f for f in files if f.path == skill.skill_md), None)
    if skill_md is None:
        raise ClientError(f"{skill.name}: the bundle has no {skill.skill_md}; nothing was installed")
    parsed = parse_skill_md(skill_md.data, f"{skill.name}/{skill.skill_md}",
                            max_frontmatter_bytes=MAX_FRONTMATTER_BYTES, skill=skill.name)
    errors = [d for d in parsed.diagnostics if d.severity is Severity.ERROR]
    if parsed.frontmatter is None or errors:
        why = errors[0].message if errors else "no frontmatter"
        raise ClientError(f"{skill.name}: its {skill.skill_md} is not valid ({why}); nothing was installed")
    declared = parsed.frontmatter.data.get("name")
    if not slug_fits(skill.name, declared):
        raise ClientError(f"{skill.name}: its {skill.skill_md} names the skill {declared!r}; nothing was installed")
    description = parsed.frontmatter.data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ClientError(f"{skill.name}: its {skill.skill_md} has no description; nothing was installed")


def _swap(tmp: Path, folder: Path) -> None:
    previous = swap_into(tmp, folder, folder.parent / f"{OLD_PREFIX}{folder.name}-{os.getpid()}-{secrets.token_hex(4)}")
    if previous is not None:
        remove_path(previous, ignore_errors=True)


def remove_folder(folder: Path) -> None:
    """Take an installed skill away in one rename, then delete it."""
    try:
        if not (folder.exists() or folder.is_symlink()):
            return
        if folder.is_symlink():
            folder.unlink()
            return
        old = folder.parent / f"{OLD_PREFIX}{folder.name}-{os.getpid()}-{secrets.token_hex(4)}"
        os.rename(folder, old)
    except OSError as exc:
        raise ClientError(f"cannot remove {folder}: {disk_problem(exc)}") from None
    remove_path(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError as exc:
        return exc.errno != errno.ESRCH
    return True


def clean_leftovers(parent: Path) -> None:
    """Remove what an interrupted install left in ``parent``; put back a folder a kill left aside."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        for prefix in (TMP_PREFIX, OLD_PREFIX):
            if not entry.name.startswith(prefix):
                continue
            rest = entry.name[len(prefix):]
            name, _, tail = rest.rpartition("-")  # tail: random; name-pid before it
            name, _, pid = name.rpartition("-")
            if not pid.isdigit() or _alive(int(pid)):  # another install (or this one) is still at work
                continue
            path = Path(entry.path)
            if prefix == OLD_PREFIX and name and not (parent / name).exists() and not (parent / name).is_symlink():
                os.rename(path, parent / name)  # killed between the two renames of a non-atomic swap
            else:
                remove_path(path, ignore_errors=True)
