"""The rules: what a valid skill is, under each profile, and what must hold across the registry.

``validate_paths`` loads and checks every skill below the given paths and returns every finding;
nothing here prints or writes.
"""

from __future__ import annotations

import datetime
import difflib
import itertools
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from ..core.config import PROFILES, RegistryConfig
from ..core.diagnostics import RULES, Diagnostic, Severity
from ..core.errors import UsageError
from ..core.loader import display_path, find_skill_folders, load_skill
from ..core.model import Skill
from ..core.workers import run_parallel
from .active_content import active_content, served_type

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY_LINES = 500
MAX_BODY_WORDS = 5000
# Lists and block quotes nested deeper than this are refused: the website's Markdown renderer recurses once
# per level and fails a few hundred levels down; no real document needs more than a handful.
MAX_MARKDOWN_NESTING = 64

NAME_CHARS = re.compile(r"^[a-z0-9-]+$")
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
PLACEHOLDER_NAMES = frozenset({"my-skill-name", "skill-name", "your-skill-name"})
PLACEHOLDER_TEXT = re.compile(r"^\s*(?:TODO|TBD|FIXME)\b|\bTODO:|\[TODO|Replace with|Describe what this skill does")
# Names that would collide with the site's own folders and API paths.
RESERVED_NAMES = frozenset({
    "api", "assets", "search", "tags", "tag", "categories", "category", "skills", "index", "static",
    "stylesheets", "javascripts", "schema", "bundles", "well-known", "404", "sitemap", "feed", "new",
})
# Zero-width, bidirectional controls and Unicode tag characters can hide text from a reviewer.
INVISIBLE = re.compile("[\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
                       "|(?<=[\x00-\u1fff])\u200d")
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

# What each profile accepts at the top level of the frontmatter, and the type each field must have.
OPEN_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_str_or_str_list(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))


def _one_of(*values: str) -> Callable[[Any], bool]:
    return lambda v: v in values


CLAUDE_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "model": (_is_str, "a model name string"),
    "version": (_is_str, "a version string"),
    "disable-model-invocation": (_is_bool, "true or false"),
    "user-invocable": (_is_bool, "true or false"),
    "argument-hint": (_is_str, "a string"),
    "context": (_one_of("inline", "fork"), "`inline` or `fork`"),
    "agent": (_is_str, "an agent name string"),
    "effort": (_one_of("low", "medium", "high", "xhigh", "max"), "one of low, medium, high, xhigh, max"),
    "paths": (_is_str_or_str_list, "a glob string or a list of glob strings"),
    "hooks": (lambda v: isinstance(v, dict), "a mapping of hook events"),
    "when_to_use": (_is_str, "a string"),
    "mode": (_is_bool, "true or false"),
}


@dataclass(frozen=True)
class ValidationReport:
    skills: tuple[Skill, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def errors(self) -> int:
        return sum(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity is Severity.WARNING for d in self.diagnostics)

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)

    def invalid_names(self) -> frozenset[str]:
        return frozenset(d.skill for d in self.diagnostics if d.severity is Severity.ERROR and d.skill)

    def summary(self) -> str:
        flagged = len({d.skill for d in self.diagnostics if d.skill})
        noun = "skill" if len(self.skills) == 1 else "skills"
        e, w = self.errors, self.warnings
        return (f"{e} error{'s' * (e != 1)}, {w} warning{'s' * (w != 1)} "
                f"in {flagged} of {len(self.skills)} {noun}")


_SETTINGS: tuple[RegistryConfig, str] | None = None


def _init_worker(config: RegistryConfig, profile: str) -> None:
    global _SETTINGS
    _SETTINGS = (config, profile)


def _check_folder(folder: Path) -> tuple[Skill, list[Diagnostic]]:
    """Load and check one skill; the skill comes back without its file bytes (they stay in the worker)."""
    assert _SETTINGS is not None
    config, profile = _SETTINGS
    skill, found = validate_folder(folder, config, profile)
    return replace(skill, files=()), found


def validate_folder(folder: Path, config: RegistryConfig, profile: str) -> tuple[Skill, list[Diagnostic]]:
    """Load one skill folder and check it: what loading found, then what the rules found."""
    loaded = load_skill(folder, config)
    return loaded.skill, [*loaded.diagnostics, *check_skill(loaded.skill, config, profile)]


def validate_paths(paths: Sequence[Path], config: RegistryConfig, profile: str | None = None,
                   jobs: int | None = None) -> ValidationReport:
    """Load every skill under ``paths`` (skill folders or folders of skills) and check each and all together.

    The report's skills carry no file bytes: validating a large registry must not hold all of it in memory.
    """
    profile = profile or config.profile
    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    folders: list[Path] = []
    diagnostics: list[Diagnostic] = []
    for path in paths:
        if not path.exists():
            raise UsageError(f"{display_path(path)}: no such file or folder")
        if path.is_file() and path.name in ("SKILL.md", "skill.md"):
            path = path.parent
        if not path.is_dir():
            raise UsageError(f"{display_path(path)}: not a folder")
        try:
            found = find_skill_folders(path)
        except OSError as exc:
            raise UsageError(f"{display_path(path)}: cannot be read ({exc.strerror})") from None
        if not found:
            diagnostics.append(RULES["SK604"].at(display_path(path), 0, f"no skill folders in {display_path(path)}"))
        folders.extend(found)
    unique = list({folder.resolve(): folder for folder in folders}.values())
    results = run_parallel(_check_folder, unique, initializer=_init_worker, initargs=(config, profile), jobs=jobs)
    skills = [skill for skill, _ in results]
    for _, findings in results:
        diagnostics.extend(findings)
    diagnostics.extend(check_registry(skills))
    diagnostics.sort(key=Diagnostic.sort_key)
    return ValidationReport(tuple(skills), tuple(diagnostics))


def check_skill(skill: Skill, config: RegistryConfig, profile: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    shown = display_path(skill.folder)
    md_file = f"{shown}/{skill.skill_md}"
    if skill.frontmatter is not None:
        out.extend(_check_fields(skill, config, profile, md_file))
        out.extend(_check_body(skill, md_file))
    for f in skill.files:
        active = active_content(f.path, f.data) if f.path != skill.skill_md else None
        if active:
            line, what = active
            out.append(RULES["SK517"].at(f"{shown}/{f.path}", line, f"`{f.path}` would be served as "
                                         f"{served_type(f.path)} and holds {what}", skill=skill.name))
        if not f.is_text and not f.path.startswith("assets/") and f.path != skill.skill_md:  # SK003 covers it
            out.append(RULES["SK509"].at(f"{shown}/{f.path}", 0, f"`{f.path}` is binary but not under assets/",
                                         skill=skill.name))
        if (f.path == skill.skill_md or f.path.startswith("scripts/")) and not f.data.isascii() and f.is_text:
            out.extend(_invisible_chars(f.data.decode("utf-8"), f"{shown}/{f.path}", skill.name))
    return out


def _check_fields(skill: Skill, config: RegistryConfig, profile: str, file: str) -> Iterable[Diagnostic]:
    fm = skill.frontmatter
    assert fm is not None
    data = fm.data

    def at(code: str, key: str, message: str = "", **kw: Any) -> Diagnostic:
        return RULES[code].at(file, fm.line_of(key), message, skill=skill.name, **kw)

    # name
    if "name" not in data:
        yield at("SK101", "name", "required field `name` is missing")
    else:
        name = data["name"]
        if not isinstance(name, str) or not name.strip():
            yield at("SK102", "name", f"`name` must be a non-empty string, got {_show(name)}")
        else:
            yield from check_name(name, skill.name, lambda code, msg, hint=None: at(code, "name", msg, hint=hint))
    # description
    if "description" not in data:
        yield at("SK107", "description", "required field `description` is missing")
    else:
        desc = data["description"]
        if not isinstance(desc, str) or not desc.strip():
            yield at("SK108", "description", f"`description` must be a non-empty string, got {_show(desc)}")
        else:
            if len(desc) > MAX_DESCRIPTION:
                yield at("SK109", "description",
                         f"`description` is {len(desc)} characters; the limit is {MAX_DESCRIPTION}")
            match = PLACEHOLDER_TEXT.search(desc)
            if match:
                yield at("SK202", "description",
                         f"`description` still contains template text: {match.group(0).strip()!r}")
    # optional fields of the standard
    if "compatibility" in data:
        comp = data["compatibility"]
        if not isinstance(comp, str) or not comp.strip():
            yield at("SK110", "compatibility", f"`compatibility` must be a non-empty string, got {_show(comp)}")
        elif len(comp) > MAX_COMPATIBILITY:
            yield at("SK111", "compatibility",
                     f"`compatibility` is {len(comp)} characters; the limit is {MAX_COMPATIBILITY}")
    if "license" in data and not isinstance(data["license"], str):
        yield at("SK114", "license", f"`license` must be a string, got {_show(data['license'])}")
    if "allowed-tools" in data:
        tools = data["allowed-tools"]
        if isinstance(tools, list) and all(isinstance(t, str) for t in tools):
            yield at("SK115", "allowed-tools", hint=f"Write `allowed-tools: {' '.join(tools)}`.")
        elif not isinstance(tools, str):
            yield at("SK116", "allowed-tools", f"`allowed-tools` must be a space-separated string, got {_show(tools)}")
    if "metadata" in data:
        yield from _check_metadata(data["metadata"], config, at)
    elif config.categories:
        yield at("SK305", "name", "`metadata.category` is missing")
    # YAML the reference validator cannot read: an error where the open standard is the contract
    strict_severity = Severity.ERROR if profile == "spec" else Severity.WARNING
    for what, line, column in fm.non_strict:
        yield RULES["SK013"].at(file, line, f"the frontmatter uses {what}", column=column, skill=skill.name,
                                severity=strict_severity)
    if fm.bom:
        yield RULES["SK014"].at(file, 1, "SKILL.md starts with a UTF-8 byte-order mark", skill=skill.name,
                                severity=strict_severity)
    # fields outside the standard, by profile
    known = set(OPEN_FIELDS) | (set(CLAUDE_FIELDS) if profile != "spec" else set())
    for key in data:
        if key in known:
            continue
        if key in CLAUDE_FIELDS:
            message = f"`{key}` is a Claude Code extension, not part of the open standard"
            hint = "Use `--profile claude-code` for Claude Code skills, or move it under `metadata`."
        else:
            message = f"unknown field `{key}`"
            close = difflib.get_close_matches(key.replace("_", "-").lower(), [*OPEN_FIELDS, *CLAUDE_FIELDS], 1, 0.6)
            hint = f"Did you mean `{close[0]}`?" if close else "Put registry data under `metadata`."
        severity = Severity.WARNING if profile == "lenient" else Severity.ERROR
        yield at("SK120", key, message, hint=hint, severity=severity)
    if profile != "spec":
        for key, (check, expected) in CLAUDE_FIELDS.items():
            if key in data and not check(data[key]):
                yield at("SK122", key, f"`{key}` must be {expected}, got {_show(data[key])}")
        if "when_to_use" in data:
            yield at("SK123", "when_to_use", "`when_to_use` is deprecated")


_Finding = TypeVar("_Finding")


def check_name(name: str, folder: str, report: Callable[..., _Finding]) -> Iterable[_Finding]:
    if name in PLACEHOLDER_NAMES:
        yield report("SK201", f"`name` is still the template placeholder `{name}`")
    if len(name) > MAX_NAME:
        yield report("SK103", f"`name` is {len(name)} characters; the limit is {MAX_NAME}")
    if not NAME_CHARS.fullmatch(name):
        bad = sorted({c for c in name if not re.match(r"[a-z0-9-]", c)})
        ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
        suggestion = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", ascii_name)).strip("-")
        yield report("SK104", f"`name` {name!r} has characters outside a-z, 0-9 and '-': "
                              f"{' '.join(repr(c) for c in bad)}",
                     f"Did you mean `{suggestion}`?" if suggestion else None)
    if name.startswith("-") or name.endswith("-") or "--" in name:
        yield report("SK105", f"`name` {name!r} starts or ends with a hyphen or contains `--`")
    if name != folder:
        yield report("SK106", f"`name` is {name!r} but the folder is {folder!r}")


def _check_metadata(meta: Any, config: RegistryConfig, at: Callable[..., Diagnostic]) -> Iterable[Diagnostic]:
    if not isinstance(meta, dict):
        yield at("SK112", "metadata", f"`metadata` must be a mapping, got {_show(meta)}")
        return
    for key, value in meta.items():
        if not isinstance(key, str):
            yield at("SK112", f"metadata.{key}", f"`metadata` key {key!r} is not a string",
                     hint=f"Quote it: `\"{key}\"`.")
        elif not isinstance(value, str):
            shown = str(value).lower() if isinstance(value, bool) else value
            if isinstance(value, (int, float)):
                hint: str | None = f"Quote it: `{key}: \"{shown}\"`."
            elif isinstance(value, list):
                hint = f"Write one comma-separated string: `{key}: \"{', '.join(map(str, value))}\"`."
            else:
                hint = None
            yield at("SK113", f"metadata.{key}", f"`metadata.{key}` must be a string, got {_show(value)}", hint=hint)
    category = meta.get("category")
    if isinstance(category, str) and config.categories:
        if category not in config.category_slugs:
            close = difflib.get_close_matches(category, config.category_slugs, 1, 0.5)
            hint = (f"Did you mean `{close[0]}`? " if close else "") + \
                f"Categories: {', '.join(config.category_slugs)}."
            yield at("SK301", "metadata.category", f"unknown category `{category}`", hint=hint)
    elif category is None and config.categories:
        yield at("SK305", "metadata", "`metadata.category` is missing")
    tags = meta.get("tags")
    if isinstance(tags, str):
        items = [t.strip() for t in tags.split(",") if t.strip()]
        if len(items) > config.limits.max_tags:
            yield at("SK302", "metadata.tags", f"{len(items)} tags; the limit is {config.limits.max_tags}")
        for tag in items:
            if not SLUG.fullmatch(tag):
                yield at("SK303", "metadata.tags", f"tag {tag!r} is not a lowercase slug",
                         hint=f"Did you mean `{_slugify(tag)}`?" if _slugify(tag) else None)
    version = meta.get("version")
    if isinstance(version, str) and not SEMVER.fullmatch(version):
        yield at("SK304", "metadata.version", f"`metadata.version` {version!r} is not a semantic version")


def _check_body(skill: Skill, file: str) -> Iterable[Diagnostic]:
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


def _invisible_chars(text: str, file: str, skill: str) -> Iterable[Diagnostic]:
    if text.isascii() or not INVISIBLE.search(text):
        return
    for line_no, line in enumerate(text.split("\n"), start=1):
        for match in INVISIBLE.finditer(line):
            if line_no == 1 and match.start() == 0 and match.group(0) == "\ufeff":
                continue  # a byte-order mark at the very start is an encoding marker, not hidden text
            char = match.group(0)
            yield RULES["SK511"].at(file, line_no, f"invisible character U+{ord(char):04X} "
                                                   f"({unicodedata.name(char, 'unnamed')})",
                                    column=match.start() + 1, skill=skill)


def check_registry(skills: Sequence[Skill]) -> list[Diagnostic]:
    """Rules that need every skill at once: unique names, names that only differ by case or width, reserved names."""
    out: list[Diagnostic] = []
    by_name: dict[str, Skill] = {}
    by_folded: dict[str, Skill] = {}
    for skill in skills:
        declared = skill.field("name")
        name = declared if isinstance(declared, str) and declared else skill.name

        def at() -> tuple[str, int]:  # only a finding needs the path as the user would type it
            return (f"{display_path(skill.folder)}/{skill.skill_md}",  # noqa: B023 (called in this iteration)
                    skill.frontmatter.line_of("name") if skill.frontmatter else 0)  # noqa: B023

        if name in by_name:
            other = by_name[name]
            out.append(RULES["SK601"].at(*at(), f"skill name `{name}` is also used by "
                                                     f"{display_path(other.folder)}", skill=skill.name))
        else:
            by_name[name] = skill
            folded = name if name.isascii() and name.islower() else unicodedata.normalize("NFKC", name).casefold()
            if folded in by_folded:
                other = by_folded[folded]
                out.append(RULES["SK602"].at(*at(), f"skill name `{name}` collides with "
                                                         f"`{other.field('name') or other.name}` in "
                                                         f"{display_path(other.folder)}", skill=skill.name))
            else:
                by_folded[folded] = skill
        if name in RESERVED_NAMES:
            out.append(RULES["SK603"].at(*at(), f"skill name `{name}` is reserved", skill=skill.name))
    return out


def _slugify(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (datetime.date, datetime.datetime)):  # YAML reads an unquoted 2024-01-01 as a date
        return f"a date ({value.isoformat()})"
    kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "a mapping"}.get(type(value), type(value).__name__)
    return f"{kind} ({value!r})" if not isinstance(value, (list, dict)) else kind
