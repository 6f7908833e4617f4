"""A rebuild with nothing to do: when git says that nothing a build reads has changed since the last build, the
output is current and ``skillreg build`` says so without importing the pipeline or reading its record.

What a build reads is named by its key (``BuildKey``): the commit at HEAD (every committed byte, and the source
commit the output records), each line ``git status`` prints below the registry's folder (the output's own folder
apart) with the changed path's ``stat`` (a file edited twice keeps its status line), the shallow boundary, the
registry's settings and the program that builds (the builder's version and files, the installed
distributions). Files git ignores are never published, so ``git status`` is run without listing them: what it
prints is the whole difference between the commit and what a build publishes.

Each build forgets the record (``current.json`` in the output's state) before it changes anything, and writes it
again, with the key read before it started, only when it succeeds and git signed every skill folder it read
(``worktree``; a folder git cannot vouch for is surveyed file by file on every build): an interrupted or failed
build leaves none. The record also keeps the output's own ``stat`` (its index.json and the build record), so an
output changed by hand is built again.

``git status`` runs with git's untracked cache (``core.untrackedCache``, for this command only): it lets git skip
listing folders whose modification time has not moved. Like a plain ``git status``, it refreshes the index file
(``.git/index``) when it can take git's lock, which is where the cache is kept; it never changes git's config.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..core.config import RegistryConfig
from ..core.fs import write_atomic
from ..core.git import git_output, path_below
from ..core.git_ignored import Change, porcelain_v2
from ..core.urls import INDEX_PATH
from .folder_changes import stat_line, survey
from .transaction import OutputPlace, output_place

if TYPE_CHECKING:
    from ..validate.report import ValidationReport

CURRENT_STATE = "current.json"
CURRENT_VERSION = 1
# Only for the status run by ``build_key``: git keeps the untracked cache for ``-uall`` when this is its setting.
STATUS_CONFIG = ("-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=all")


@dataclass(frozen=True)
class BuildKey:
    """What a build of one output reads, as one digest; and whether the registry's files differ from HEAD."""

    digest: str
    differs: bool  # edited, added or deleted files below the registry's folder that git does not ignore
    changes: tuple[Change, ...] = ()  # every line of the repository's ``git status`` (``porcelain_v2``)


@dataclass(frozen=True)
class Current:
    """What the last build said, when its output is current."""

    published: int
    commit: str | None
    said: tuple[str, ...]  # what it showed before its closing line: errors of skills left out, outcome lines
    warnings: tuple[str, ...]
    publish_choice: str | None


def build_key(config: RegistryConfig, out: Path, *, site: bool, keep_going: bool) -> BuildKey | None:
    """The key of a build of ``config``'s registry into ``out``; None outside git or before the first commit."""
    root = config.root.resolve()
    where = git_output(["rev-parse", "--show-toplevel", "--show-prefix", "--git-path", "shallow", "HEAD"], root)
    if where is None:
        return None
    lines = where.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 4:
        return None
    top, prefix, shallow, head = Path(lines[0]), lines[1], root / lines[2], lines[3]
    status = git_output([*STATUS_CONFIG, "status", "--porcelain=v2", "-z", "--untracked-files=all",
                         "--no-renames"], top)
    if status is None:
        return None
    leave_out = path_below(out.resolve(), top.resolve())
    settings = json.dumps({"config": asdict(config), "site": site, "keep_going": keep_going}, sort_keys=True,
                          default=str)
    parts = [__version__, _program_stamp(), settings, head, _stat(shallow)]
    differs = False
    changes = porcelain_v2(status)
    for _, path, line in changes:
        if not path.startswith(prefix) or (leave_out is not None and (path + "/").startswith(leave_out + "/")):
            continue
        differs = True
        parts.append(line)
        parts.append(survey(top / path)[0] if path.endswith("/") else _stat(top / path))
    digest = hashlib.sha256("\0\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
    return BuildKey(digest, differs, tuple((code, path) for code, path, _ in changes))


def _program_stamp() -> str:
    """The program that builds, beyond its version number: the size and time of each of the builder's own files
    (an edited or reinstalled builder) and the installed distributions on ``sys.path`` (the names of their
    ``.dist-info`` folders hold their versions: a new theme or renderer renders pages anew). About 2 ms."""
    parts: list[str] = []
    for folder, subfolders, files in os.walk(Path(__file__).resolve().parent.parent):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        parts += (_stat(Path(folder, name)) + " " + name for name in sorted(files))
    for entry in sys.path:
        try:
            parts += sorted(name for name in os.listdir(entry or ".") if name.endswith(".dist-info"))
        except OSError:
            continue
    return "\n".join(parts)


def _stat(path: Path) -> str:
    try:
        return stat_line("", os.stat(path, follow_symlinks=False))
    except OSError:
        return "gone"


def _output_stat(place: OutputPlace) -> str:
    return "\n".join(_stat(path) for path in (place.base / INDEX_PATH, place.manifest))


def read_current(out: Path, key: BuildKey) -> Current | None:
    """What the last build into ``out`` said, when it was made with ``key`` and its output is as it left it."""
    place = output_place(out)
    try:
        record = json.loads((place.state / CURRENT_STATE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != CURRENT_VERSION or record.get("key") != key.digest \
            or record.get("output") != _output_stat(place) or (place.state / "journal.json").exists():
        return None
    try:
        return Current(int(record["published"]), record["commit"], tuple(record["said"]), tuple(record["warnings"]),
                       record["publish_choice"])
    except (KeyError, TypeError, ValueError):
        return None


def forget_current(place: OutputPlace) -> None:
    """Before a build changes anything: the output is no longer known to be current."""
    (place.state / CURRENT_STATE).unlink(missing_ok=True)


def record_current(place: OutputPlace, key: BuildKey, current: Current) -> None:
    """After a build succeeded: what it said, for as long as nothing it read changes."""
    record = {"version": CURRENT_VERSION, "key": key.digest, "output": _output_stat(place),
              "published": current.published, "commit": current.commit, "said": list(current.said),
              "warnings": list(current.warnings), "publish_choice": current.publish_choice}
    write_atomic(place.state / CURRENT_STATE, json.dumps(record, sort_keys=True).encode())


def shown(report: ValidationReport, published_paths: Sequence[str], skipped: Sequence[str]) -> tuple[str, ...]:
    """What ``build`` shows of a build's findings without ``--verbose``: the errors of the skills left out, then
    the outcome lines (each piece ends its line)."""
    from ..validate.report import ErrorsOnly, format_text, outcome_lines

    text = [format_text(ErrorsOnly(report))] if skipped else []
    return (*text, *(line + "\n" for line in outcome_lines(report, published_paths, skipped)))
