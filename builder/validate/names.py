"""A skill's name: the rules one name keeps (also for `new` and `import`) and those across the registry, where
names are unique, differ by more than case or width, and leave the site's own paths alone."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..core.diagnostics import RULES, Diagnostic
from ..core.loader import display_path
from ..core.model import MAX_NAME, Skill

NAME_CHARS = re.compile(r"^[a-z0-9-]+$")
PLACEHOLDER_NAMES = frozenset({"my-skill-name", "skill-name", "your-skill-name"})
# Names that would collide with the site's own folders and API paths.
RESERVED_NAMES = frozenset({
    "api", "assets", "search", "tags", "tag", "categories", "category", "skills", "index", "static",
    "stylesheets", "javascripts", "schema", "bundles", "well-known", "404", "sitemap", "feed", "new",
})


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


def name_problems(name: str) -> list[str]:
    """What `new` and `import` refuse in a skill's name, each "CODE: message. hint", as validate would say it."""
    if not name:
        return ["SK102: `name` must be a non-empty string"]
    problems = list(name_findings(name, name, lambda code, msg, hint=None: f"{code}: {msg}. {hint}" if hint else
                               f"{code}: {msg}"))
    if name in RESERVED_NAMES:
        problems.append(f"SK603: skill name `{name}` is reserved for the registry's own pages")
    return problems


@dataclass(frozen=True)
class NameKey:
    """What the registry-wide rules need of one skill, so they never hold the skills themselves."""

    skill: str  # what findings name the skill by: its repository path (its folder name when unknown)
    name: str  # the declared name when it is a non-empty string, else the folder name
    shown: str  # the name as other findings quote it: the declared value, or the folder name
    folder: str  # the folder as the user would type it
    file: str  # its SKILL.md, as findings name it
    line: int  # the line of `name`

    @classmethod
    def of(cls, skill: Skill, key: str | None = None) -> NameKey:
        """``key``: what the findings name the skill by (its repository path; its name by default)."""
        declared = skill.field("name")
        folder = display_path(skill.folder)
        return cls(skill=key or skill.name, name=declared if isinstance(declared, str) and declared else skill.name,
                   shown=f"{declared or skill.name}", folder=folder, file=f"{folder}/{skill.skill_md}",
                   line=skill.frontmatter.line_of("name") if skill.frontmatter else 0)


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
                                                             f"{self._by_name[name]}; each publishes under its own "
                                                             "slug", skill=key.skill))
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


def check_registry(skills: Sequence[Skill], keys: Sequence[str] | None = None) -> list[Diagnostic]:
    """``RegistryNames`` over a list of skills, each named by its key in ``keys`` (its repository path)."""
    names = RegistryNames()
    return [d for i, skill in enumerate(skills) for d in names.add(NameKey.of(skill, keys[i] if keys else None))]
