"""The rules: what a valid skill is, under each profile, and what must hold across the registry (the body's rules
are in ``body``).

``validate_paths`` loads and checks every skill below the given paths and returns every finding;
nothing here prints or writes.
"""

from __future__ import annotations

import bisect
import collections
import datetime
import difflib
import functools
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ..core.config import PROFILES, RegistryConfig, merge_flags
from ..core.diagnostics import RULES, Diagnostic, Severity
from ..core.errors import UsageError
from ..core.loader import display_path, find_skill_folders, load_skill
from ..core.model import MAX_NAME, SLUG, Frontmatter, Skill
from ..core.suggest import close_match
from ..core.words import counted
from ..core.workers import default_jobs, iter_parallel
from .active_content import active_content, served_type
from .body import check_body

MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500

NAME_CHARS = re.compile(r"^[a-z0-9-]+$")
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
# Zero-width, bidirectional controls and Unicode tag characters can hide text from a reviewer. A zero-width
# joiner is one only after a character that never starts an emoji sequence.
_HIDING = "[\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|(?<=[\x00-\u1fff])\u200d"
_TAGS = "[\U000e0000-\U000e007f]"
INVISIBLE = re.compile(f"{_TAGS}|{_HIDING}")
# Each run of them is one finding: a run of tag characters (ASCII shifted by 0xE0000) is hidden text, shown decoded.
INVISIBLE_RUN = re.compile(f"(?P<tags>{_TAGS}+)|(?:{_HIDING})+")
# What ``INVISIBLE`` can match, joiners anywhere: a class is searched ~5x faster than the look-behind alternation.
_INVISIBLE_CANDIDATE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
TAG_OFFSET = 0xE0000
SHOWN_TAG_TEXT = 60  # characters of decoded tag text a finding shows

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


@dataclass
class Tally:
    """The counts a report closes with, kept as findings stream past."""

    skills: int = 0
    errors: int = 0
    warnings: int = 0
    flagged: set[str] = field(default_factory=set)  # names of skills with findings

    def count(self, diagnostic: Diagnostic) -> None:
        if diagnostic.severity is Severity.ERROR:
            self.errors += 1
        else:
            self.warnings += 1
        if diagnostic.skill:
            self.flagged.add(diagnostic.skill)

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)

    def summary(self) -> str:
        return (f"{counted(self.errors, 'error')}, {counted(self.warnings, 'warning')} in {len(self.flagged):,} of "
                f"{counted(self.skills, 'skill')}")


@dataclass(frozen=True)
class ValidationReport:
    skills: Sequence[Skill]
    diagnostics: tuple[Diagnostic, ...]

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.diagnostics)

    @property
    def tally(self) -> Tally:
        tally = Tally(skills=len(self.skills))
        for d in self.diagnostics:
            tally.count(d)
        return tally

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
        return self.tally.summary()


@dataclass(frozen=True)
class NameKey:
    """What the registry-wide rules need of one skill, so they never hold the skills themselves."""

    skill: str  # the folder name
    name: str  # the declared name when it is a non-empty string, else the folder name
    shown: str  # the name as other findings quote it: the declared value, or the folder name
    folder: str  # the folder as the user would type it
    file: str  # its SKILL.md, as findings name it
    line: int  # the line of `name`

    @classmethod
    def of(cls, skill: Skill) -> NameKey:
        declared = skill.field("name")
        folder = display_path(skill.folder)
        return cls(skill=skill.name, name=declared if isinstance(declared, str) and declared else skill.name,
                   shown=f"{declared or skill.name}", folder=folder, file=f"{folder}/{skill.skill_md}",
                   line=skill.frontmatter.line_of("name") if skill.frontmatter else 0)


_SETTINGS: tuple[RegistryConfig, str, bool] | None = None


def _init_worker(config: RegistryConfig, profile: str, keep_skills: bool = False) -> None:
    global _SETTINGS
    _SETTINGS = (config, profile, keep_skills)


_Checked = tuple[Skill | None, list[Diagnostic], NameKey]


def _check_folders(folders: list[str]) -> list[_Checked]:
    """Load and check a few skills: their findings and name keys, and (when asked) each skill without its file
    bytes (they stay in the worker)."""
    assert _SETTINGS is not None
    config, profile, keep_skills = _SETTINGS
    out: list[_Checked] = []
    for folder in folders:
        skill, found = validate_folder(Path(folder), config, profile)
        out.append((replace(skill, files=()) if keep_skills else None, found, NameKey.of(skill)))
    return out


def validate_folder(folder: Path, config: RegistryConfig, profile: str) -> tuple[Skill, list[Diagnostic]]:
    """Load one skill folder and check it: what loading found, then what the rules found."""
    loaded = load_skill(folder, config)
    return loaded.skill, [*loaded.diagnostics, *check_skill(loaded.skill, config, profile)]


# Skills sent to a worker at once: few enough that results stream, enough that sending them costs little. Near
# the end of a run chunks shrink to a quarter of what is left per worker, down to _LAST_CHUNK, so that no worker
# is still busy with a whole chunk while the others have nothing left to do.
_CHUNK = 32
_LAST_CHUNK = 4


def _chunks(folders: list[str], jobs: int) -> list[list[str]]:
    chunks: list[list[str]] = []
    start, count = 0, len(folders)
    while start < count:
        size = _CHUNK if jobs <= 1 else max(_LAST_CHUNK, min(_CHUNK, (count - start) // (jobs * 4)))
        chunks.append(folders[start:start + size])
        start += size
    return chunks


def _real_path(folder: str, parents: dict[str, str]) -> str:
    """``os.path.realpath(folder)``, resolving each parent once (``parents`` keeps them) for all its skill
    folders: a folder that is not a link, named without dots, is its real parent joined with its name."""
    parent, name = os.path.split(folder)
    if parent and name and name not in (".", "..") and not os.path.islink(folder):
        real = parents.get(parent)
        if real is None:
            real = parents[parent] = os.path.realpath(parent)
        return os.path.join(real, name)
    return os.path.realpath(folder)


class ValidationRun:
    """``validate_paths`` as a stream: iterating yields every finding in report order (file, line, column,
    code, message) while the skills are still being checked, so memory holds a few skills' findings and one
    compact key per skill, whatever the number of skills. ``tally`` is complete once iteration ends."""

    def __init__(self, paths: Sequence[Path], config: RegistryConfig, profile: str | None = None,
                 jobs: int | None = None, *, keep_skills: bool = False) -> None:
        config = merge_flags(config, profile=profile)
        self.profile = config.profile
        if self.profile not in PROFILES:
            raise UsageError(f"unknown profile {self.profile!r}; choose one of {', '.join(PROFILES)}")
        self.config, self.jobs, self.keep_skills = config, jobs, keep_skills
        self.tally = Tally()
        self.skills: list[Skill] = []  # filled only with keep_skills
        self._early: list[Diagnostic] = []
        folders: list[str] = []  # strings, not Paths: a tenth of the memory for a large registry
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
                self._early.append(RULES["SK604"].at(display_path(path), 0,
                                                     f"no skill folders in {display_path(path)}"))
            folders.extend(os.fspath(folder) for folder in found)
            del found
        parents: dict[str, str] = {}
        self.folders = list({_real_path(folder, parents): folder for folder in folders}.values())

    def __iter__(self) -> Iterator[Diagnostic]:
        jobs = self.jobs if self.jobs is not None else default_jobs(len(self.folders))
        chunks = _chunks(self.folders, jobs)
        bounds: list[str | None] | None = None
        pending = list(self._early)  # in the order found; a stable sort keeps that order among equal keys
        names = RegistryNames()
        for k, checked in enumerate(iter_parallel(_check_folders, chunks, initializer=_init_worker,
                                                  initargs=(self.config, self.profile, self.keep_skills), jobs=jobs)):
            if bounds is None:  # worked out while the workers check the chunks already sent, not before
                bounds = _bounds(chunks)
            for skill, found, key in checked:
                self.tally.skills += 1
                if skill is not None:
                    self.skills.append(skill)
                pending.extend(found)
                pending.extend(names.add(key))
            if not pending:
                continue
            pending.sort(key=Diagnostic.sort_key)
            limit = bounds[k]
            ready = len(pending) if limit is None else bisect.bisect_left(pending, limit, key=_file_of)
            for d in pending[:ready]:
                self.tally.count(d)
                yield d
            del pending[:ready]
        for d in sorted(pending, key=Diagnostic.sort_key):  # findings of no skill, when there is none
            self.tally.count(d)
            yield d


def _bounds(chunks: list[list[str]]) -> list[str | None]:
    """When each chunk's findings may be written: ``bounds[k]`` is the least folder path of the chunks after
    chunk ``k`` (None after the last).

    A finding can be written once no skill still to come can report one that sorts before it. Every finding of a
    skill names its folder or a path below it, so none sorts before the folder's own path: the least path among
    the skills still to come bounds them all. Findings are written after each chunk of skills.
    """
    bounds: list[str | None] = [None] * len(chunks)
    for k in range(len(chunks) - 1, 0, -1):
        least = min(display_path(Path(folder)) for folder in chunks[k])
        later = bounds[k]
        bounds[k - 1] = least if later is None or least < later else later
    return bounds


def _file_of(diagnostic: Diagnostic) -> str:
    return diagnostic.file


def validate_paths(paths: Sequence[Path], config: RegistryConfig, profile: str | None = None,
                   jobs: int | None = None) -> ValidationReport:
    """Load every skill under ``paths`` (skill folders or folders of skills) and check each and all together.

    The report's skills carry no file bytes; ``ValidationRun`` streams the findings without holding the skills.
    """
    run = ValidationRun(paths, config, profile, jobs, keep_skills=True)
    diagnostics = tuple(run)
    return ValidationReport(tuple(run.skills), diagnostics)


def check_skill(skill: Skill, config: RegistryConfig, profile: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    shown = display_path(skill.folder)
    md_file = f"{shown}/{skill.skill_md}"
    if skill.frontmatter is not None:
        out.extend(_check_fields(skill, config, profile, md_file))
        out.extend(check_body(skill, md_file))
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
    return with_policy(out, config)


def with_policy(found: list[Diagnostic], config: RegistryConfig) -> list[Diagnostic]:
    """The findings without those of registry policy that registry.yaml does not switch on."""
    enabled = config.policy.enabled
    return [d for d in found if not RULES[d.code].policy or RULES[d.code].policy in enabled]


def _check_fields(skill: Skill, config: RegistryConfig, profile: str, file: str) -> Iterable[Diagnostic]:
    fm = skill.frontmatter
    assert fm is not None

    def at(code: str, key: str, message: str = "", **kw: Any) -> Diagnostic:
        return RULES[code].at(file, fm.line_of(key), message, skill=skill.name, **kw)

    def shown(key: str) -> str:
        return _show(fm.data[key], fm.sources.get(key))

    yield from _check_required(skill, fm, at, shown)
    yield from _check_optional(fm, at, shown)
    if "metadata" in fm.data:
        yield from _check_metadata(fm.data["metadata"], fm, config, at)
    elif config.categories:
        yield at("SK305", "name", "`metadata.category` is missing")
    yield from _check_yaml_form(skill, fm, profile, file)
    yield from _check_profile_fields(fm, profile, at, shown)


_At = Callable[..., Diagnostic]  # a finding at a field's line: (code, key, message, **fields)


def _check_required(skill: Skill, fm: Frontmatter, at: _At, shown: Callable[[str], str]) -> Iterable[Diagnostic]:
    """``name`` and ``description``."""
    data = fm.data
    # name
    if "name" not in data:
        yield at("SK101", "name", "required field `name` is missing")
    else:
        name = data["name"]
        if not isinstance(name, str) or not name.strip():
            yield at("SK102", "name", f"`name` must be a non-empty string, got {shown('name')}",
                     hint=_name_hint(name, fm.sources.get("name"), skill.name))
        else:
            yield from name_findings(name, skill.name, lambda code, msg, hint=None: at(code, "name", msg, hint=hint))
    # description
    if "description" not in data:
        yield at("SK107", "description", "required field `description` is missing")
    else:
        desc = data["description"]
        if not isinstance(desc, str) or not desc.strip():
            yield at("SK108", "description", f"`description` must be a non-empty string, got {shown('description')}",
                     hint=_value_hint("description", desc, fm.sources.get("description")))
        else:
            if len(desc) > MAX_DESCRIPTION:
                yield at("SK109", "description",
                         f"`description` is {len(desc)} characters; the limit is {MAX_DESCRIPTION}")
            match = PLACEHOLDER_TEXT.search(desc)
            if match:
                yield at("SK202", "description",
                         f"`description` still contains template text: {match.group(0).strip()!r}")


def _check_optional(fm: Frontmatter, at: _At, shown: Callable[[str], str]) -> Iterable[Diagnostic]:
    """The optional fields of the standard."""
    data = fm.data
    if "compatibility" in data:
        comp = data["compatibility"]
        if not isinstance(comp, str) or not comp.strip():
            yield at("SK110", "compatibility", f"`compatibility` must be a non-empty string, got "
                                               f"{shown('compatibility')}",
                     hint=_value_hint("compatibility", comp, fm.sources.get("compatibility")))
        elif len(comp) > MAX_COMPATIBILITY:
            yield at("SK111", "compatibility",
                     f"`compatibility` is {len(comp)} characters; the limit is {MAX_COMPATIBILITY}")
    if "license" in data and not isinstance(data["license"], str):
        yield at("SK114", "license", f"`license` must be a string, got {shown('license')}",
                 hint=_value_hint("license", data["license"], fm.sources.get("license")))
    if "allowed-tools" in data:
        tools = data["allowed-tools"]
        if isinstance(tools, list) and all(isinstance(t, str) for t in tools):
            written = [_unquoted(fm.sources.get(f"allowed-tools[{i}]"), tool) for i, tool in enumerate(tools)]
            hint = f"Write `allowed-tools: {' '.join(t for t in written if t)}`." if tools and all(written) else \
                "Write the tools on one line, separated by spaces."
            yield at("SK115", "allowed-tools", hint=hint)
        elif not isinstance(tools, str):
            yield at("SK116", "allowed-tools", f"`allowed-tools` must be a space-separated string, got "
                                               f"{shown('allowed-tools')}",
                     hint=_value_hint("allowed-tools", tools, fm.sources.get("allowed-tools")))


def _check_yaml_form(skill: Skill, fm: Frontmatter, profile: str, file: str) -> Iterable[Diagnostic]:
    # YAML the reference validator cannot read: an error where the open standard is the contract
    strict_severity = Severity.ERROR if profile == "spec" else Severity.WARNING
    for what, line, column in fm.non_strict:
        yield RULES["SK013"].at(file, line, f"the frontmatter uses {what}", column=column, skill=skill.name,
                                severity=strict_severity)
    if fm.bom:
        yield RULES["SK014"].at(file, 1, "SKILL.md starts with a UTF-8 byte-order mark", skill=skill.name,
                                severity=strict_severity)


def _check_profile_fields(fm: Frontmatter, profile: str, at: _At, shown: Callable[[str], str]) -> Iterable[Diagnostic]:
    data = fm.data
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
            close = _closest_field(key.replace("_", "-").lower())
            hint = f"Did you mean `{close}`?" if close else "Put registry data under `metadata`."
        severity = Severity.WARNING if profile == "lenient" else Severity.ERROR
        yield at("SK120", key, message, hint=hint, severity=severity)
    if profile != "spec":
        for key, (check, expected) in CLAUDE_FIELDS.items():
            if key in data and not check(data[key]):
                yield at("SK122", key, f"`{key}` must be {expected}, got {shown(key)}",
                         hint=_value_hint(key, data[key], fm.sources.get(key)) if check is _is_str else None)
        if "when_to_use" in data:
            yield at("SK123", "when_to_use", "`when_to_use` is deprecated")


@functools.lru_cache(maxsize=4096)
def _closest_field(key: str) -> str | None:
    """The field an unknown key is likely a typo of, kept per key: real skills repeat theirs (`author`, `tags`)."""
    close = difflib.get_close_matches(key, [*OPEN_FIELDS, *CLAUDE_FIELDS], 1, 0.6)
    return close[0] if close else None


_Finding = TypeVar("_Finding")


def name_findings(name: str, folder: str, report: Callable[..., _Finding]) -> Iterable[_Finding]:
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


def _check_metadata(meta: Any, fm: Frontmatter, config: RegistryConfig,
                    at: Callable[..., Diagnostic]) -> Iterable[Diagnostic]:
    if not isinstance(meta, dict):
        yield at("SK112", "metadata", f"`metadata` must be a mapping, got {_show(meta, fm.sources.get('metadata'))}")
        return
    for key, value in meta.items():
        path = f"metadata.{key}"
        if not isinstance(key, str):
            written = fm.key_sources.get(path)
            yield at("SK112", path, f"`metadata` key {written if written else repr(key)} is not a string",
                     hint=f"Quote it: `\"{written}\"`." if written is not None and _quotable(written) else
                     "Write the key as a quoted string.")
        elif not isinstance(value, str):
            written_items = [fm.sources.get(f"{path}[{i}]") for i in range(len(value))] \
                if isinstance(value, list) else []
            yield at("SK113", path, f"`{path}` must be a string, got {_show(value, fm.sources.get(path))}",
                     hint=_value_hint(key, value, fm.sources.get(path), written_items))
    category = meta.get("category")
    if isinstance(category, str) and config.categories:
        if category not in config.category_slugs:
            yield at("SK301", "metadata.category", f"unknown category `{category}`",
                     hint=category_hint(category, config.category_slugs))
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


def category_hint(category: str, slugs: Sequence[str]) -> str:
    """SK301's hint: the slug closest to ``category`` (whatever its case), if one is close, then every slug."""
    close = close_match(category.lower(), slugs, cutoff=0.5)
    return (f"Did you mean `{close}`? " if close else "") + f"Categories: {', '.join(slugs)}."


def name_problems(name: str) -> list[str]:
    """What `new` and `import` refuse in a skill's name, each "CODE: message. hint", as validate would say it."""
    if not name:
        return ["SK102: `name` must be a non-empty string"]
    problems = list(name_findings(name, name, lambda code, msg, hint=None: f"{code}: {msg}. {hint}" if hint else
                               f"{code}: {msg}"))
    if name in RESERVED_NAMES:
        problems.append(f"SK603: skill name `{name}` is reserved for the registry's own pages")
    return problems


def _invisible_chars(text: str, file: str, skill: str) -> Iterable[Diagnostic]:
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


class RegistryNames:
    """The rules that need every skill at once (unique names, names that differ only by case or width, reserved
    names), fed one skill at a time and keeping only the first folder of each name."""

    def __init__(self) -> None:
        self._by_name: dict[str, str] = {}  # name -> the folder that has it
        self._by_folded: dict[str, tuple[str, str]] = {}  # folded name -> (name as shown, folder)

    def add(self, key: NameKey) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        name = key.name
        if name in self._by_name:
            out.append(RULES["SK601"].at(key.file, key.line, f"skill name `{name}` is also used by "
                                                             f"{self._by_name[name]}", skill=key.skill))
        else:
            self._by_name[name] = key.folder
            folded = name if name.isascii() and name.islower() else unicodedata.normalize("NFKC", name).casefold()
            if folded in self._by_folded:
                other, folder = self._by_folded[folded]
                out.append(RULES["SK602"].at(key.file, key.line, f"skill name `{name}` collides with `{other}` in "
                                                                 f"{folder}", skill=key.skill))
            else:
                self._by_folded[folded] = (key.shown, key.folder)
        if name in RESERVED_NAMES:
            out.append(RULES["SK603"].at(key.file, key.line, f"skill name `{name}` is reserved", skill=key.skill))
        return out


def check_registry(skills: Sequence[Skill]) -> list[Diagnostic]:
    """``RegistryNames`` over a list of skills."""
    names = RegistryNames()
    return [d for skill in skills for d in names.add(NameKey.of(skill))]


def _slugify(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")


def _show(value: Any, written: str | None = None) -> str:
    """What YAML read, in words, with the text as the file writes it (never the parsed value: `1.10` is not
    shown as 1.1, nor `yes` as True)."""
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a mapping"
    if isinstance(value, str):
        return f"a string ({value!r})"
    kind = "nothing" if value is None else "a date" if isinstance(value, (datetime.date, datetime.datetime)) else \
        {bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)
    if written is None:
        written = "" if value is None else str(value)
    return f"{kind} ({written})" if written else kind


def _quotable(written: str) -> bool:
    """Whether putting double quotes around the written text gives the same characters as a YAML string."""
    return bool(written) and "\n" not in written and not written.startswith(("!", "&", "*")) and \
        not any(c in written for c in '"\\')


def _unquoted(written: str | None, value: Any) -> str | None:
    """A list item as it would stand inside one string: plain text as written, a quoted string without its
    quotes when that is exactly the text; None when no text from the file fits."""
    if written is None:
        return None
    if written[:1] in ("'", '"'):
        return value if isinstance(value, str) and written[1:-1] == value and _quotable(value) else None
    return written if _quotable(written) else None


def _value_hint(key: str, value: Any, written: str | None, items: Sequence[str | None] = ()) -> str | None:
    """How to write a value that must be a string, quoting only text the file holds; None: the rule's own hint."""
    if isinstance(value, dict):
        return (f"Values here must be strings, not a mapping: write `{key}` as one quoted string, or give each "
                f"of its entries a key of its own.")
    if isinstance(value, list):
        texts = [_unquoted(w, v) for w, v in zip(items, value)]
        if value and len(texts) == len(value) and all(t is not None for t in texts):
            return f"Write one comma-separated string: `{key}: \"{', '.join(t for t in texts if t)}\"`."
        return f"Write the items of `{key}` as one quoted, comma-separated string."
    if not written:
        return f"Write a value after `{key}:` as a quoted string, or delete the line."
    if not _quotable(written):
        return f"Write the value of `{key}` on one line, as a quoted string."
    if value is None:
        return f"Quote it if you mean the text: `{key}: \"{written}\"`; YAML reads `{written}` as no value."
    return f"Quote it: `{key}: \"{written}\"`."


def _name_hint(name: Any, written: str | None, folder: str) -> str:
    """SK102: quote a name YAML read as a number or date when, as a string, it is a valid name (`933133`)."""
    if written and _quotable(written) and NAME_CHARS.fullmatch(written) and len(written) <= MAX_NAME and \
            not (written.startswith("-") or written.endswith("-") or "--" in written):
        match = "" if written == folder else f" (and make it match the folder name `{folder}`)"
        return f"Quote it: `name: \"{written}\"`{match}."
    return f"Write the skill's name, lowercase letters, digits and hyphens, as the folder's: `name: {folder}`."
