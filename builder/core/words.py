"""Counts in words: "1 skill", "2 skills", never "1 skills" or "skill(s)"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless the count is one (``plural`` when adding "s" is wrong)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
