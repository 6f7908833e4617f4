"""``skillreg init``: make an existing git repository of skills a registry, without moving a file.

It finds the skills where agents find them, then writes ``registry.yaml`` (title and description from the
README, addresses from the ``origin`` remote, the skill locations found, the ``agents`` profile), the
pull-request and Pages workflows, and the baseline of the findings the skills have today. Everything is worked
out before the first write; a file that exists already stops it (unless ``force``) with nothing written, and
the only tracked file it may change without ``force`` is ``.gitignore``, by appending the build's output folder.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.config import CONFIG_NAME, load_config
from ..core.diagnostics import Severity, baselinable
from ..core.discovery import Discovery, discover
from ..core.errors import UsageError
from ..core.fs import create_file, write_atomic
from ..core.git import git_output
from ..validate.baseline import BASELINE_NAME, BaselineCheck
from ..validate.run import ValidationRun
from .layout import Layout, describe_layout, skill_locations
from .origin import Repository
from .readme import read_readme
from .registry_file import BUILD_OUTPUT, Settings, registry_yaml
from .workflows import UNPINNED, Workflows, installed_commit, is_commit, workflows


@dataclass(frozen=True)
class InitPlan:
    """Everything ``init`` will write, worked out before the first write."""

    repository: Repository
    found: Discovery
    layout: Layout
    settings: Settings
    workflows: Workflows
    pinned: bool  # the action is pinned to a commit (else the workflows say where to put one)
    files: dict[str, bytes] = field(default_factory=dict)  # path in the repository -> content
    baseline: BaselineFile | None = None
    ignore: tuple[str, ...] = ()  # lines to append to .gitignore

    @property
    def root(self) -> Path:
        return self.repository.root


@dataclass(frozen=True)
class BaselineFile:
    """The baseline ``init`` writes: its path and bytes, how many findings of how many skills it holds, and the
    skills with errors no baseline holds (safety rules), by rule: those the build leaves out."""

    path: str
    data: bytes
    findings: int
    skills: int
    unheld: Mapping[str, int] = field(default_factory=dict)  # rule -> skills with an error of it


def record_findings(root: Path, text: str) -> BaselineFile:
    """Validate every skill as registry.yaml's ``text`` says (read by the loader the commands use) and record
    today's findings as the registry's baseline, in memory."""
    with tempfile.TemporaryDirectory(prefix="skillreg-init-") as folder:
        staged = Path(folder) / CONFIG_NAME
        staged.write_text(text, encoding="utf-8")
        config = load_config(staged)
    config = replace(config, root=root.resolve(), path=root / CONFIG_NAME)
    check = BaselineCheck(None, config.root, ratchet=False)
    unheld: dict[str, set[str]] = {}
    for d in ValidationRun([], config, baseline=check):
        if d.severity is Severity.ERROR and not baselinable(d):
            unheld.setdefault(d.code, set()).add(d.skill)
    held = check.counted()
    return BaselineFile(BASELINE_NAME, held.to_bytes(), held.findings, len({key[0] for key in held.counts}),
                        {code: len(skills) for code, skills in sorted(unheld.items())})


@dataclass(frozen=True)
class InitResult:
    written: tuple[str, ...]
    replaced: tuple[str, ...]  # of ``written``, those that existed (with force)
    ignored: tuple[str, ...]  # lines appended to .gitignore


# --------------------------------------------------------------------------------------------------- planning

def default_settings(repo: Repository, found: Discovery) -> Settings:
    """registry.yaml's values as found: README, origin remote, the skill locations."""
    readme = read_readme(repo.root)
    name = repo.origin.name if repo.origin and repo.origin.name else repo.root.name
    title, title_from = (readme.title, readme.path) if readme.title else (name, "")
    description = readme.description or (f"Agent Skills from {repo.origin.owner}/{name}." if repo.origin and
                                         repo.origin.owner else "")
    origin = repo.origin
    return Settings(title=title, description=description, base_url=origin.base_url if origin else "",
                    repository=origin.repository if origin else "", locations=skill_locations(found),
                    title_from=title_from)


def plan_init(repo: Repository, settings: Settings, found: Discovery, *, action_ref: str | None,
              baseline_path: str | None = None,
              make_baseline: Callable[[Path, str], BaselineFile] | None = None) -> InitPlan:
    """Every file ``init`` writes, as bytes. ``make_baseline(root, registry_yaml_text)`` records today's findings
    in ``baseline_path``."""
    ref = action_ref or installed_commit() or UNPINNED
    if action_ref is not None and not is_commit(action_ref):
        raise UsageError(f"--action-ref {action_ref!r} is not a full commit id (40 hex digits); the workflows pin "
                         "skill-registry's action to a commit")
    flows = workflows(ref, repo.branch)
    text = registry_yaml(settings, baseline_path if make_baseline else None)
    files = {CONFIG_NAME: text.encode("utf-8"), **{p: t.encode("utf-8") for p, t in flows.files.items()}}
    baseline = make_baseline(repo.root, text) if make_baseline else None
    if baseline is not None:
        files[baseline.path] = baseline.data
    return InitPlan(repo, found, describe_layout(found), settings, flows, is_commit(ref), files, baseline,
                    _missing_ignores(repo.root))


def targets_in_the_way(root: Path, paths: Sequence[str]) -> list[str]:
    """Of ``paths``, those that exist already (a link counts, even a dangling one)."""
    return [p for p in paths if os.path.lexists(root / p)]


def refuse_existing(root: Path, paths: Sequence[str]) -> None:
    """A UsageError naming the files that exist, so that nothing is written."""
    taken = targets_in_the_way(root, paths)
    if taken:
        names = " and ".join([", ".join(taken[:-1]), taken[-1]] if len(taken) > 1 else taken)
        raise UsageError(f"{names} already exist{'s' if len(taken) == 1 else ''} in {root}; nothing was written "
                         "(pass --force to replace)")


def _missing_ignores(root: Path) -> tuple[str, ...]:
    """The build's output folder, when .gitignore does not ignore it yet (git's own reading of the rules)."""
    done = git_output(["check-ignore", "--no-index", "-q", f"{BUILD_OUTPUT}/"], root)
    return () if done is not None else (f"/{BUILD_OUTPUT}/",)


# ---------------------------------------------------------------------------------------------------- writing

def write_init(plan: InitPlan, *, force: bool) -> InitResult:
    """Write the plan's files (new files only, unless ``force``) and append to .gitignore. A failure removes the
    files this call created, so the repository is as it was (a file ``force`` replaced keeps its new bytes)."""
    root = plan.root
    if not force:
        refuse_existing(root, list(plan.files))
    created: list[Path] = []
    replaced: list[str] = []
    try:
        for rel, data in plan.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(path):
                if not force:  # appeared since the check: still never replaced without force
                    refuse_existing(root, [rel])
                if path.is_dir() and not path.is_symlink():
                    raise UsageError(f"{rel} is a folder; remove it or move it away first")
                write_atomic(path, data)
                replaced.append(rel)
            else:
                create_file(path, data)
                created.append(path)
        ignored = _append_ignores(root, plan.ignore)
    except BaseException:
        for path in created:
            try:
                path.unlink()
            except OSError:
                pass
        raise
    return InitResult(tuple(plan.files), tuple(replaced), ignored)


def _append_ignores(root: Path, lines: tuple[str, ...]) -> tuple[str, ...]:
    """Append ``lines`` to .gitignore (created when missing); a .gitignore that is a link or not a file is left
    alone (nothing appended)."""
    if not lines:
        return ()
    path = root / ".gitignore"
    if os.path.lexists(path) and (path.is_symlink() or not path.is_file()):
        return ()
    before = path.read_bytes() if path.exists() else b""
    text = ("" if not before or before.endswith(b"\n") else "\n") + \
        "# The registry's build output (skillreg build)\n" + "".join(f"{line}\n" for line in lines)
    with path.open("ab") as fh:
        fh.write(text.encode("utf-8"))
    return lines


def found_skills(repo: Repository) -> Discovery:
    """The skills of the repository, found where agents find them; an error that says where it looked when
    there is none."""
    return discover(repo.root, exclude=[repo.root / BUILD_OUTPUT]).require()
