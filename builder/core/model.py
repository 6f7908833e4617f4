"""Immutable values for a loaded skill: its files, its parsed frontmatter and its body."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

# Bytes that never appear in text files; a NUL in the first 8 KiB marks a file as binary (as git does).
_BINARY_SNIFF = 8192


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill folder: POSIX path relative to the folder, and its bytes."""

    path: str
    data: bytes = field(repr=False)
    executable: bool = False

    @property
    def size(self) -> int:
        return len(self.data)

    @cached_property
    def sha256(self) -> str:
        return sha256_hex(self.data)

    @cached_property
    def is_text(self) -> bool:
        """UTF-8 without NUL bytes; everything else is published base64-encoded."""
        if b"\0" in self.data[:_BINARY_SNIFF]:
            return False
        if self.data.isascii():  # valid UTF-8 as it is: no need to decode it to know
            return True
        try:
            self.data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True


@dataclass(frozen=True)
class Frontmatter:
    """Parsed YAML between the ``---`` lines, with the file line of every key (``metadata.category`` for nested)."""

    data: Mapping[str, Any]
    lines: Mapping[str, int]
    start_line: int  # line of the opening ---
    end_line: int  # line of the closing ---
    # YAML that strict readers (skills-ref's strictyaml) refuse: (what, line, column) of each use.
    non_strict: tuple[tuple[str, int, int], ...] = ()
    bom: bool = False  # the file starts with a UTF-8 byte-order mark
    # The text as written of each value YAML does not read as a string (`1.10`, `yes`, `~`, a list), by key path
    # as in ``lines`` (list items as ``path[0]``), and of nested keys that are not strings: hints quote these,
    # never the parsed value.
    sources: Mapping[str, str] = field(default_factory=dict)
    key_sources: Mapping[str, str] = field(default_factory=dict)

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.start_line)


# The form of a skill name, a category and a tag: lowercase letters and digits in words joined by single hyphens.
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64  # characters in a skill name


def short_digest(digest: str) -> str:
    """A digest as people read it: ``sha256:`` and its first 12 hex digits."""
    return digest[:19]


def skill_digest(files: tuple[SkillFile, ...] | list[SkillFile]) -> str:
    """``sha256:`` + SHA-256 over ``path NUL sha256(bytes) LF`` for every file in path order (see DESIGN.md)."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.path.encode("utf-8")):
        h.update(f.path.encode("utf-8") + b"\0" + f.sha256.encode("ascii") + b"\n")
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True)
class Skill:
    """A skill folder as loaded from disk. ``name`` is the folder name: the slug clients fetch it by."""

    name: str
    folder: Path
    skill_md: str  # "SKILL.md", or "skill.md" when only the lower-case fallback exists
    frontmatter: Frontmatter | None  # None when SKILL.md is missing or its frontmatter does not parse
    body: str
    body_line: int  # file line where the body starts
    files: tuple[SkillFile, ...]

    @property
    def meta(self) -> Mapping[str, Any]:
        data = self.frontmatter.data if self.frontmatter else {}
        meta = data.get("metadata")
        return meta if isinstance(meta, dict) else {}

    def field(self, key: str, default: Any = None) -> Any:
        return self.frontmatter.data.get(key, default) if self.frontmatter else default

    @property
    def description(self) -> str:
        value = self.field("description", "")
        return value.strip() if isinstance(value, str) else ""

    @property
    def category(self) -> str | None:
        value = self.meta.get("category")
        return value if isinstance(value, str) else None

    @property
    def tags(self) -> tuple[str, ...]:
        """``metadata.tags``: comma-separated, or (as agents read YAML, a departure from the standard) a list."""
        value = self.meta.get("tags")
        if isinstance(value, list):
            items = [t for t in value if isinstance(t, str)]
        elif isinstance(value, str):
            items = value.split(",")
        else:
            return ()
        return tuple(t.strip() for t in items if t.strip())

    @property
    def version(self) -> str | None:
        value = self.meta.get("version")
        return value if isinstance(value, str) else None

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @cached_property
    def digest(self) -> str:
        return skill_digest(self.files)

    def file(self, path: str) -> SkillFile | None:
        for f in self.files:
            if f.path == path:
                return f
        return None
