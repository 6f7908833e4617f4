"""Which skills changed since a git revision, and their validation: ``skillreg validate --changed-since REF``.

What counts as changed: everything between the merge base of REF and HEAD and the working tree, that is the
branch's commits plus staged, unstaged and untracked files (``git diff --name-status -M BASE`` and
``git ls-files --others --exclude-standard``). In CI the working tree is clean, so this is exactly
``REF...HEAD``; on a laptop it is what CI will see once everything is committed.

The changed skills are validated fully; the registry-wide rules (duplicate names, names that collide after
NFKC and case folding, reserved names) run over every skill, since a new skill can clash with one the pull
request never touched. When registry.yaml itself changed, every skill is validated fully.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

import semver

from ..core.config import RegistryConfig
from ..core.diagnostics import RULES, Diagnostic, Severity
from ..core.discovery import SKILL_FILES, is_skill_folder, pathspecs, refusal_finding, registry_skills
from ..core.errors import UsageError
from ..core.frontmatter import parse_skill_md
from ..core.git import GitFailed, checked_git
from ..core.loader import SKILL_MD, SKILL_MD_FALLBACK, display_path, is_junk, load_skill
from ..core.model import Skill, SkillFile, short_digest, skill_digest
from ..core.words import counted
from .baseline import BaselineCheck
from .names import NameKey, RegistryNames
from .report import ValidationReport
from .run import validate_folder

ADDED, MODIFIED, REMOVED, RENAMED = "added", "modified", "removed", "renamed"
_BLOB_MODES = {"100644": False, "100755": True}  # tree mode -> executable; links and submodules are not published


@dataclass(frozen=True)
class SkillChange:
    """One skill folder touched since the base. Digests are ``None`` on the side where the skill does not exist."""

    name: str  # the skill folder's path in the repository (relative to registry.yaml's folder)
    status: str  # added | modified | removed | renamed
    old_digest: str | None
    new_digest: str | None
    old_name: str | None = None  # the folder it was renamed from

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "old_digest": self.old_digest,
                "new_digest": self.new_digest, "old_name": self.old_name}


@dataclass(frozen=True)
class ChangeReport:
    ref: str
    base: str  # the merge base of ref and HEAD, a full commit id
    changes: tuple[SkillChange, ...]
    report: ValidationReport  # the changed skills (every skill when registry.yaml changed) and registry-wide rules
    config_changed: bool

    def findings_of(self, name: str) -> list[Diagnostic]:
        return [d for d in self.report.diagnostics if d.skill == name]

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "base": self.base, "config_changed": self.config_changed,
                "skills": [c.to_dict() for c in self.changes]}


def _git(top: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """``core.git.checked_git``, a failure as the usage error ``--changed-since`` shows."""
    try:
        return checked_git(args, top, stdin=stdin)
    except GitFailed as failed:
        raise UsageError(f"--changed-since needs git: {failed}" if failed.missing else str(failed)) from None


def _top(folder: Path) -> Path:
    try:
        out = _git(folder, "rev-parse", "--show-toplevel")
    except UsageError:
        raise UsageError(f"--changed-since needs a git repository; {display_path(folder)} is not in one") from None
    return Path(os.fsdecode(out.strip())).resolve()


def merge_base(top: Path, ref: str) -> str:
    """The commit the branch started from; an unknown REF is a usage error that says how to fetch it."""
    try:
        _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except UsageError:
        raise UsageError(f"unknown git revision {ref!r}; fetch it first "
                         "(in GitHub Actions, check out with `fetch-depth: 0`)") from None
    try:
        return _git(top, "merge-base", ref, "HEAD").decode().strip()
    except UsageError:
        raise UsageError(f"{ref!r} and HEAD share no history; cannot tell what changed") from None


def _split_z(data: bytes) -> list[str]:
    parts = data.decode("utf-8", "surrogateescape").split("\0")
    return parts[:-1] if parts and parts[-1] == "" else parts


def changed_paths(top: Path, base: str, pathspecs: list[str]) -> list[tuple[str, str, str]]:
    """``(status letter, old path, new path)`` from the base to the working tree, untracked files as ``A``."""
    fields = _split_z(_git(top, "diff", "--name-status", "-z", "-M", "--no-ext-diff", base, "--", *pathspecs))
    out: list[tuple[str, str, str]] = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if status[:1] in ("R", "C"):
            out.append((status[0], fields[i + 1], fields[i + 2]))
            i += 3
        else:
            out.append((status[0], fields[i + 1], fields[i + 1]))
            i += 2
    for path in _split_z(_git(top, "ls-files", "-z", "--others", "--exclude-standard", "--", *pathspecs)):
        out.append(("A", path, path))
    return out


class _Owners:
    """Which skill a repository path belongs to: the outermost of ``folders`` (skill folders, paths relative to
    the repository's top) holding it."""

    def __init__(self, folders: Iterable[str]) -> None:
        self.folders = set(folders)

    def __call__(self, path: str) -> str | None:
        if "" in self.folders:
            return ""
        folder = ""
        for part in path.split("/")[:-1]:
            folder = f"{folder}/{part}" if folder else part
            if folder in self.folders:
                return folder
        return None


def tree_files(top: Path, commit: str, folders: Iterable[str], config: RegistryConfig
               ) -> dict[str, list[SkillFile]]:
    """Each skill folder's files (``folders``: paths relative to the repository's top) as they were at ``commit``,
    the way the loader would read them from disk.

    Executable bits come from the tree modes; symbolic links, submodules, junk files and files over the size
    limit are left out, as the loader leaves them out of a published skill.
    """
    folders = sorted(set(folders))
    if not folders:
        return {}
    owner = _Owners(folders)
    listing = _split_z(_git(top, "ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--",
                            *(f"{folder}/" if folder else "." for folder in folders)))
    wanted: list[tuple[str, str, str, bool]] = []  # (skill folder, relative path, blob id, executable)
    for line in listing:
        meta, _, path = line.partition("\t")
        mode, kind, blob, size = meta.split()
        folder = owner(path)
        if kind != "blob" or mode not in _BLOB_MODES or folder is None:
            continue
        rel = path[len(folder) + 1:] if folder else path
        parts = PurePosixPath(rel).parts
        if any(is_junk(p, True) for p in parts[:-1]) or is_junk(parts[-1], False):
            continue
        if int(size) > config.limits.max_file_bytes:
            continue
        wanted.append((folder, rel, blob, _BLOB_MODES[mode]))
    blobs = _read_blobs(top, [w[2] for w in wanted])
    files: dict[str, list[SkillFile]] = {}
    for folder, rel, blob, executable in wanted:
        files.setdefault(folder, []).append(SkillFile(rel, blobs[blob], executable))
    return files


def _skill_folders_at(top: Path, commit: str, paths: Iterable[str]) -> set[str]:
    """The folders among the parents of ``paths`` that held a SKILL.md at ``commit`` (and would be skills)."""
    folders = {"/".join(parts[:i]) for parts in (p.split("/") for p in paths) for i in range(1, len(parts))}
    folders = {f for f in folders if is_skill_folder(f)}
    if not folders:
        return set()
    specs = [f"{folder}/{name}" for folder in sorted(folders) for name in SKILL_FILES]
    held: set[str] = set()
    for i in range(0, len(specs), 512):  # a command line of bounded length
        listed = _git(top, "ls-tree", "-z", "--name-only", "--full-tree", commit, "--", *specs[i:i + 512])
        held.update(path.rpartition("/")[0] for path in _split_z(listed))
    return held


def _read_blobs(top: Path, ids: list[str]) -> dict[str, bytes]:
    """Every blob's bytes in one ``git cat-file --batch``."""
    unique = sorted(set(ids))
    if not unique:
        return {}
    out = _git(top, "cat-file", "--batch", stdin="".join(f"{i}\n" for i in unique).encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for _ in unique:
        header_end = out.index(b"\n", pos)
        oid, kind, size = out[pos:header_end].decode().split()
        start = header_end + 1
        blobs[oid] = out[start:start + int(size)]
        pos = start + int(size) + 1
    return blobs


_Change = tuple[str, str, str | None]  # (skill folder, status, the folder it was renamed from)


def _classify(entries: list[tuple[str, str, str]], owner: Callable[[str], str | None],
              before: dict[str, list[SkillFile]], now: set[str], touched: set[str]) -> list[_Change]:
    """``(skill folder, status, old folder)`` per touched skill; a removed folder whose files git saw move into an
    added folder is reported once, as that folder renamed."""
    moves: Counter[tuple[str, str]] = Counter()
    for status, old, new in entries:
        if status == "R":
            a, b = owner(old), owner(new)
            if a is not None and b is not None and a != b:
                moves[(a, b)] += 1
    removed = {n for n in touched if n in before and n not in now}
    added = {n for n in touched if n not in before and n in now}
    renamed_from: dict[str, str] = {}
    for (old, new), _count in sorted(moves.items(), key=lambda item: (-item[1], item[0])):
        if old in removed and new in added and new not in renamed_from and old not in renamed_from.values():
            renamed_from[new] = old
    out: list[tuple[str, str, str | None]] = []
    for name in sorted(touched):
        if name in renamed_from:
            out.append((name, RENAMED, renamed_from[name]))
        elif name in renamed_from.values():
            continue
        elif name in removed:
            out.append((name, REMOVED, None))
        elif name in added:
            out.append((name, ADDED, None))
        elif name in now:
            out.append((name, MODIFIED, None))
    return out


def validate_changes(config: RegistryConfig, ref: str, baseline: BaselineCheck | None = None) -> ChangeReport:
    """Validate the skills changed since ``ref`` fully, and every skill against the registry-wide rules
    (under ``config.profile``, the command's flag merged in), each skill's findings through ``baseline``. Skills
    are named by their folder's path."""
    profile = config.profile
    top = _top(config.root)
    root = config.root.resolve()
    try:
        base_rel = root.relative_to(top).as_posix()
    except ValueError:
        raise UsageError(f"{display_path(root)} is outside the git repository at {top}") from None
    base_rel = "" if base_rel == "." else base_rel
    found = registry_skills(config)
    base = merge_base(top, ref)
    specs = pathspecs(base_rel, found.scope)
    config_rel = None
    if config.path is not None and config.path.resolve().is_relative_to(top):
        config_rel = config.path.resolve().relative_to(top).as_posix()
        specs.append(config_rel)
    entries = changed_paths(top, base, specs)
    config_changed = config_rel is not None and any(config_rel in (old, new) for _, old, new in entries)

    def in_repo(path: str) -> str:
        return f"{base_rel}/{path}" if base_rel and path != "." else (base_rel or ("" if path == "." else path))

    current = {in_repo(s.path): s for s in found.skills}
    owner_now = _Owners(current)
    owner_then = _Owners(_skill_folders_at(top, base, [p for _, old, new in entries for p in (old, new)]))

    def owner(path: str) -> str | None:
        folder = owner_now(path)
        return folder if folder is not None else owner_then(path)

    touched = {n for _, old, new in entries for n in (owner(old), owner(new)) if n is not None}
    before = tree_files(top, base, touched - (set(current) - set(owner_then.folders)), config)
    shown = {folder: _relative(folder, base_rel) for folder in touched | set(current)}

    # One skill in memory at a time: the checked ones are kept without their file bytes, the others only as the
    # name keys the registry-wide rules need.
    checked: list[Skill] = []
    digests: dict[str, str] = {}
    kept: dict[str, Skill] = {}
    diagnostics: list[Diagnostic] = []
    names = RegistryNames()
    for folder, each in sorted(current.items(), key=lambda item: item[1].path):
        findings: list[Diagnostic] = []
        whole = config_changed or folder in touched
        if whole:
            skill, findings = validate_folder(each.folder, config, profile, key=each.path)
            checked.append(replace(skill, files=()))
        else:
            skill = load_skill(each.folder, config).skill
        findings.extend(names.add(NameKey.of(skill, each.path)))
        diagnostics.extend(findings if baseline is None else baseline.apply(each.folder, findings, whole=whole))
        if folder in touched:
            kept[folder], digests[folder] = replace(skill, files=()), skill.digest
    diagnostics.extend(refusal_finding(r) for r in found.refused)
    diagnostics.sort(key=Diagnostic.sort_key)

    changes = []
    for folder, status, old_folder in _classify(entries, owner, before, set(current), touched):
        old_files = before.get(old_folder or folder)
        changes.append(SkillChange(
            name=shown[folder], status=status,
            old_digest=skill_digest(old_files) if old_files is not None and status != ADDED else None,
            new_digest=digests.get(folder),
            old_name=shown[old_folder] if old_folder is not None else None,
        ))
    if config.policy.version_bump:
        for change, (folder, status, old_folder) in zip(changes, _classify(entries, owner, before, set(current),
                                                                           touched), strict=True):
            if folder in kept and change.old_digest != change.new_digest:
                old_files = before.get(old_folder or folder) if status != ADDED else None
                found_bump = check_version_bump(kept[folder], old_files, ref, config)
                diagnostics.extend(replace(d, skill=shown[folder]) for d in found_bump)
        diagnostics.sort(key=Diagnostic.sort_key)
    return ChangeReport(ref=ref, base=base, changes=tuple(changes),
                        report=ValidationReport(tuple(checked), tuple(diagnostics)), config_changed=config_changed)


def _relative(folder: str, base_rel: str) -> str:
    """A skill folder's path (relative to the repository's top) as discovery names it: relative to the registry."""
    if not base_rel:
        return folder or "."
    return folder[len(base_rel) + 1:] if folder.startswith(base_rel + "/") else ("." if folder == base_rel else folder)


def _version_of(files: list[SkillFile] | None, config: RegistryConfig) -> str | None:
    """``metadata.version`` of a skill as it was at the base (None: no such skill, no SKILL.md or no version)."""
    if files is None:
        return None
    by_path = {f.path: f for f in files}
    md = by_path.get(SKILL_MD) or by_path.get(SKILL_MD_FALLBACK)
    if md is None:
        return None
    parsed = parse_skill_md(md.data, SKILL_MD, max_frontmatter_bytes=config.limits.max_frontmatter_bytes)
    meta = parsed.frontmatter.data.get("metadata") if parsed.frontmatter else None
    version = meta.get("version") if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def _semver(text: str | None) -> semver.Version | None:
    if text is None:
        return None
    try:
        return semver.Version.parse(text)
    except ValueError:
        return None


def check_version_bump(skill: Skill, old_files: list[SkillFile] | None, ref: str,
                       config: RegistryConfig) -> list[Diagnostic]:
    """SK306: a skill whose files changed since ``ref`` has a higher ``metadata.version`` (semver precedence);
    a new skill has a valid one. ``old_files`` is the skill at the base, None for a new skill."""
    file = f"{display_path(skill.folder)}/{skill.skill_md}"
    fm = skill.frontmatter
    if fm is None:  # SKILL.md does not parse: that finding says enough
        return []
    line = fm.lines.get("metadata.version") or fm.lines.get("metadata") or fm.line_of("name")
    rule = RULES["SK306"]
    new_text, old_text = skill.version, _version_of(old_files, config)
    new, old = _semver(new_text), _semver(old_text)
    if new_text is None:
        suggestion = str(old.bump_patch()) if old else "1.0.0"
        was = f" (it was {old_text} at {ref})" if old_text else ""
        what = "is new" if old_files is None else f"files changed since {ref}"
        return [rule.at(file, line, f"{skill.name}: {what} but it has no `metadata.version`{was}; add one, e.g. "
                                    f"`version: \"{suggestion}\"` under `metadata:`", skill=skill.name, hint="")]
    if new is None:
        if config.policy.semver:  # SK304 already says so
            return []
        return [rule.at(file, line, f"{skill.name}: `metadata.version` {new_text!r} is not a semantic version, so "
                                    f"it cannot be compared with {old_text or 'earlier versions'}", skill=skill.name,
                        hint="Use MAJOR.MINOR.PATCH, e.g. `1.0.0`.")]
    if old is None:  # a new skill, or one whose earlier version was missing or not semver: any valid one will do
        return []
    if new.compare(old) > 0:
        return []
    if new.compare(old) == 0:
        still = "still" if new_text == old_text else f"{new_text}, the same version as"
        return [rule.at(file, line, f"{skill.name}: files changed since {ref} but metadata.version is {still} "
                                    f"{old_text}; raise it, e.g. to {old.bump_patch()}", skill=skill.name, hint="")]
    return [rule.at(file, line, f"{skill.name}: metadata.version went down from {old_text} at {ref} to {new_text}; "
                                f"versions only go up: raise it above {old_text}, e.g. to {old.bump_patch()}",
                    skill=skill.name, hint="")]


# Formatters: plain strings, shown by the CLI before the findings.

def _digest_cell(digest: str | None) -> str:
    return short_digest(digest) if digest else "-"


def _findings_cell(diagnostics: list[Diagnostic]) -> str:
    if not diagnostics:
        return "none"
    parts = []
    for severity in (Severity.ERROR, Severity.WARNING):
        codes = sorted({d.code for d in diagnostics if d.severity is severity})
        count = sum(d.severity is severity for d in diagnostics)
        if count:
            parts.append(f"{counted(count, severity.value)}: {', '.join(codes)}")
    return "; ".join(parts)


def _describe(change: SkillChange) -> str:
    if change.status == ADDED:
        return f"added {_digest_cell(change.new_digest)}"
    if change.status == REMOVED:
        return f"removed (was {_digest_cell(change.old_digest)})"
    arrow = f"{_digest_cell(change.old_digest)} -> {_digest_cell(change.new_digest)}"
    if change.status == RENAMED:
        return f"renamed from {change.old_name}, {arrow}"
    return f"modified {arrow}"


def format_changes_text(result: ChangeReport) -> str:
    head = f"Changed since {result.ref} (merge base {result.base[:12]})"
    if not result.changes:
        lines = [f"No skill changed since {result.ref} (merge base {result.base[:12]})."]
    else:
        lines = [f"{head}: {counted(len(result.changes), 'skill')}"]
        width = max(len(c.name) for c in result.changes)
        for change in result.changes:
            found = result.findings_of(change.name)
            findings = "" if change.status == REMOVED else f"  [{_findings_cell(found) if found else 'no findings'}]"
            lines.append(f"  {change.name:<{width}}  {_describe(change)}{findings}")
    if result.config_changed:
        lines.append("registry.yaml changed: every skill was validated.")
    return "\n".join(lines) + "\n"


def changes_markdown(result: ChangeReport) -> str:
    """The job-summary section listing every changed skill with its old and new digest and its findings."""
    out = [f"## Changed skills since `{result.ref}`", "",
           f"Merge base `{result.base[:12]}`. Digests are shortened to the 12 hex digits that name the bundles.", ""]
    if result.config_changed:
        out += ["`registry.yaml` changed, so every skill was validated.", ""]
    if not result.changes:
        out += ["No skill changed.", ""]
        return "\n".join(out) + "\n"
    out += ["| Skill | Change | Old digest | New digest | Findings |", "| --- | --- | --- | --- | --- |"]
    for c in result.changes:
        change = f"renamed from `{c.old_name}`" if c.status == RENAMED else c.status
        old = f"`{short_digest(c.old_digest)}`" if c.old_digest else "-"
        new = f"`{short_digest(c.new_digest)}`" if c.new_digest else "-"
        findings = "-" if c.status == REMOVED else _findings_cell(result.findings_of(c.name))
        out.append(f"| `{c.name}` | {change} | {old} | {new} | {findings} |")
    out.append("")
    return "\n".join(out) + "\n"
