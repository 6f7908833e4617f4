"""Showing untrusted text (from a registry, a skill or a lock file) on a terminal without letting it steer it.

A terminal acts on control characters: ESC starts sequences that move the cursor, erase lines, set the
title or write the clipboard (OSC 52); bidi overrides and zero-width characters make a line read differently
from what it holds. ``visible`` spells every such character out, so what is shown is what is there.
"""

from __future__ import annotations

import re
import unicodedata

# Anything outside printable ASCII is looked at; most of it (letters, punctuation, emoji) is kept as it is.
_CANDIDATES = re.compile(r"[^\x20-\x7e]")
_CANDIDATES_MULTILINE = re.compile(r"[^\x20-\x7e\n\t]")
# Control characters, format characters (bidi overrides and isolates, zero-width characters, BOM...),
# line and paragraph separators, and lone surrogates.
_HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _spell(char: str) -> str:
    code = ord(char)
    if code < 0x20 or 0x7f <= code <= 0x9f:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def _replace(match: re.Match[str]) -> str:
    char = match.group()
    return _spell(char) if unicodedata.category(char) in _HIDDEN else char


def visible(text: object, *, multiline: bool = False) -> str:
    """``text`` with control and invisible format characters made visible (``\\x1b``, ``<U+202E>``).

    With ``multiline`` (diffs, file contents), newlines and tabs are kept; a carriage return never is.
    """
    value = text if isinstance(text, str) else str(text)
    return (_CANDIDATES_MULTILINE if multiline else _CANDIDATES).sub(_replace, value)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char) not in _HIDDEN:
        return char
    data = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(data[i:i + 2], 'big'):04x}" for i in range(0, len(data), 2))


def visible_json(text: str) -> str:
    """JSON text with the same characters written as ``\\uXXXX`` escapes: the same data, nothing hidden.

    Safe on the output of ``json.dumps``: outside strings, JSON text is printable ASCII and whitespace.
    """
    return _CANDIDATES_MULTILINE.sub(_json_escape, text)
