"""``skillreg new``: a skill folder that passes validation as soon as its description is real.

Without ``--description`` the description is left empty, with what to write in a comment beside it, so the
scaffold as written fails validation under every profile and policy (SK108); template text such as ``TODO``
would pass wherever the registry leaves its `placeholders` policy off. A ``--description`` that is itself
template text is refused for the same reason: the option exists to write the real one."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.config import Limits, RegistryConfig
from ..core.errors import UsageError
from ..core.fs import exclusive_lock, state_dir, write_new_folder
from ..core.loader import MemoryTree, read_tree, refuse_linked_folders
from ..validate.checks import PLACEHOLDER_TEXT, category_hint
from ..validate.names import name_problems

DESCRIPTION_TO_WRITE = '""  # say what this skill does and when an agent should use it'

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
              category: str | None = None, skills_path: Path | None = None,
              on_wait: Callable[[], None] | None = None) -> Path:
    """Create ``skills/<name>/`` and return it; refuse an invalid name or an existing folder."""
    problems = name_problems(name)
    if problems:
        raise UsageError(problems[0])
    placeholder = PLACEHOLDER_TEXT.search(description or "")
    if placeholder:
        raise UsageError(f"--description: {placeholder.group(0).strip()!r} is template text (SK202); write what the "
                         "skill does and when an agent should use it, or leave --description out and write it in "
                         "SKILL.md")
    if category is not None and config.categories and category not in config.category_slugs:
        raise UsageError(f"SK301: unknown category `{category}`. {category_hint(category, config.category_slugs)}")
    folder = (skills_path or config.skills_path) / name
    if folder.exists() or folder.is_symlink():  # checked again under the lock; this is the quick answer
        raise UsageError(f"{folder}: already exists; pick another name or edit that skill")
    if category:
        category_line = f"  category: {_yaml_scalar(category)}"
    elif config.categories:
        category_line = f"  # category: one of {', '.join(config.category_slugs)}"
    else:
        category_line = "  # category: a category slug from registry.yaml"
    text = _TEMPLATE.format(
        name=name,
        description=_yaml_scalar(description) if description else DESCRIPTION_TO_WRITE,
        category_line=category_line,
        title=name.replace("-", " ").capitalize(),
    )
    return add_skill_folder(skills_path or config.skills_path, name, {"SKILL.md": (text.encode("utf-8"), False)},
                            empty_folders=("scripts", "references"),
                            exists="pick another name or edit that skill", on_wait=on_wait)


def add_skill_folder(skills: Path, name: str, files: dict[str, tuple[bytes, bool]], *,
                     empty_folders: tuple[str, ...] = (), exists: str = "refusing to overwrite it",
                     on_wait: Callable[[], None] | None = None) -> Path:
    """Create ``skills/<name>/`` holding ``files`` (path -> (bytes, executable)) in one rename, or refuse.

    ``skillreg new`` and ``skillreg import`` hold the skills folder's lock while they check and write, so two
    of them creating one name at once end with one folder, whole, and an "already exists" for the other.
    """
    folder = skills / name
    refuse_linked_folders(skills)  # a linked skills folder would put the new skill outside the repository
    with skills_lock(skills, on_wait=on_wait):
        if folder.exists() or folder.is_symlink():
            raise UsageError(f"{folder}: already exists; {exists}")
        try:
            write_new_folder(folder, files)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):  # made by something that takes no lock
                raise UsageError(f"{folder}: already exists; {exists}") from None
            raise
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(folder, 0o777 & ~umask)  # the temporary folder it was made as is private (mkdtemp's 0700)
        for sub in empty_folders:
            (folder / sub).mkdir(exist_ok=True)
    return folder


# The loader's findings that mean a skill passes the registry's hosting limits (``limits:`` in registry.yaml).
LIMIT_RULES = frozenset({"SK507", "SK508", "SK518"})


def over_limits(files: dict[str, tuple[bytes, bool]], limits: Limits) -> list[str]:
    """What of the registry's hosting limits ``files`` pass, judged by the loader's own walk as the validator
    will judge the written folder (none: within them)."""
    found: list[str] = []

    def report(code: str, rel: str, message: str, line: int = 0, **details: object) -> None:
        if code in LIMIT_RULES:
            found.append(message)

    read_tree(MemoryTree(files), "", limits, report)
    return found


@contextmanager
def skills_lock(skills: Path, *, on_wait: Callable[[], None] | None = None,
                patience: float = 1.0) -> Iterator[None]:
    """Hold the exclusive lock of a registry's skills folder (by its real path) for the with-block.

    The lock file lives in the user state folder, where no checkout can put a file or a link, and is opened
    without following links all the same. The kernel drops it when its holder exits, killed or not.
    """
    tag = hashlib.sha256(os.fsencode(skills.resolve())).hexdigest()[:16]
    path = state_dir() / "skills" / tag / "lock"
    with exclusive_lock(path, on_wait=None if on_wait is None else lambda _holder: on_wait(), patience=patience,
                        mode=0o600, folder_mode=0o700):
        yield
