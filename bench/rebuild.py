"""The scale benchmark's further rebuild figures (issue 17): after the one-skill body change ``measure`` times,
a rebuild with nothing changed, and one after a changed description (which moves search rows, so the sharded
search index is updated as well). Each change is put back and built again, so the output ends as it began."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .harness import run_process

_DESCRIPTION = re.compile(rb"^description: ", re.MULTILINE)


def rebuild_figures(command: list[str], env: dict[str, str], skill: Path) -> dict[str, Any]:
    """Seconds of ``command`` (a build of the output ``measure`` made) with nothing changed and after the
    description of ``skill`` (a skill folder) changed; ``skill``'s SKILL.md is left as it was found."""
    run_process(command, env=env, timeout=3600)  # the body change ``measure`` timed, put back
    unchanged = run_process(command, env=env, timeout=3600)
    skill_md = skill / "SKILL.md"
    before = skill_md.read_bytes()
    changed, count = _DESCRIPTION.subn(b"description: Quagga-striped, ", before, count=1)
    if not count:
        return {"nothing-changed rebuild seconds": unchanged.seconds}
    skill_md.write_bytes(changed)
    try:
        described = run_process(command, env=env, timeout=3600)
    finally:
        skill_md.write_bytes(before)
    run_process(command, env=env, timeout=3600)
    return {"nothing-changed rebuild seconds": unchanged.seconds,
            "description-change rebuild seconds": described.seconds}
