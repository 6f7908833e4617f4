"""Rules about the Markdown body of SKILL.md: its size, how deeply it nests, absolute user paths and links that
must land inside the skill. Links are read as the website's renderer reads them (``core.markdown``);
the other checks are line scans that cannot go quadratic."""

from __future__ import annotations

import difflib
import itertools
import posixpath
import re
from collections.abc import Iterable
from urllib.parse import unquote

from ..core.diagnostics import RULES, Diagnostic
from ..core.markdown import Link, links, links_and_hidden
from ..core.model import Skill
from ..core.terminal import visible

MAX_BODY_LINES = 500
MAX_BODY_WORDS = 5000
# Lists and block quotes nested deeper than this are refused: the website's Markdown renderer recurses once
# per level and fails a few hundred levels down; no real document needs more than a handful.
MAX_MARKDOWN_NESTING = 64
USER_PATH = re.compile(r"(?<![\w./~-])(?:/home/[\w.-]+|/Users/[\w.-]+|[A-Za-z]:\\[\w\\.-]*(?: [\w.-]+\\[\w\\.-]*)*)")
USER_PATH_MARKERS = ("/home/", "/Users/", ":\\")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# The website's HTML sanitiser (an HTML5 tree builder) takes time quadratic in how deeply raw HTML nests: 170,000
# nested tags in a 1 MiB body took it minutes. Past this many start tags a body is refused; no skill needs them.
MAX_BODY_HTML_TAGS = 20_000
_START_TAG = re.compile(r"<[A-Za-z]")
# The CommonMark parser reads a link at every `[` and `]` it is given: linear, but at tens of microseconds each
# in pure Python, so a 1 MiB body of nothing else would take it half a minute. No real skill nears this.
MAX_BODY_BRACKETS = 20_000
# A line can only nest MAX_MARKDOWN_NESTING levels with at least half as many characters of container prefix
# (a tab is worth two levels): only such lines are measured exactly.
_DEEP_PREFIX = rf"[ \t>*+\-0-9.)]{{{MAX_MARKDOWN_NESTING // 2}}}"
_DEEP_FIRST_LINE = re.compile(_DEEP_PREFIX)
_DEEP_LINE = re.compile("\n" + _DEEP_PREFIX)  # a literal first character makes the search fast


def check_body(skill: Skill, file: str, profile: str = "spec") -> Iterable[Diagnostic]:
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
    brackets = body.count("[") + body.count("]")
    if brackets > MAX_BODY_BRACKETS:
        yield RULES["SK409"].at(file, skill.body_line, f"the body holds {brackets:,} square brackets; the limit is "
                                                       f"{MAX_BODY_BRACKETS:,}", skill=skill.name)
    deepest = _deepest_line(body)
    if deepest is not None:
        offset, depth = deepest
        yield RULES["SK407"].at(file, skill.body_line + offset,
                                f"lists and block quotes nest {depth} levels deep here; "
                                f"the limit is {MAX_MARKDOWN_NESTING}", skill=skill.name)
    if any(marker in body for marker in USER_PATH_MARKERS):
        # One search of the whole body: no match runs over a line break, and a line's start reads as one.
        offset = line_start = counted = 0
        for match in USER_PATH.finditer(body):
            at = match.start()
            offset += body.count("\n", counted, at)
            line_start = max(line_start, body.rfind("\n", counted, at) + 1)
            counted = at
            yield RULES["SK403"].at(file, skill.body_line + offset, f"absolute user path `{match.group(0)}`",
                                    column=at - line_start + 1, skill=skill.name)
    found, hidden = links_and_hidden(body) if brackets <= MAX_BODY_BRACKETS else ([], [])
    if brackets <= MAX_BODY_BRACKETS:
        _keep_links(body, found)
    for note in hidden:
        yield RULES["SK410"].at(file, skill.body_line + note.line - 1, _hidden_message(note), column=note.column,
                                skill=skill.name)
    if not found:
        return
    paths = {f.path for f in skill.files}
    folders = {posixpath.dirname(p) for p in paths}
    folders |= {"/".join(p.split("/")[:i]) for p in folders for i in range(1, p.count("/") + 1)}
    for link in found:
        yield from _check_link(link, paths, folders, file, skill.body_line + link.line - 1, skill.name, profile)


# The body check_body last read links from, and those links: a build's worker publishes the skill it has just
# validated and chooses its raw files by them (``raw_files: linked``); keeping one body's links saves a parse.
_LAST_LINKS: tuple[str | None, tuple[Link, ...]] = (None, ())


def _keep_links(body: str, found: list[Link]) -> None:
    global _LAST_LINKS
    _LAST_LINKS = (body, tuple(found))


def found_links(body: str) -> tuple[Link, ...]:
    """``links(body)``: the links check_body found when ``body`` (the same string) is the last body it checked in
    this process, else read now."""
    last, found = _LAST_LINKS
    return found if body is last else tuple(links(body))


HIDDEN_PREVIEW = 60


def _hidden_message(note: Link) -> str:
    """What the website hides, as a reviewer can read it: blanks folded, controls made visible, 60 characters."""
    text = " ".join(note.text.split())
    shown = visible(text[:HIDDEN_PREVIEW]) + ("…" if len(text) > HIDDEN_PREVIEW else "")
    if note.kind == "comment":
        return f"an HTML comment hides text from the website that agents still read: `{shown}`"
    return f"a link reference definition used as a comment hides text from the website: `{shown}`"


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


# Claude Code replaces this with the skill's own folder before the agent reads the body.
SKILL_DIR_VARIABLE = "${CLAUDE_SKILL_DIR}/"
_INSTALLED = "; it will not work once the skill is installed"


def _check_link(link: Link, paths: set[str], folders: set[str], file: str, line: int,
                skill: str, profile: str = "spec") -> Iterable[Diagnostic]:
    """SK404/SK405 for a destination inside the skill; URLs, fragments and `{baseDir}` paths are not checked.
    Outside `spec`, a `${CLAUDE_SKILL_DIR}/` path is read from the skill's folder, as Claude Code reads it; under
    `agents` the findings say what the broken link costs."""
    href, target, column = link.href, link.text, link.column
    if not href or href.startswith(("#", "//")) or target.startswith("{baseDir}") or SCHEME.match(href):
        return
    path = unquote(href.split("#", 1)[0].split("?", 1)[0])
    if profile != "spec" and path.startswith(SKILL_DIR_VARIABLE):
        path = path[len(SKILL_DIR_VARIABLE):]
    if not path:
        return
    cost = _INSTALLED if profile == "agents" else ""
    if path.startswith("/"):
        yield RULES["SK405"].at(file, line, f"link to absolute path `{target}` leaves the skill folder{cost}",
                                column=column, skill=skill)
        return
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        yield RULES["SK405"].at(file, line, f"link `{target}` leaves the skill folder{cost}", column=column,
                                skill=skill)
        return
    if normal in paths or normal in folders or normal == ".":
        return
    if "\\" in target:
        hint = "Write `/` between folders: a backslash is not a path separator in a link."
    else:
        close = difflib.get_close_matches(normal, sorted(paths), 1, 0.6)
        hint = f"Did you mean `{close[0]}`?" if close else "Add the file or fix the link."
    yield RULES["SK404"].at(file, line, f"link target `{target}` does not exist in the skill{cost}", hint=hint,
                            column=column, skill=skill)
