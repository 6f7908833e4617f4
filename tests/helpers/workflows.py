"""What the workflow replays share: GitHub Actions' `${{ ... }}` expressions filled in from a known context."""

from __future__ import annotations

import re


def render(value: str, context: dict[str, str]) -> str:
    """``value`` with each `${{ expression }}` replaced by the context's value; an unknown one fails the test."""
    def expression(match: re.Match[str]) -> str:
        key = match.group(1).strip()
        assert key in context, f"the replay does not know the expression `{key}`"
        return context[key]
    return re.sub(r"\$\{\{(.*?)\}\}", expression, value)
