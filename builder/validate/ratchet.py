"""The pull-request check under a baseline (``validate --changed-since REF``): the changed skills judged against
the branch's baseline, its stale entries, and a refusal of any entry the baseline gained since REF, so a pull
request cannot grandfather its own findings. Without a baseline on either side, the check is what it always was.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from ..core.config import RegistryConfig
from ..core.diagnostics import Diagnostic
from ..core.loader import display_path
from .baseline import Baseline, BaselineCheck, base_baseline, baseline_path, growth, read_baseline
from .changes import RENAMED, ChangeReport, validate_changes
from .report import ValidationReport


def validate_pull_request(config: RegistryConfig, ref: str) -> ChangeReport:
    """``validate_changes`` through the registry's baseline. When the branch deletes a baseline its base had,
    the changed skills are judged against an empty one: deleting it lets nothing in."""
    now = read_baseline(config)
    base = base_baseline(config, ref)
    shown = display_path(baseline_path(config))
    check = BaselineCheck(now, config.root, file=shown) if now is not None or base is not None else None
    changes = validate_changes(config, ref, check)
    if check is None:
        return changes
    extra = check.closing()
    if base is not None:
        extra += growth(now or Baseline(), base, ref, shown, _renamed(config, changes))
    if not extra:
        return changes
    found = sorted([*changes.report.diagnostics, *extra], key=Diagnostic.sort_key)
    return replace(changes, report=ValidationReport(changes.report.skills, tuple(found)))


def _renamed(config: RegistryConfig, changes: ChangeReport) -> dict[str, str]:
    """Each renamed skill's folder, as the baseline names it, and the folder it had at the base."""
    def path(name: str) -> str:
        return posixpath.normpath(f"{config.skills_dir}/{name}")

    return {path(c.name): path(c.old_name) for c in changes.changes if c.status == RENAMED and c.old_name}
