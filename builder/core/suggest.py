"""One "did you mean ...?" for every place a user types a name the program knows a list of."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_match(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known name closest to ``word``, if one is close enough to be a likely typo."""
    found = difflib.get_close_matches(word, sorted(set(choices)), 1, cutoff)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """``"; did you mean NAME?"`` to append to a message, or ``""`` when nothing is close."""
    found = close_match(word, choices, cutoff)
    return f"; did you mean {found}?" if found and found != word else ""
