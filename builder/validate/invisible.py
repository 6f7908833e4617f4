"""Invisible characters that can hide text from a reviewer (SK511): zero-width and bidirectional controls and
Unicode tag characters, found in a file's text and each run described, hidden tag text decoded."""

from __future__ import annotations

import collections
import re
import unicodedata
from collections.abc import Iterable

from ..core.diagnostics import RULES, Diagnostic

# A zero-width joiner counts only after a character that never starts an emoji sequence.
_HIDING = "[\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|(?<=[\x00-\u1fff])\u200d"
_TAGS = "[\U000e0000-\U000e007f]"
INVISIBLE = re.compile(f"{_TAGS}|{_HIDING}")
# Each run of them is one finding: a run of tag characters (ASCII shifted by 0xE0000) is hidden text, shown decoded.
INVISIBLE_RUN = re.compile(f"(?P<tags>{_TAGS}+)|(?:{_HIDING})+")
# What ``INVISIBLE`` can match, joiners anywhere: a class is searched ~5x faster than the look-behind alternation.
_INVISIBLE_CANDIDATE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
# ``_INVISIBLE_CANDIDATE`` over a file's UTF-8 bytes: one byte a character, so searched several times faster than the
# decoded text, and a file with none of them (most) is never decoded for this check.
_CANDIDATE_BYTES = re.compile(
    rb"\xe2\x80[\x8b-\x8f\xaa-\xae]|\xe2\x81[\xa0-\xa4\xa6-\xa9]|\xef\xbb\xbf|\xf3\xa0[\x80\x81]")
TAG_OFFSET = 0xE0000
SHOWN_TAG_TEXT = 60  # characters of decoded tag text a finding shows


def invisible_chars(text: str, file: str, skill: str) -> Iterable[Diagnostic]:
    """One SK511 per run of invisible characters on a line, not one per character: hidden text is often long."""
    if text.isascii() or not _has_invisible(text):
        return
    for line_no, line in enumerate(text.split("\n"), start=1):
        for match in INVISIBLE_RUN.finditer(line):
            run, start = match.group(0), match.start()
            if line_no == 1 and start == 0 and run[0] == "\ufeff":
                run, start = run[1:], 1  # a byte-order mark at the very start is an encoding marker, not hidden text
                if not run:
                    continue
            message, hint = _tag_run(run) if match.group("tags") else _hidden_run(run)
            yield RULES["SK511"].at(file, line_no, message, hint=hint, column=start + 1, skill=skill)


def may_hide(data: bytes) -> bool:
    """Whether the UTF-8 ``data`` holds a character ``invisible_chars`` may report: False means it reports none."""
    return not data.isascii() and _CANDIDATE_BYTES.search(data) is not None


def _has_invisible(text: str) -> bool:
    """``INVISIBLE.search(text) is not None``: a candidate not a joiner, or a joiner after a character < U+2000."""
    for candidate in _INVISIBLE_CANDIDATE.finditer(text):
        at = candidate.start()
        if text[at] != "\u200d" or (at > 0 and text[at - 1] <= "\u1fff"):
            return True
    return False


def _hidden_run(run: str) -> tuple[str, str | None]:
    """(message, hint) for a run of zero-width and bidirectional characters: each distinct one named, with its
    count when it repeats."""
    def named(char: str) -> str:
        return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"

    if len(run) == 1:
        return f"invisible character {named(run)}", None
    counts = collections.Counter(run)
    shown = [named(c) + (f" x{n}" if n > 1 else "") for c, n in counts.items()]
    listed = ", ".join(shown[:3]) + (", ..." if len(shown) > 3 else "")
    return (f"{len(run)} invisible characters in a row: {listed}",
            "Delete the characters; they can hide what the text says.")


def _tag_run(run: str) -> tuple[str, str]:
    """(message, hint) for a run of Unicode tag characters, with the ASCII text they spell made visible."""
    spelled = "".join(chr(ord(c) - TAG_OFFSET) for c in run)
    shown = repr(spelled[:SHOWN_TAG_TEXT]) + ("..." if len(spelled) > SHOWN_TAG_TEXT else "")
    what = "invisible Unicode tag character" if len(run) == 1 else f"{len(run)} invisible Unicode tag characters"
    return (f"{what} (U+E0000-U+E007F) spelling {shown}",
            "Delete the tag characters: no one reading the page sees the text they spell; an agent reads it.")
