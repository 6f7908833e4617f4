"""``skillreg new``: a skill folder that passes validation as soon as its description is real."""

from __future__ import annotations

import json
from pathlib import Path

from .config import RegistryConfig
from .errors import UsageError
from .validate import RESERVED_NAMES, check_name

PLACEHOLDER_DESCRIPTION = "TODO: say what this skill does and when an agent should use it."

_TEMPLATE = """\
---
name: {name}
description: {description}
license: MIT
metadata:
{category_line}
  tags: ""
  version: "0.1.0"
---
# {title}

## When to use

Describe the situations in which an agent should load this skill.

## Instructions

1. Write each step in the imperative: what to do, in what order.
2. Refer to bundled files with paths relative to this folder.

## Example

Show one short input and the expected result.

## Handling problems

Say what to do when a step fails or the input is not what was expected.

## Bundled files

- `scripts/`: programs the agent may run (standard library only, each with `--help`).
- `references/`: longer documents the agent reads only when needed; link them from here.
"""


def _yaml_scalar(text: str) -> str:
    """A YAML double-quoted scalar: JSON's escapes are valid YAML, so newlines and tabs survive as written."""
    return json.dumps(text, ensure_ascii=False)


def new_skill(config: RegistryConfig, name: str, description: str | None = None,
              category: str | None = None, skills_path: Path | None = None) -> Path:
    """Create ``skills/<name>/`` and return it; refuse an invalid name or an existing folder."""
    problems: list[tuple[str, str]] = [("SK102", "`name` must be a non-empty string")] if not name else \
        list(check_name(name, name, lambda code, msg, hint=None: (code, msg)))
    if name in RESERVED_NAMES:
        problems.append(("SK603", f"skill name `{name}` is reserved for the registry's own pages"))
    if problems:
        code, message = problems[0]
        raise UsageError(f"{code}: {message}")
    if category is not None and config.categories and category not in config.category_slugs:
        raise UsageError(f"SK301: unknown category `{category}`; categories: {', '.join(config.category_slugs)}")
    folder = (skills_path or config.skills_path) / name
    if folder.exists() or folder.is_symlink():
        raise UsageError(f"{folder}: already exists; pick another name or edit that skill")
    if category:
        category_line = f"  category: {_yaml_scalar(category)}"
    elif config.categories:
        category_line = f"  # category: one of {', '.join(config.category_slugs)}"
    else:
        category_line = "  # category: a category slug from registry.yaml"
    text = _TEMPLATE.format(
        name=name,
        description=_yaml_scalar(description or PLACEHOLDER_DESCRIPTION),
        category_line=category_line,
        title=name.replace("-", " ").capitalize(),
    )
    folder.mkdir(parents=True)
    for sub in ("scripts", "references"):
        (folder / sub).mkdir()
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder
