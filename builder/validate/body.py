"""Rules about the Markdown body of SKILL.md: its size, how deeply it nests, absolute user paths and links that
must land inside the skill. Each check reads the body once, as a line scan that cannot go quadratic."""

from __future__ import annotations

import difflib
import itertools
import posixpath
import re
from collections.abc import Iterable, Iterator
from urllib.parse import unquote

from ..core.diagnostics import RULES, Diagnostic
from ..core.model import Skill

MAX_BODY_LINES = 500
MAX_BODY_WORDS = 5000
# Lists and block quotes nested deeper than this are refused: the website's Markdown renderer recurses once
# per level and fails a few hundred levels down; no real document needs more than a handful.
MAX_MARKDOWN_NESTING = 64
USER_PATH = re.compile(r"(?<![\w./~-])(?:/home/[\w.-]+|/Users/[\w.-]+|[A-Za-z]:\\[\w\\.-]*(?: [\w.-]+\\[\w\\.-]*)*)")
USER_PATH_MARKERS = ("/home/", "/Users/", ":\\")
CODE_SPAN = re.compile(r"`[^`]*`")
MD_REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# The website's HTML sanitiser (an HTML5 tree builder) takes time quadratic in how deeply raw HTML nests: 170,000
# nested tags in a 1 MiB body took it minutes. Past this many start tags a body is refused; no skill needs them.
MAX_BODY_HTML_TAGS = 20_000
_START_TAG = re.compile(r"<[A-Za-z]")
# A line can only nest MAX_MARKDOWN_NESTING levels with at least half as many characters of container prefix
# (a tab is worth two levels): only such lines are measured exactly.
_DEEP_PREFIX = rf"[ \t>*+\-0-9.)]{{{MAX_MARKDOWN_NESTING // 2}}}"
_DEEP_FIRST_LINE = re.compile(_DEEP_PREFIX)
_DEEP_LINE = re.compile("\n" + _DEEP_PREFIX)  # a literal first character makes the search fast


def check_body(skill: Skill, file: str) -> Iterable[Diagnostic]:
    body = skill.body
    if not body.strip():
        yield RULES["SK406"].at(file, skill.body_line, skill=skill.name)
        return
    count = body.count("\n") + (0 if body.endswith("\n") else 1)
    if count > MAX_BODY_LINES:
        yield RULES["SK401"].at(file, skill.body_line, f"the body has {count} lines; keep it under {MAX_BODY_LINES}",
                                skill=skill.name)
    # A word takes at least two characters with its separator, so a short body cannot be too wordy.
    words = len(body.split()) if len(body) > 2 * MAX_BODY_WORDS else 0
    if words > MAX_BODY_WORDS:
        yield RULES["SK402"].at(file, skill.body_line,
                                f"the body has {words:,} words; keep it under {MAX_BODY_WORDS:,}", skill=skill.name)
    if body.count("<") > MAX_BODY_HTML_TAGS:
        tags = len(_START_TAG.findall(body))
        if tags > MAX_BODY_HTML_TAGS:
            yield RULES["SK408"].at(file, skill.body_line, f"the body holds {tags:,} HTML tags; the limit is "
                                                           f"{MAX_BODY_HTML_TAGS:,}", skill=skill.name)
    deepest = _deepest_line(body)
    if deepest is not None:
        offset, depth = deepest
        yield RULES["SK407"].at(file, skill.body_line + offset,
                                f"lists and block quotes nest {depth} levels deep here; "
                                f"the limit is {MAX_MARKDOWN_NESTING}", skill=skill.name)
    has_user_path = any(marker in body for marker in USER_PATH_MARKERS)
    if not has_user_path and "](" not in body and "]:" not in body:
        return
    lines = body.split("\n")
    if has_user_path:
        for offset, line in enumerate(lines):
            for match in USER_PATH.finditer(line):
                yield RULES["SK403"].at(file, skill.body_line + offset, f"absolute user path `{match.group(0)}`",
                                        column=match.start() + 1, skill=skill.name)
    if "](" not in body and "]:" not in body:
        return
    paths = {f.path for f in skill.files}
    folders = {posixpath.dirname(p) for p in paths}
    folders |= {"/".join(p.split("/")[:i]) for p in folders for i in range(1, p.count("/") + 1)}
    in_fence = False
    fence = ""
    for offset, line in enumerate(lines):
        if "`" in line or "~~~" in line:
            stripped = line.lstrip()
            if stripped.startswith(("```", "~~~")):
                marker = stripped[:3]
                if not in_fence:
                    in_fence, fence = True, marker
                elif marker == fence:
                    in_fence = False
                continue
        if in_fence or ("](" not in line and "]:" not in line):
            continue
        text = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line) if "`" in line else line
        targets = list(inline_links(text))
        ref = MD_REFDEF.match(text)
        if ref:
            targets.append((ref.group(1), ref.start(1)))
        for target, column in targets:
            yield from _check_link(target, paths, folders, file, skill.body_line + offset, column + 1, skill.name)


def _deepest_line(body: str) -> tuple[int, int] | None:
    """(line offset, depth) of the first line nesting deeper than MAX_MARKDOWN_NESTING, or None; linear time."""
    starts = [0] if _DEEP_FIRST_LINE.match(body) else []
    for start in itertools.chain(starts, (match.start() + 1 for match in _DEEP_LINE.finditer(body))):
        depth = markdown_nesting(body, start)
        if depth > MAX_MARKDOWN_NESTING:
            return body.count("\n", 0, start), depth
    return None


def markdown_nesting(text: str, start: int = 0) -> int:
    """How many lists and block quotes the line at ``start`` can be inside, counted from its prefix alone.

    Every ``>`` and list marker (``-``, ``+``, ``*``, ``1.``, ``1)``) is a level, and so is every two
    columns of other indentation, the least a nested list needs in CommonMark (Python-Markdown needs
    four). Fenced code is measured too: whether a fence really opens depends on the renderer, and a
    measure that trusts it could be steered past. This errs on the deep side, never the shallow one.
    """
    levels = spaces = column = 0
    i, n = start, len(text)
    while i < n:
        char = text[i]
        if char == " ":
            spaces += 1
            column += 1
        elif char == "\t":
            width = 4 - column % 4
            spaces += width
            column += width
        else:
            marker_end = i + 1
            if char.isdigit():
                while marker_end < n and marker_end - i < 9 and text[marker_end].isdigit():
                    marker_end += 1
                if marker_end == n or text[marker_end] not in ".)":
                    break
                marker_end += 1
            elif char not in ">-+*":
                break
            after = text[marker_end] if marker_end < n else "\n"
            if after not in " \t\n" and char != ">":
                break
            levels += 1
            column += marker_end - i
            i = marker_end
            if after == " ":  # the one space that belongs to the marker
                column += 1
                i += 1
            continue
        i += 1
    return levels + spaces // 2


class _NextMatch:
    """The first match of a pattern at or after a position, for positions that never move backwards: each
    character is searched at most once however often it is asked, which keeps a scan of many candidates linear."""

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self._pattern, self._text = pattern, text
        self._found = -1  # the answer for every position from the last search up to it

    def at(self, pos: int) -> int:
        """Index of the first match at or after ``pos``, or ``len(text)`` when there is none."""
        if self._found < pos:
            match = self._pattern.search(self._text, pos)
            self._found = match.start() if match else len(self._text)
        return self._found


_NOT_SPACE = re.compile(r"\S")
_TARGET_END = re.compile(r"[)\s]")
_CLOSE_PAREN = re.compile(r"\)")
_CLOSE_ANGLE = re.compile(r">")


def inline_links(text: str) -> Iterator[tuple[str, int]]:
    """(target, start column) of every ``[text](target)`` and ``![alt](target)`` in one line, in linear time.

    Brackets nest to any depth and a link never contains another, as in CommonMark; the target is ``<...>``
    or runs to a space or ``)``, and an optional quoted title follows it. Each kind of lookup has its own
    forward-only search (its positions only grow as the scan moves right), so hostile input such as
    ``![a](`` repeated costs no more than reading the line a few times.
    """
    if "](" not in text:
        return
    destinations = _Destinations(text)
    openers: list[int] = []
    pos = 0
    while True:
        bracket = _BRACKET.search(text, pos)
        if bracket is None:
            return
        i = pos = bracket.start() + 1
        if text[i - 1] == "[":
            openers.append(i - 1)
            continue
        if not openers:
            continue
        start = openers.pop()
        if text.startswith("(", i):
            found = destinations.at(i + 1)
            if found is not None:
                target, pos = found
                yield target, start - 1 if start > 0 and text[start - 1] == "!" else start
                openers.clear()


_BRACKET = re.compile(r"[\[\]]")


class _Destinations:
    """Link destinations of one line, read with forward-only searches (see ``inline_links``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.begin_at = _NextMatch(_NOT_SPACE, text)
        self.bare_end, self.angle_end = _NextMatch(_TARGET_END, text), _NextMatch(_CLOSE_ANGLE, text)
        # The two forms of target end at different places, so each gets its own title searches.
        self.title_at = (_NextMatch(_NOT_SPACE, text), _NextMatch(_NOT_SPACE, text))
        self.title_end = (_NextMatch(_CLOSE_PAREN, text), _NextMatch(_CLOSE_PAREN, text))

    def at(self, pos: int) -> tuple[str, int] | None:
        """(target, index after the closing ``)``) of the destination after the ``(`` ending at ``pos``."""
        text, n = self.text, len(self.text)
        begin = self.begin_at.at(pos)
        if begin >= n:
            return None
        ends: list[tuple[int, int]] = []
        if text[begin] == "<":
            close = self.angle_end.at(begin + 1)
            if close < n:
                ends.append((1, close + 1))
        stop = self.bare_end.at(begin)
        if stop > begin:
            ends.append((0, stop))
        for form, stop in ends:
            if stop < n and text[stop] == ")":
                return text[begin:stop], stop + 1
            title = self.title_at[form].at(stop)
            if stop < title < n and text[title] in "\"'(":
                close = self.title_end[form].at(title + 1)
                if close < n:
                    return text[begin:stop], close + 1
        return None


def _check_link(target: str, paths: set[str], folders: set[str], file: str, line: int, column: int,
                skill: str) -> Iterable[Diagnostic]:
    target = target.strip("<>")
    if not target or target.startswith(("#", "//", "{baseDir}")) or SCHEME.match(target):
        return
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return
    if path.startswith("/"):
        yield RULES["SK405"].at(file, line, f"link to absolute path `{target}` leaves the skill folder",
                                column=column, skill=skill)
        return
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        yield RULES["SK405"].at(file, line, f"link `{target}` leaves the skill folder", column=column, skill=skill)
        return
    if normal in paths or normal in folders or normal == ".":
        return
    close = difflib.get_close_matches(normal, sorted(paths), 1, 0.6)
    yield RULES["SK404"].at(file, line, f"link target `{target}` does not exist in the skill",
                            hint=f"Did you mean `{close[0]}`?" if close else "Add the file or fix the link.",
                            column=column, skill=skill)
