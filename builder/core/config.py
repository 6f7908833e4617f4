"""registry.yaml: the registry's title, URLs, categories, default profile, limits and policy."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError

CONFIG_NAME = "registry.yaml"
PROFILES = ("spec", "claude-code", "lenient")


@dataclass(frozen=True)
class Category:
    slug: str
    title: str
    description: str = ""


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 1024 * 1024
    max_skill_bytes: int = 10 * 1024 * 1024
    max_frontmatter_bytes: int = 64 * 1024
    max_tags: int = 10


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
class RegistryConfig:
    root: Path  # folder holding registry.yaml (or the current folder when there is none)
    path: Path | None  # the registry.yaml read, if any
    title: str = "Skill Registry"
    description: str = ""
    base_url: str = ""
    repository: str = ""
    skills_dir: str = "skills"
    profile: str = "spec"
    limits: Limits = field(default_factory=Limits)
    categories: tuple[Category, ...] = ()
    policy: Policy = field(default_factory=Policy)

    @property
    def skills_path(self) -> Path:
        return self.root / self.skills_dir

    @property
    def category_slugs(self) -> tuple[str, ...]:
        return tuple(c.slug for c in self.categories)


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
        raise ConfigError(f"{path}: unknown key(s) under `limits`: {', '.join(sorted(unknown_limits))}")

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

    profile = _expect(raw.get("profile", "spec"), str, "profile", path)
    if profile not in PROFILES:
        raise ConfigError(f"{path}: `profile` must be one of {', '.join(PROFILES)}, got {profile!r}")

    policy = _load_policy(raw.get("policy"), bool(categories), path, text)

    return RegistryConfig(
        root=path.parent.resolve(),
        path=path,
        title=_expect(raw.get("title", "Skill Registry"), str, "title", path),
        description=_expect(raw.get("description", ""), str, "description", path),
        base_url=_expect(raw.get("base_url", ""), str, "base_url", path),
        repository=_expect(raw.get("repository", ""), str, "repository", path),
        skills_dir=_expect(raw.get("skills_dir", "skills"), str, "skills_dir", path),
        profile=profile,
        limits=limits,
        categories=tuple(categories),
        policy=policy,
    )


def _line_of(text: str, *keys: str) -> int:
    """The file line of the key at ``keys`` (a path of mapping keys) in registry.yaml's text; 0 when not found."""
    node: yaml.Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
    line = 0
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            return line
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                line, node = key_node.start_mark.line + 1, value_node
                break
        else:
            return line
    return line


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
            close = difflib.get_close_matches(str(key), known, 1, 0.6)
            guess = f"did you mean `{close[0]}`? " if close else ""
            raise ConfigError(f"{path}:{_line_of(text, 'policy', str(key))}: unknown policy `{key}`; {guess}"
                              f"known: {', '.join(known)}")
        if not isinstance(value, bool):
            raise ConfigError(f"{path}:{_line_of(text, 'policy', key)}: `policy.{key}` must be true or false, "
                              f"got {value!r}")
    policy = Policy(**raw)
    if policy.categories and not has_categories:
        raise ConfigError(f"{path}:{_line_of(text, 'policy', 'categories')}: `policy.categories` is on but "
                          f"`categories` lists none; add the categories or switch the policy off")
    return policy
