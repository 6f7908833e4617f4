"""The ``<available_skills>`` block agents put in their system prompt, laid out as skills-ref's ``to-prompt``."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from ..core.model import Skill


def to_prompt(skills: Sequence[Skill]) -> str:
    """One ``<skill>`` per skill with name, description and the absolute path of its SKILL.md."""
    lines = ["<available_skills>"]
    for skill in skills:
        name = skill.field("name")
        name = name.strip() if isinstance(name, str) else skill.name
        location = Path(skill.folder).resolve() / skill.skill_md
        lines += ["<skill>", "<name>", html.escape(name), "</name>",
                  "<description>", html.escape(skill.description), "</description>",
                  "<location>", str(location), "</location>", "</skill>"]
    lines.append("</available_skills>")
    return "\n".join(lines)
