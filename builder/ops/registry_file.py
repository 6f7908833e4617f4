"""The ``registry.yaml`` that ``skillreg init`` writes: every value it found, each with a comment saying where it
came from and what it does, so the file explains itself to the maintainer who reads it next."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

AGENTS_PROFILE = "agents"
BUILD_OUTPUT = "site"  # `skillreg build`'s default output folder, which init adds to .gitignore


@dataclass(frozen=True)
class Settings:
    """What registry.yaml will say; each value as found, or as the user answered."""

    title: str
    description: str
    base_url: str
    repository: str
    locations: tuple[str, ...] | None  # None: registry.yaml names none and discovery searches
    title_from: str = ""  # where the title and description came from ("README.md"; "" for the repository's name)


def scalar(value: str) -> str:
    """``value`` as one YAML scalar on one line, quoted when YAML would read it as something else."""
    text: str = yaml.safe_dump(value, allow_unicode=True, width=1 << 20, default_flow_style=True)
    return text.removesuffix("\n...\n").removesuffix("\n")


def registry_yaml(settings: Settings, baseline: str | None) -> str:
    """The text of registry.yaml; ``baseline`` names the baseline file when init writes one."""
    source = f"from {settings.title_from}" if settings.title_from else "from the repository's name"
    lines = [
        "# Settings of this skill registry, written by `skillreg init`; `skillreg validate`, `build` and `serve` read",
        "# them. Every key is described in skill-registry's documentation (Reference: registry.yaml).",
        "",
        f"# The website's title and the line under it ({source}).",
        f"title: {scalar(settings.title)}",
        f"description: {scalar(settings.description)}",
        "",
        *_addresses(settings),
        "",
        *_locations(settings.locations),
        "",
        "# What a skill must meet to be published. `agents` publishes every skill that Claude Code, Codex and",
        "# Gemini CLI load, and shows each departure from the open standard (agentskills.io) as a warning on the",
        "# skill's page; `spec` is the open standard, strictly.",
        f"profile: {AGENTS_PROFILE}",
    ]
    if baseline:
        lines += [
            f"# The findings the skills had when `skillreg init` ran are recorded in {baseline}: they are shown, not",
            "# enforced. A new or changed skill must meet the standard; the pull-request check refuses a baseline",
            "# that grew.",
        ]
    lines += [
        "",
        "# Versions are published from the whole git history; to start at a later commit (a fork's own first), set:",
        "# history:",
        "#   start: \"<commit>\"",
    ]
    return "\n".join(lines) + "\n"


def _addresses(settings: Settings) -> list[str]:
    if settings.base_url:
        where = ["# Where the site and API are served (GitHub Pages, from the `origin` remote). The Pages workflow",
                 "# passes the address GitHub gives it (a custom domain too); this one is for builds elsewhere."]
    else:
        where = ["# Where the site and API are served: set it to the public address (https://.../) once you know it.",
                 "# Empty, `skillreg build` writes links relative to the site, for local use; the Pages workflow",
                 "# passes the address GitHub gives it."]
    if settings.repository:
        source = ["# Each skill page's \"source\" and \"history\" links point into this repository."]
    else:
        source = ["# The repository's web address, for each skill page's \"source\" and \"history\" links (empty: none",
                  "# shown); there was no `origin` remote to read it from."]
    return [*where, f"base_url: {scalar(settings.base_url)}", *source,
            f"repository: {scalar(settings.repository)}"]


def _locations(locations: tuple[str, ...] | None) -> list[str]:
    if locations is None:
        return ["# Where the skills are: with no `skills:` list, skillreg looks where agents look (skills/,",
                "# .claude/skills/, plugins/*/skills/, */skills/, skill folders at the top, then every folder).",
                "# To fix the list, name the folders of skills or glob patterns:",
                "# skills:",
                "#   - skills"]
    return ["# Where the skills are: folders holding skill folders, or glob patterns, relative to this file.",
            "skills:", *(f"  - {scalar(location)}" for location in locations)]
