"""registry.yaml: the registry's title, URLs, categories, default profile, limits and policy."""

from __future__ import annotations

import datetime
import difflib
import posixpath
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError
from .limits import LIMITS

CONFIG_NAME = "registry.yaml"
PROFILES = ("spec", "claude-code", "agents")
# Earlier names of profiles, still read: `lenient` was the first try at publishing what agents load.
PROFILE_ALIASES = {"lenient": "agents"}


def profile_named(name: str) -> str:
    """The profile a name (or an earlier name, ``PROFILE_ALIASES``) stands for; unknown names unchanged."""
    return PROFILE_ALIASES.get(name, name)


@dataclass(frozen=True)
class Category:
    slug: str
    title: str
    description: str = ""


@dataclass(frozen=True)
class Limits:
    """registry.yaml's ``limits:``; defaults and ceilings come from the shared table in ``core.limits``."""

    max_files: int = LIMITS["max_files"].default
    max_file_bytes: int = LIMITS["max_file_bytes"].default
    max_skill_bytes: int = LIMITS["max_skill_bytes"].default
    max_frontmatter_bytes: int = LIMITS["max_frontmatter_bytes"].default
    max_tags: int = LIMITS["max_tags"].default


@dataclass(frozen=True)
class Policy:
    """Registry policy: rules this registry adds to the open standard, each on only when registry.yaml's
    ``policy:`` section switches it on (the standard itself says nothing about them)."""

    semver: bool = False  # metadata.version is a semantic version (SK304)
    categories: bool = False  # metadata.category is one of `categories` (SK301, SK305)
    tags: bool = False  # metadata.tags is a few comma-separated lowercase slugs (SK302, SK303)
    placeholders: bool = False  # no template text left in name or description (SK201, SK202)
    version_bump: bool = False  # under --changed-since, a changed skill raises metadata.version (SK306)

    @property
    def enabled(self) -> frozenset[str]:
        return frozenset(name for name in Policy.__dataclass_fields__ if getattr(self, name))


@dataclass(frozen=True)
class VersionMark:
    """One version named under ``history.yanked`` or ``history.taken_down``, with where registry.yaml names it."""

    name: str
    digest: str
    reason: str
    line: int  # line of the entry in registry.yaml

    def where(self, path: Path | None, section: str) -> str:
        return f"{path or CONFIG_NAME}:{self.line}: history.{section}"


@dataclass(frozen=True)
class HistoryPolicy:
    """How much of each skill's git history the build publishes, and the versions a maintainer withdrew."""

    keep: int | None = None  # the newest N versions per skill keep their bytes; None: all
    since: datetime.date | None = None  # versions first published before this date lose their bytes
    yanked: tuple[VersionMark, ...] = ()
    taken_down: tuple[VersionMark, ...] = ()
    # The commit the registry's published history starts at, as written (a fork's first own commit): what skills
    # were before it is not published, and a skill gone before it is not published at all.
    start: str | None = None
    start_line: int = 0

    def describe_keep(self) -> str:
        return f"keep: {self.keep}" if self.keep is not None else f"keep: {self.since}" if self.since else "keep: all"


# The marketplace files `skillreg marketplace` can write (registry.yaml's `marketplaces:`): Claude Code's,
# GitHub Copilot's, Codex's, and an Agent Plugins 1.0.0 plugin.json in each plugin folder that has no manifest.
MARKETPLACES = ("claude", "copilot", "codex", "agent-plugins")
RAW_FILES = ("all", "linked")
PAGE_BODY = ("inline", "fetched")


@dataclass(frozen=True)
class Publish:
    """Which copies of each skill's files the build writes (registry.yaml's ``publish:``). The zip is always
    published: every client installs from it. The defaults publish every copy, as builds always have."""

    raw_files: str = "all"  # all: every file under api/v1/skills/<name>/files/; linked: those SKILL.md's body links
    json_bundles: bool = True  # api/v1/bundles/<name>/<name>-<digest12>.json, the files as one JSON document
    well_known_skills: bool = True  # .well-known/skills/ (discovery v0.1): its index and a copy of every file
    # inline: the skill page holds its rendered SKILL.md; fetched: the page loads it from skills/<name>/skill-md.html.gz
    page_body: str = "inline"
    # The most the host publishes, in bytes; past it the build picks LEAN_PUBLISH for the keys not written
    # (``publish.host_fit``). 1 GB: what GitHub documents for a published Pages site.
    host_limit: int = 1_000_000_000
    written: tuple[str, ...] = ()  # the keys of PUBLISH_COPIES registry.yaml writes: those always win


# The keys of ``publish:`` that choose copies, and the lean value of each: only the copies a known reader fetches.
PUBLISH_COPIES = ("raw_files", "json_bundles", "well_known_skills", "page_body")
LEAN_PUBLISH: dict[str, Any] = {"raw_files": "linked", "json_bundles": False, "well_known_skills": False,
                                "page_body": "fetched"}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B|B)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(value: Any) -> int | None:
    """``1GB``, ``500 MB``, ``2GiB`` or a whole number of bytes as bytes; None when it is none of those."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    size = int(float(match[1]) * _UNITS[(match[2] or "").lower()])
    return size if size > 0 else None


@dataclass(frozen=True)
class RegistryConfig:
    root: Path  # folder holding registry.yaml (or the current folder when there is none)
    path: Path | None  # the registry.yaml read, if any
    title: str = "Skill Registry"
    description: str = ""
    base_url: str = ""
    repository: str = ""
    skills_dir: str = "skills"  # where `new` and `import` create a skill (the first plain folder of `locations`)
    # Where skills live (registry.yaml's `skills:`, or `skills_dir` as its one item): folders or glob patterns
    # relative to ``root``. None: found as agents find them (``core.discovery``).
    locations: tuple[str, ...] | None = None
    profile: str = "spec"
    limits: Limits = field(default_factory=Limits)
    categories: tuple[Category, ...] = ()
    policy: Policy = field(default_factory=Policy)
    history: HistoryPolicy = field(default_factory=HistoryPolicy)
    publish: Publish = field(default_factory=Publish)
    marketplaces: tuple[str, ...] = ("claude",)

    @property
    def skills_path(self) -> Path:
        return self.root / self.skills_dir

    @property
    def category_slugs(self) -> tuple[str, ...]:
        return tuple(c.slug for c in self.categories)


def merge_flags(config: RegistryConfig, *, profile: str | None = None, base_url: str | None = None) -> RegistryConfig:
    """``config`` with the command's flags merged in: each overrides registry.yaml only when given (not None).
    Merged once where a command starts, so that the rest reads one value, ``config.profile``."""
    if profile:
        config = replace(config, profile=profile_named(profile))
    if base_url is not None:
        config = replace(config, base_url=base_url)
    return config


def find_config(start: Path) -> Path | None:
    """The nearest registry.yaml in ``start`` or a parent folder, like git finds its repository."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def _expect(value: Any, kind: type | tuple[type, ...], where: str, path: Path) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ConfigError(f"{path}: `{where}` must be a {names}, got {value!r}")
    return value


def load_config(path: Path | None = None, start: Path | None = None) -> RegistryConfig:
    """Read ``path`` (or the nearest registry.yaml above ``start``); without one, defaults rooted at ``start``."""
    if path is None:
        path = find_config(start or Path.cwd())
        if path is None:
            return RegistryConfig(root=(start or Path.cwd()).resolve(), path=None)
    try:
        text = path.read_text(encoding="utf-8")
        raw = yaml.safe_load(text)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc})") from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 0
        raise ConfigError(f"{path}:{line}: invalid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from None
    raw = {} if raw is None else _expect(raw, dict, "top level", path)

    limits_raw = _expect(raw.get("limits") or {}, dict, "limits", path)
    defaults = Limits()
    limits = Limits(**{
        name: _expect(limits_raw.get(name, getattr(defaults, name)), int, f"limits.{name}", path)
        for name in Limits.__dataclass_fields__
    })
    unknown_limits = set(limits_raw) - set(Limits.__dataclass_fields__)
    if unknown_limits:
        keys = "key" if len(unknown_limits) == 1 else "keys"
        raise ConfigError(f"{path}: unknown {keys} under `limits`: {', '.join(sorted(unknown_limits))}")
    for name, limit in LIMITS.items():
        value = getattr(limits, name)
        if limit.ceiling is not None and value > limit.ceiling:
            raise ConfigError(f"{path}:{_line_of(text, 'limits', name)}: `limits.{name}` is {value:,}; the most "
                              f"registry.yaml may set is {limit.ceiling:,} {limit.unit}, what every skillreg client "
                              f"installs and the MCP Skills extension serves")

    categories = []
    for i, item in enumerate(_expect(raw.get("categories") or [], list, "categories", path)):
        item = _expect(item, dict, f"categories[{i}]", path)
        slug = _expect(item.get("slug"), str, f"categories[{i}].slug", path)
        categories.append(Category(
            slug=slug,
            title=_expect(item.get("title", slug), str, f"categories[{i}].title", path),
            description=_expect(item.get("description", ""), str, f"categories[{i}].description", path),
        ))
    slugs = [c.slug for c in categories]
    if len(set(slugs)) != len(slugs):
        raise ConfigError(f"{path}: duplicate category slug in `categories`")

    profile = profile_named(_expect(raw.get("profile", "spec"), str, "profile", path))
    if profile not in PROFILES:
        raise ConfigError(f"{path}: `profile` must be one of {', '.join(PROFILES)}, got {profile!r}")

    policy = _load_policy(raw.get("policy"), bool(categories), path, text)
    history = _load_history(raw.get("history"), text, path)
    publish = _load_publish(raw.get("publish"), text, path)

    return RegistryConfig(
        root=path.parent.resolve(),
        path=path,
        title=_expect(raw.get("title", "Skill Registry"), str, "title", path),
        description=_expect(raw.get("description", ""), str, "description", path),
        base_url=_expect(raw.get("base_url", ""), str, "base_url", path),
        repository=_expect(raw.get("repository", ""), str, "repository", path),
        **_locations(raw, text, path),
        profile=profile,
        limits=limits,
        categories=tuple(categories),
        policy=policy,
        history=history,
        publish=publish,
        marketplaces=_marketplaces(raw, text, path),
    )


def _marketplaces(raw: dict[str, Any], text: str, path: Path) -> tuple[str, ...]:
    """``marketplaces:``, a list of ``MARKETPLACES`` (default: Claude Code's alone)."""
    if "marketplaces" not in raw:
        return ("claude",)
    items = _expect(raw["marketplaces"], list, "marketplaces", path)
    for item in items:
        if item not in MARKETPLACES:
            raise ConfigError(f"{path}:{_line_of(text, 'marketplaces')}: unknown marketplace {item!r} under "
                              f"`marketplaces`; known: {', '.join(MARKETPLACES)}")
    return tuple(dict.fromkeys(items))


_DRIVE = re.compile(r"[A-Za-z]:")


_GLOB = re.compile(r"[*?\[]")


def _locations(raw: dict[str, Any], text: str, path: Path) -> dict[str, Any]:
    """``skills:`` (a list of folders or glob patterns) or ``skills_dir:`` (one folder), never both; neither:
    skills are found where agents look (``locations`` None)."""
    if "skills" in raw and "skills_dir" in raw:
        raise ConfigError(f"{path}:{_line_of(text, 'skills_dir')}: `skills` and `skills_dir` both say where skills "
                          f"live; keep `skills` (a list of folders) and remove `skills_dir`")
    if "skills_dir" in raw:
        folder = _location(raw["skills_dir"], "skills_dir", text, path, glob=False)
        return {"skills_dir": folder, "locations": (folder,)}
    if "skills" not in raw:
        return {}
    items = raw["skills"]
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{path}:{_line_of(text, 'skills')}: `skills` must be a list of folders or glob patterns "
                          f"relative to {CONFIG_NAME}, such as `[skills, plugins/*/skills]`, got {items!r}")
    locations = tuple(_location(item, f"skills[{i}]", text, path, glob=True) for i, item in enumerate(items))
    plain = [item for item in locations if not _GLOB.search(item)]
    return {"skills_dir": plain[0] if plain else "skills", "locations": locations}


def _location(raw: Any, key: str, text: str, path: Path, *, glob: bool) -> str:
    """One folder below registry.yaml's, written relative to it. An absolute path or one that climbs out with
    ``..`` would publish folders from outside the checkout. (A link leading out is refused by discovery, which
    never follows one out of the repository.)"""
    value: str = _expect(raw, str, key, path)
    written = value.replace("\\", "/")  # `..\\x` climbs out on Windows
    line = _line_of(text, key.partition("[")[0])
    if not written.strip():
        why = "is empty"
    elif written.startswith("/") or _DRIVE.match(written):
        why = "is an absolute path"
    elif posixpath.normpath(written).split("/")[0] == "..":
        why = "climbs out of the repository with `..`"
    elif not glob and _GLOB.search(written):
        why = "is a pattern; `skills_dir` names one folder (list patterns under `skills`)"
    else:
        return value
    raise ConfigError(f"{path}:{line}: `{key}` {value!r} {why}; it must name a folder inside the repository, "
                      f"relative to {CONFIG_NAME}, such as `skills`")


def _node_at(text: str, *keys: str) -> tuple[int, yaml.Node | None]:
    """The file line of the deepest key of ``keys`` (a path of mapping keys) found in registry.yaml's text, and
    the node at the whole path (None when some key is missing). safe_load drops positions; compose keeps them."""
    try:
        node: yaml.Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return 0, None
    line = 0
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            return line, None
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                line, node = key_node.start_mark.line + 1, value_node
                break
        else:
            return line, None
    return line, node


def _line_of(text: str, *keys: str) -> int:
    """The file line of the key at ``keys`` in registry.yaml's text (of its deepest key found; 0 when none is)."""
    return _node_at(text, *keys)[0]


def _unknown_key(path: Path, line: int, what: str, key: object, known: tuple[str, ...]) -> ConfigError:
    """``unknown policy `semvr`; did you mean `semver`? known: ...``, naming the file and line."""
    name = str(key).rpartition(".")[2]
    close = difflib.get_close_matches(name, known, 1, 0.6)
    guess = f"did you mean `{close[0]}`? " if close else ""
    return ConfigError(f"{path}:{line}: unknown {what} `{key}`; {guess}known: {', '.join(known)}")


def _load_policy(raw: Any, has_categories: bool, path: Path, text: str) -> Policy:
    """``policy:``: each known rule set switched on or off with true/false; anything else names its line."""
    if raw is None:
        return Policy()
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}:{_line_of(text, 'policy')}: `policy` must be a mapping of rule sets to "
                          f"true or false, e.g. `semver: true`")
    known = tuple(Policy.__dataclass_fields__)
    for key, value in raw.items():
        if key not in known:
            raise _unknown_key(path, _line_of(text, "policy", str(key)), "policy", key, known)
        if not isinstance(value, bool):
            raise ConfigError(f"{path}:{_line_of(text, 'policy', key)}: `policy.{key}` must be true or false, "
                              f"got {value!r}")
    policy = Policy(**raw)
    if policy.categories and not has_categories:
        raise ConfigError(f"{path}:{_line_of(text, 'policy', 'categories')}: `policy.categories` is on but "
                          f"`categories` lists none; add the categories or switch the policy off")
    return policy


def _load_publish(raw: Any, text: str, path: Path) -> Publish:
    """``publish:``: ``raw_files: all | linked``, ``page_body: inline | fetched``, ``json_bundles`` and
    ``well_known_skills`` true or false, ``host_limit`` a size."""
    if raw is None:
        return Publish()
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}:{_line_of(text, 'publish')}: `publish` must be a mapping such as "
                          f"`raw_files: linked`, got {raw!r}")
    known = (*PUBLISH_COPIES, "host_limit")
    limit = Publish.host_limit
    for key, value in raw.items():
        line = _line_of(text, "publish", str(key))
        if key not in known:
            raise _unknown_key(path, line, "key", f"publish.{key}", known)
        if key == "host_limit":
            size = parse_size(value)
            if size is None:
                raise ConfigError(f"{path}:{line}: `publish.host_limit` must be a size such as 1GB or 500MB, "
                                  f"got {value!r}")
            limit = size
            continue
        choices = {"raw_files": RAW_FILES, "page_body": PAGE_BODY}.get(key)
        if choices is not None:
            if value not in choices:
                raise ConfigError(f"{path}:{line}: `publish.{key}` must be {' or '.join(choices)}, got {value!r}")
        elif not isinstance(value, bool):
            raise ConfigError(f"{path}:{line}: `publish.{key}` must be true or false, got {value!r}")
    copies = {key: value for key, value in raw.items() if key in PUBLISH_COPIES}
    return Publish(**copies, host_limit=limit, written=tuple(key for key in PUBLISH_COPIES if key in copies))


_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_HISTORY_KEYS = ("start", "keep", "yanked", "taken_down")


def _entry_lines(text: str, section: str) -> list[int]:
    """The registry.yaml line of each item of ``history.<section>``."""
    node = _node_at(text, "history", section)[1]
    return [item.start_mark.line + 1 for item in node.value] if isinstance(node, yaml.SequenceNode) else []


def _load_history(raw: Any, text: str, path: Path) -> HistoryPolicy:
    """The ``history:`` section: ``keep`` (all, N or a date), ``yanked`` and ``taken_down`` lists."""
    if raw is None:
        return HistoryPolicy()
    raw = _expect(raw, dict, "history", path)
    unknown = set(raw) - set(_HISTORY_KEYS)
    if unknown:
        keys = "key" if len(unknown) == 1 else "keys"
        raise ConfigError(f"{path}: unknown {keys} under `history`: {', '.join(sorted(map(str, unknown)))}; "
                          f"expected {', '.join(_HISTORY_KEYS)}")
    keep_raw = raw.get("keep", "all")
    keep: int | None = None
    since: datetime.date | None = None
    if isinstance(keep_raw, str) and keep_raw != "all":
        try:  # a quoted date is still a date
            keep_raw = datetime.date.fromisoformat(keep_raw)
        except ValueError:
            pass
    if isinstance(keep_raw, bool) or not (keep_raw == "all" or isinstance(keep_raw, (int, datetime.date))):
        raise ConfigError(f"{path}: `history.keep` must be `all`, a number of versions or a date like 2026-01-01, "
                          f"got {keep_raw!r}")
    if isinstance(keep_raw, int):
        if keep_raw < 1:
            raise ConfigError(f"{path}: `history.keep` must be at least 1, got {keep_raw}")
        keep = keep_raw
    elif isinstance(keep_raw, datetime.date):
        since = keep_raw.date() if isinstance(keep_raw, datetime.datetime) else keep_raw
    marks: dict[str, tuple[VersionMark, ...]] = {}
    for section in ("yanked", "taken_down"):
        items = _expect(raw.get(section) or [], list, f"history.{section}", path)
        lines = _entry_lines(text, section)
        found: list[VersionMark] = []
        for i, item in enumerate(items):
            line = lines[i] if i < len(lines) else 0
            where = f"{path}:{line}: history.{section}[{i}]"
            if not isinstance(item, dict) or set(item) - {"name", "digest", "reason"}:
                raise ConfigError(f"{where} must be a mapping of name, digest and reason, got {item!r}")
            name, digest, reason = item.get("name"), item.get("digest"), item.get("reason")
            if not isinstance(name, str) or not name:
                raise ConfigError(f"{where}: `name` must be a skill name, got {name!r}")
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
                raise ConfigError(f"{where}: `digest` must be a full `sha256:` and 64 lower-case hex digits, "
                                  f"got {digest!r}")
            if not isinstance(reason, str) or not reason.strip():
                raise ConfigError(f"{where}: `reason` must say why, in a few words")
            found.append(VersionMark(name, digest, reason.strip(), line))
        marks[section] = tuple(found)
    both = {(m.name, m.digest) for m in marks["yanked"]} & {(m.name, m.digest) for m in marks["taken_down"]}
    if both:
        name, digest = sorted(both)[0]
        raise ConfigError(f"{path}: {name} {digest} is both yanked and taken down; keep one")
    start = raw.get("start")
    if start is not None and not (isinstance(start, str) and re.fullmatch(r"[0-9a-f]{7,40}", start)):
        raise ConfigError(f"{path}: `history.start` must be a commit id (7 to 40 lower-case hex digits, in quotes: "
                          f"start: \"<commit>\"), got {start!r}")
    return HistoryPolicy(keep=keep, since=since, yanked=marks["yanked"], taken_down=marks["taken_down"],
                         start=start, start_line=_node_at(text, "history", "start")[0] if start else 0)
