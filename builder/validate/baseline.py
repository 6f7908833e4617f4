"""The baseline: today's known findings, kept in ``.skillreg-baseline.json`` beside registry.yaml, so that a
registry adopted as it is can hold new and changed skills to the open standard (the ratchet of ESLint's bulk
suppressions and detekt's baselines).

An entry is a rule, a skill's folder (relative to the baseline's folder), a file in it and how many findings of
that rule the file has; never a line number, which moves with every edit above it. Under a baseline, a finding
it holds fails nothing; a finding of the open standard or of Claude Code's field types that it does not hold
(a new skill, or more findings in a file than it counts) fails validation whatever the profile; safety rules are
never held (``core.diagnostics.baselinable``). What is published is the profile's business, not the baseline's.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.config import RegistryConfig
from ..core.diagnostics import RULES, Diagnostic, Severity, baselinable, ratcheted
from ..core.errors import ConfigError
from ..core.fs import write_atomic
from ..core.git import git_output
from ..core.loader import display_path

BASELINE_NAME = ".skillreg-baseline.json"
BASELINE_VERSION = 1

Key = tuple[str, str, str]  # (skill folder, file in it, rule)
_RULE = re.compile(r"^SK[0-9]{3}$")
_ENTRY_KEYS = {"rule", "skill", "file", "count"}


@dataclass(frozen=True)
class Baseline:
    """How many findings of each rule each file of each skill had when the baseline was written."""

    counts: Mapping[Key, int] = field(default_factory=dict)
    lines: Mapping[Key, int] = field(default_factory=dict)  # each entry's line in the file it was read from

    @property
    def findings(self) -> int:
        return sum(self.counts.values())

    def to_bytes(self) -> bytes:
        """One entry a line, sorted by skill, file and rule, keys sorted: a diff shows exactly what changed."""
        rows = [json.dumps({"rule": rule, "skill": skill, "file": file, "count": count}, sort_keys=True,
                           ensure_ascii=False) for (skill, file, rule), count in sorted(self.counts.items())]
        findings = "[\n" + ",\n".join(f"    {row}" for row in rows) + "\n  ]" if rows else "[]"
        return f'{{\n  "findings": {findings},\n  "version": {BASELINE_VERSION}\n}}\n'.encode()

    @classmethod
    def parse(cls, data: bytes, where: str) -> Baseline:
        """Read a baseline; anything but the documented shape is a ``ConfigError`` naming ``where``."""
        try:
            text = data.decode("utf-8")
            raw = json.loads(text)
        except UnicodeDecodeError:
            raise ConfigError(f"{where}: not UTF-8 text") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        if not isinstance(raw, dict) or raw.get("version") != BASELINE_VERSION or \
                not isinstance(raw.get("findings"), list) or set(raw) != {"findings", "version"}:
            raise ConfigError(f"{where}: a baseline is {{\"findings\": [...], \"version\": {BASELINE_VERSION}}}; "
                              f"write it with `skillreg baseline`")
        counts: dict[Key, int] = {}
        for i, entry in enumerate(raw["findings"]):
            key, count = _entry(entry, f"{where}: findings[{i}]")
            if key in counts:
                raise ConfigError(f"{where}: findings[{i}]: {key[2]} in {key[0]}/{key[1]} is listed twice")
            counts[key] = count
        return cls(counts, _entry_lines(text))


def _entry(entry: object, where: str) -> tuple[Key, int]:
    if not isinstance(entry, dict) or set(entry) != _ENTRY_KEYS:
        raise ConfigError(f"{where}: an entry has exactly the keys count, file, rule and skill")
    rule, skill, file, count = entry["rule"], entry["skill"], entry["file"], entry["count"]
    if not isinstance(rule, str) or not _RULE.match(rule) or rule not in RULES:
        raise ConfigError(f"{where}: {rule!r} is not a rule code (`skillreg rules` lists them)")
    for name, value in (("skill", skill), ("file", file)):
        if not isinstance(value, str) or not value or value.startswith("/") or "\\" in value or \
                ".." in value.split("/"):
            raise ConfigError(f"{where}: `{name}` must be a relative path inside the registry, got {value!r}")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ConfigError(f"{where}: `count` must be a positive whole number, got {count!r}")
    return (skill, file, rule), count


def _entry_lines(text: str) -> dict[Key, int]:
    """The line of each entry written one to a line, as ``to_bytes`` writes them (others are left out)."""
    lines: dict[Key, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        row = line.strip().rstrip(",")
        if row.startswith("{") and row.endswith("}"):
            try:
                entry = json.loads(row)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("skill", "file", "rule")):
                lines.setdefault((entry["skill"], entry["file"], entry["rule"]), number)
    return lines


def baseline_path(config: RegistryConfig) -> Path:
    """Where a registry keeps its baseline: beside registry.yaml (the repository's root, as a rule)."""
    return config.root / BASELINE_NAME


def baseline_check(config: RegistryConfig) -> BaselineCheck | None:
    """What ``validate`` judges findings by: the registry's baseline, ratcheting, closing with its stale
    entries; None when the registry has no baseline."""
    baseline = read_baseline(config)
    if baseline is None:
        return None
    return BaselineCheck(baseline, config.root, file=display_path(baseline_path(config)))


def read_baseline(config: RegistryConfig) -> Baseline | None:
    """The registry's baseline, or None when it has none."""
    path = baseline_path(config)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{display_path(path)}: cannot be read ({exc.strerror})") from None
    return Baseline.parse(data, display_path(path))


class BaselineCheck:
    """Applies a baseline to one skill's findings at a time and keeps the counts it saw, for the stale report
    and for writing a new baseline. ``ratchet``: a finding of the open standard or of Claude Code's field types
    that the baseline does not hold becomes an error (``validate``); without it, findings only learn whether
    the baseline holds them (``build``)."""

    def __init__(self, baseline: Baseline | None, root: Path, *, ratchet: bool = True, file: str | None = None
                 ) -> None:
        self.baseline = baseline or Baseline()
        self.root = os.path.realpath(root)
        self.ratchet = ratchet
        self.file = file  # the baseline as findings name it: given, a run closes with its stale entries
        self.seen: Counter[Key] = Counter()
        self.checked: set[str] = set()  # skill folders seen, relative to the root

    def skill_path(self, folder: str | Path) -> str | None:
        """A skill folder as the baseline names it, relative to the root; None outside it."""
        rel = os.path.relpath(os.path.realpath(folder), self.root)
        if rel == os.curdir:
            return "."
        return None if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel.replace(os.sep, "/")

    def apply(self, folder: str | Path, findings: Sequence[Diagnostic], *, whole: bool = True) -> list[Diagnostic]:
        """``findings`` (all of one skill's, from the folder ``folder``) as the baseline sees them; ``whole``
        False: only the registry-wide rules checked the skill, so its other entries cannot be judged stale."""
        skill = self.skill_path(folder)
        if skill is None:
            return list(findings)
        shown = display_path(Path(folder))
        keys = [(skill, _file_in(d.file, shown), d.code) if baselinable(d) else None for d in findings]
        counts = Counter(key for key in keys if key is not None)
        if whole:
            self.checked.add(skill)
        self.seen.update(counts)
        return [d if key is None else self._judged(d, counts[key], self.baseline.counts.get(key, 0))
                for d, key in zip(findings, keys)]

    def _judged(self, d: Diagnostic, now: int, known: int) -> Diagnostic:
        if now <= known:
            return replace(d, baselined=True)
        if not self.ratchet or not ratcheted(d.code):
            return d
        more = f"{now} in this file now, {known} in the baseline" if known else "not in the baseline"
        return replace(d, severity=Severity.ERROR,
                       message=f"{d.message} ({more}: a new or changed skill must meet the open standard)")

    def closing(self) -> list[Diagnostic]:
        """What a run adds once every skill is checked: the stale entries, when the check has a ``file``."""
        return self.stale() if self.file is not None else []

    def stale(self) -> list[Diagnostic]:
        """SK606 for each entry whose findings are fixed (fewer now) or whose skill folder is gone. Skills this
        run did not check are left alone, unless their folder is gone."""
        file = self.file or BASELINE_NAME
        out = []
        for key, count in sorted(self.baseline.counts.items()):
            skill, path, rule = key
            if skill in self.checked:
                now = self.seen[key]
                if now >= count:
                    continue
                what = f"{count} {rule} in {skill}/{path} in the baseline, {now} now"
            elif os.path.isdir(os.path.join(self.root, skill)):
                continue
            else:
                what = f"{skill} is gone, and the baseline still holds its {count} {rule}"
            out.append(RULES["SK606"].at(file, self.baseline.lines.get(key, 0), f"stale baseline entry: {what}"))
        return out

    def counted(self, keep: Baseline | None = None) -> Baseline:
        """A baseline of what this check saw; with ``keep``, no more than ``keep`` holds (pruning)."""
        if keep is None:
            return Baseline(dict(self.seen))
        return Baseline({key: min(count, self.seen[key]) for key, count in keep.counts.items()
                         if self.seen[key] > 0})


def judge_registry(check: BaselineCheck, skills: Iterable[tuple[str, Sequence[Diagnostic]]],
                   registry: Sequence[Diagnostic]) -> list[Diagnostic]:
    """Every skill's findings (folder, findings) and the registry-wide ones (each on its skill's SKILL.md) as
    ``check`` sees them: what the build asks of a baseline."""
    out = [d for folder, found in skills for d in check.apply(folder, found)]
    by_folder: dict[str, list[Diagnostic]] = {}
    for d in registry:
        by_folder.setdefault(posixpath.dirname(d.file), []).append(d)
    return out + [d for folder, found in by_folder.items() for d in check.apply(folder, found, whole=False)]


def _file_in(file: str, folder: str) -> str:
    """A finding's file relative to its skill's folder (both as ``display_path`` writes them); ``.``: the folder."""
    if file == folder:
        return "."
    prefix = folder + "/" if folder != "/" else folder
    return file[len(prefix):] if file.startswith(prefix) else posixpath.basename(file)


def growth(now: Baseline, base: Baseline, ref: str, file: str,
           renamed: Mapping[str, str] | None = None) -> list[Diagnostic]:
    """SK605 for every entry ``now`` holds beyond what the base branch's baseline ``base`` held: a pull request
    may shrink the baseline, never grow it. ``renamed`` maps a skill folder to the one it was moved from."""
    renamed = renamed or {}
    out = []
    for key, count in sorted(now.counts.items()):
        skill, path, rule = key
        before = base.counts.get((renamed.get(skill, skill), path, rule), 0)
        if count > before:
            out.append(RULES["SK605"].at(file, now.lines.get(key, 0),
                                         f"the baseline holds {count} {rule} in {skill}/{path}, {before} on {ref}"))
    return out


def base_baseline(config: RegistryConfig, ref: str) -> Baseline | None:
    """The baseline as it was where the branch left ``ref`` (their merge base, read from git), or None when it
    had none there (or git cannot say: ``validate_changes`` reports an unknown ref itself)."""
    path = baseline_path(config).resolve()
    top = git_output(["rev-parse", "--show-toplevel"], config.root)
    base = git_output(["merge-base", ref, "HEAD"], config.root)
    if top is None or base is None:
        return None
    try:
        rel = path.relative_to(Path(os.fsdecode(top.strip())).resolve()).as_posix()
    except ValueError:
        return None
    commit = base.decode().strip()
    data = git_output(["show", f"{commit}:{rel}"], config.root)
    return None if data is None else Baseline.parse(data, f"{rel} at {ref} ({commit[:12]})")


@dataclass(frozen=True)
class BaselineWritten:
    """What ``write_baseline`` wrote, for the command to say."""

    path: Path
    findings: int  # findings the baseline holds now
    skills: int  # skills they are in
    checked: int  # skills validated
    added: int  # findings held now that the earlier baseline did not hold
    removed: int  # findings the earlier baseline held that are gone (fixed, or their skill removed)
    unheld: Mapping[str, int] = field(default_factory=dict)  # errors by rule that no baseline holds (safety)


def write_baseline(config: RegistryConfig, *, prune: bool = False, jobs: int | None = None,
                   paths: Sequence[Path] | None = None) -> BaselineWritten:
    """Validate every skill (under ``config.profile``) and write the registry's baseline of what was found;
    with ``prune``, only remove what is fixed from the baseline there is, never add. The file is replaced in one
    step, sorted and byte-identical for the same findings. ``paths``: where to look for skills (default: the
    registry's, as ``validate`` with no argument)."""
    from .run import ValidationRun

    before = read_baseline(config)
    if prune and before is None:
        raise ConfigError(f"{display_path(baseline_path(config))}: no baseline to prune; write one with "
                          f"`skillreg baseline`")
    check = BaselineCheck(None, config.root, ratchet=False)
    run = ValidationRun(list(paths or ()), config, jobs=jobs, baseline=check)  # none: every skill discovery finds
    unheld: Counter[str] = Counter(d.code for d in run if d.severity is Severity.ERROR and not baselinable(d))
    written = check.counted(before if prune else None)
    path = baseline_path(config)
    write_atomic(path, written.to_bytes())
    old = before.counts if before else {}
    added = sum(max(0, count - old.get(key, 0)) for key, count in written.counts.items())
    removed = sum(max(0, count - written.counts.get(key, 0)) for key, count in old.items())
    return BaselineWritten(path, written.findings, len({key[0] for key in written.counts}), run.tally.skills,
                           added, removed, dict(sorted(unheld.items())))

