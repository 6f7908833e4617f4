"""The one rule that gives each skill its slug: the ``name`` the API publishes it under, in the grammar every client
and lock already accepts (``^[a-z0-9]+(?:-[a-z0-9]+)*$``, at most 64 characters).

- A skill whose SKILL.md ``name`` is a valid slug keeps it (so no published URL of a registry changes), even when
  its folder is called something else: agents load a skill by that name.
- A name that is not one (``_``, capitals, other characters) gets a slug derived from it; the skill's own name is
  published beside the slug.
- Two skills that would share a slug are told apart by their plugin or category folder (``<group>-<slug>``, then
  ``<slug>-2``, ``-3``... when that is taken too or there is no group). Which one keeps the plain slug is decided
  by git history: the skill folder that claimed it first (the earliest commit on the built branch at which the
  folder held a SKILL.md giving that slug), then the folder path. History only grows, so a slug once published by
  a folder is never given to another one, and a rebuild of one commit gives the same slugs without any state file.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .model import MAX_NAME, SLUG

FALLBACK = "skill"
NOT_YET = 1 << 62  # the claim of a folder no commit holds yet: after every committed one


def is_slug(name: object) -> bool:
    return isinstance(name, str) and len(name) <= MAX_NAME and SLUG.fullmatch(name) is not None


def derive_slug(text: str) -> str:
    """A slug made from any text: letters folded to ASCII lower case, every run of other characters one hyphen,
    at most 64 characters; ``skill`` when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    ascii_text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", ascii_text)  # camelCase -> camel-case
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:MAX_NAME].rstrip("-") or FALLBACK


def base_slug(declared: object, folder_name: str) -> str:
    """The slug a skill asks for before any other skill is considered: its SKILL.md ``name`` when that is a valid
    slug; else one derived from that name, or from its folder's name when it declares none."""
    if is_slug(declared):
        assert isinstance(declared, str)
        return declared
    if isinstance(declared, str) and declared.strip():
        return derive_slug(declared)
    return folder_name if is_slug(folder_name) else derive_slug(folder_name)


def group_slug(group: str | None) -> str | None:
    """The part of a group folder a slug is told apart by: its last folder's name, leading dots dropped
    (``plugins/docs`` -> ``docs``, ``skills/.curated`` -> ``curated``)."""
    if not group:
        return None
    last = posixpath.basename(group.rstrip("/")).lstrip(".")
    return derive_slug(last) if last else None


def slug_fits(slug: str, declared: object) -> bool:
    """Whether the slug rule can give ``slug`` to a skill declaring ``declared``: its base slug itself, told apart by
    a group (``<group>-<base>``) or numbered (``<base>-N``). What a client checks a delivered skill against."""
    if not isinstance(declared, str) or not declared.strip():
        return False
    base = base_slug(declared, slug)
    if slug == base or slug.endswith("-" + base):
        return True
    match = _NUMBERED.fullmatch(slug)
    return match is not None and match.group(1) == base


@dataclass(frozen=True)
class SlugClaim:
    """One skill folder asking for ``base``."""

    path: str  # the folder, relative to the repository
    group: str | None  # its plugin or category folder (``core.discovery.group_of``)
    base: str  # ``base_slug`` of its name


def fallback(claim: SlugClaim) -> str | None:
    """The slug a claim takes when its base is taken: its group's name joined to it (``docs-pdf``), unless it has
    no group or its base already starts with that name."""
    group = group_slug(claim.group)
    return _joined(group, claim.base) if group and not claim.base.startswith(group + "-") else None


def _joined(first: str, second: str) -> str:
    """``first-second`` within 64 characters (``first`` is cut)."""
    room = MAX_NAME - len(second) - 1
    return f"{first[:room].rstrip('-')}-{second}"


_NUMBERED = re.compile(r"(.+)-([0-9]+)")


def _contenders(claims: list[SlugClaim]) -> dict[str, SlugClaim]:
    """The claims that must be served in order: those asking for one base, and, drawn in with them, those whose
    base is a contender's fallback (its group form, or a numbered form of its base)."""
    by_base: dict[str, list[SlugClaim]] = {}
    for claim in claims:
        by_base.setdefault(claim.base, []).append(claim)
    numbered: dict[str, list[str]] = {}  # base -> the bases `base-N` some claim asks for
    for base in by_base:
        match = _NUMBERED.fullmatch(base)
        if match:
            numbered.setdefault(match.group(1), []).append(base)
    involved = {c.path: c for group in by_base.values() if len(group) > 1 for c in group}
    queue = list(involved.values())
    while queue:
        claim = queue.pop()
        drawn = [*by_base.get(fallback(claim) or "", ())]
        drawn += [c for base in numbered.get(claim.base, ()) for c in by_base[base]]
        for other in drawn:
            if other.path not in involved:
                involved[other.path] = other
                queue.append(other)
    return involved


def assign_slugs(claims: Iterable[SlugClaim], since: Callable[[SlugClaim], int]) -> dict[str, str]:
    """Each claim's path -> its slug, every slug once. A claim no other contends with takes its base. The others
    (``_contenders``) are served oldest first, ties by path, each taking its base, else its ``fallback``, else
    ``<base>-2``, ``-3``...: ``since(claim)`` is the position on the built branch from which the claim's folder
    asked for ``claim.base`` (``NOT_YET`` when uncommitted), asked only of the contenders."""
    claims = list(claims)
    involved = _contenders(claims)
    assigned = {claim.path: claim.base for claim in claims if claim.path not in involved}
    taken = set(assigned.values())
    order = {path: since(claim) for path, claim in involved.items()}
    next_number: dict[str, int] = {}
    for claim in sorted(involved.values(), key=lambda c: (order[c.path], c.path)):
        slug = claim.base if claim.base not in taken else fallback(claim)
        if slug is None or slug in taken:
            n = next_number.get(claim.base, 2)
            while _joined(claim.base, str(n)) in taken:
                n += 1
            slug, next_number[claim.base] = _joined(claim.base, str(n)), n + 1
        taken.add(slug)
        assigned[claim.path] = slug
    return assigned
