"""Findings as people read them: a rule that repeats in one skill (a long path in every file, a font file after
another) is one line with a count, not hundreds (a rule found up to ``SHOWN_EACH`` times is shown each time);
``--verbose`` shows every finding, those the baseline holds too. Tools read JSON, which always holds every
finding."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..core.diagnostics import Diagnostic


@dataclass(frozen=True)
class Shown:
    """One finding to show, and how many more findings of its rule its skill has that are not shown."""

    finding: Diagnostic
    more: int = 0

    def note(self) -> str:
        """What the line adds after the message: how many more, or that the baseline holds it."""
        d = self.finding
        if d.baselined:
            return " (in the baseline)"
        if not self.more:
            return ""
        where = f"skill `{d.skill}`" if d.skill else f"`{d.file}`"
        return f" (and {self.more:,} more like it in {where}; --verbose shows every one)"


def grouped(findings: Iterable[Diagnostic], *, verbose: bool = False) -> Iterator[Shown]:
    """``findings`` in their order, each skill's findings of a rule that repeats shown once (the first, with the
    count of the others) and those the baseline holds left out; with ``verbose``, every finding. Findings of one skill
    arrive together (they share their folder's path, and come sorted by path), so one skill is held at a time.
    Every finding is read, so counts kept by the stream are complete once this ends."""
    block: list[Diagnostic] = []
    owner: str | None = None
    for d in findings:
        if verbose:
            yield Shown(d)
            continue
        if d.baselined:
            continue
        if (d.skill or d.file) != owner:
            yield from _once_per_rule(block)
            block, owner = [], d.skill or d.file
        block.append(d)
    yield from _once_per_rule(block)


# A rule found up to this many times in one skill is shown each time; more often, once with the count.
SHOWN_EACH = 3


def _once_per_rule(block: list[Diagnostic]) -> Iterator[Shown]:
    count: dict[tuple[str, str], int] = {}
    for d in block:
        key = (d.code, d.severity.value)
        count[key] = count.get(key, 0) + 1
    done: set[tuple[str, str]] = set()
    for d in block:
        key = (d.code, d.severity.value)
        if count[key] <= SHOWN_EACH:
            yield Shown(d)
        elif key not in done:
            done.add(key)
            yield Shown(d, count[key] - 1)
