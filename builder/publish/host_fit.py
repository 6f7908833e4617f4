"""Defaults that fit the host: the lean ``publish:`` settings, chosen by the build when the output it projects for
the registry's settings would pass the host's limit (``publish.host_limit``, 1 GB by default, what GitHub documents
for a published Pages site).

The projection is cheap and depends only on the skills' files (never on the clock or the machine): each skill's
file bytes, times the copies of them the settings publish, plus what every skill publishes beside them. Keys that
registry.yaml writes always win. Once lean, a registry stays lean until its projection falls below half the limit,
so that URLs do not appear and vanish as one skill comes and goes; the choice is kept in the output's state and in
the bundle cache (which CI restores), so a build from a fresh checkout makes the same choice as a rebuild.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.bundle import dumps
from ..core.config import LEAN_PUBLISH, PUBLISH_COPIES, Publish, RegistryConfig
from ..core.fs import write_atomic
from .folder_changes import restat_sized, survey_sized

CHOICE_FILE = "publish-choice.json"  # in the output's state folder and in the bundle cache
SIZES_FILE = "publish-sizes.json"  # in the output's state folder: each skill's file bytes under its git signature
# The constants below are measured on the first 1,000 skills by name of the real corpus the performance page names (972
# published, agents profile, with the website; `python -m bench.host_fit CORPUS --skills 1000 --build WORK`,
# 2026-12-03), per skill of the registry (invalid ones included: the projection is made before validation), so
# that both projections come within 0.5% of what the two settings really published beside the site's fixed files.
# What a skill publishes besides copies of its files, with the default settings: its page (inline body), listing
# rows, detail, versions, head and discovery documents, its search rows. Not counted: what any registry publishes
# once (the theme's and our assets, 404.html, the schemas: 2.75 MB), which only a small registry would notice.
PER_SKILL = 27_300
# The copies of a skill's file bytes each setting publishes: the one raw copy, the JSON bundle (escaped or base64,
# 1.05), the zip (0.37, always published). With well_known_skills the raw copy of every file lives under
# .well-known/skills/ and serves our readers too (none under files/); without it, raw_files chooses what files/
# holds.
RAW_COPY, JSON_COPY, ZIP_COPY = 1.0, 1.05, 0.38
LINKED_SHARE = 0.04  # raw_files: linked (without well_known_skills) publishes 3.9% of the file bytes
# page_body: fetched takes the body and the sections below it out of the page (with the rest of the lean settings,
# the detail document loses its JSON bundle and the v0.1 index its rows: counted here too, 13.6 KB in all) and
# publishes them gzip-compressed beside it (4.5 KB).
FETCHED_PAGE_SAVES = 13_600
FETCHED_BODY = 4_500
BACK_BELOW = 0.5  # a registry made lean goes back to the defaults only when its projection is under half the limit


@dataclass(frozen=True)
class PublishChoice:
    """The build's choice of lean settings: why, and what it projected. With ``lean`` false, registry.yaml writes
    every setting and they pass the limit: nothing is chosen, the build only warns."""

    lean: bool  # the lean settings were chosen for the keys registry.yaml does not write
    projected: int  # bytes the registry's own settings would publish
    limit: int
    kept: bool = False  # lean because the last build was, though the projection is under the limit
    chosen_projected: int = 0  # bytes the settings chosen (lean where registry.yaml is silent) would publish
    heavier: tuple[str, ...] = ()  # keys registry.yaml writes with a value that publishes more than the lean one

    def line(self) -> str | None:
        """The one line the build prints of its choice (None when it chose nothing)."""
        if not self.lean:
            return None
        settings = ", ".join(f"{key}: {json.dumps(value)}" for key, value in LEAN_PUBLISH.items())
        if self.kept:
            why = (f"kept from the last build until the projection falls under {_size(self.limit * BACK_BELOW)}, "
                   f"half the host's limit")
        else:
            why = f"the output would be about {_size(self.projected)}, past the host's limit"
        return (f"Published with lean settings ({settings}): {why} of {_size(self.limit)} (publish.host_limit); "
                f"write them under `publish:` in registry.yaml to keep them")

    def warning(self) -> str | None:
        """The one line that says even the chosen settings would pass the limit, and what would make it fit; None
        when they fit."""
        if self.chosen_projected <= self.limit:
            return None
        written = f"drop {', '.join(self.heavier)} from `publish:` in registry.yaml, " if self.heavier else ""
        which = "even the lean settings" if self.lean else "the settings registry.yaml writes"
        return (f"{which} would publish about {_size(self.chosen_projected)}, past the host's limit "
                f"of {_size(self.limit)} (publish.host_limit), and the host may refuse the site: {written}leave "
                f"out skills (invalid ones are left out already with --keep-going), keep fewer versions "
                f"(history.keep), or publish to object storage behind a CDN")

    def document(self) -> dict[str, Any]:
        """The ``publish`` field of api/v1/state.json."""
        return {"chosen": "lean" if self.lean else "written", "reason": "kept" if self.kept else "over_limit",
                "projected_bytes": self.projected,
                "chosen_projected_bytes": self.chosen_projected, "host_limit": self.limit,
                "fits": self.chosen_projected <= self.limit}


def over_limit(choice: PublishChoice | None) -> tuple[str, ...]:
    """The build's warning when even the settings it chose would pass the host's limit."""
    warning = choice.warning() if choice is not None else None
    return (warning,) if warning is not None else ()


def _size(size: float) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e8 else f"{size / 1e6:.1f} MB" if size >= 1e5 else f"{size:,.0f} bytes"


def project(publish: Publish, sizes: Sequence[int]) -> int:
    """The bytes the output would hold with ``publish``: ``sizes`` is each skill's file bytes."""
    total = sum(sizes)
    every_file = publish.well_known_skills or publish.raw_files == "all"
    copies = ZIP_COPY + (RAW_COPY if every_file else RAW_COPY * LINKED_SHARE)
    copies += JSON_COPY if publish.json_bundles else 0
    per_skill = PER_SKILL - (FETCHED_PAGE_SAVES - FETCHED_BODY if publish.page_body == "fetched" else 0)
    return int(len(sizes) * per_skill + total * copies)


def folder_bytes(folder: Path, ignored: Sequence[str] = ()) -> int:
    """The bytes of the files in a skill folder, leaving out what git ignores (no part of the commit)."""
    skip = {os.path.join(folder, rel) for rel in ignored}
    total = 0
    stack = [os.fspath(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.path in skip:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return total


def _sized(old: Any, signature: str | None) -> bool:
    """Whether ``old`` records the size of a folder git signs with ``signature``."""
    return signature is not None and isinstance(old, list) and len(old) == 2 and old[0] == signature and \
        isinstance(old[1], int)


def skill_sizes(folders: Sequence[tuple[str, Path]], ignored_of: Callable[[Sequence[str]], Mapping[str, Sequence[str]]],
                signatures: Mapping[str, str], state: Path,
                restated: dict[str, tuple[str, str]] | None = None) -> list[int]:
    """Each skill's file bytes: read again only for a folder whose git signature (``worktree``) is not the one
    recorded with its size in ``state``, so that a rebuild in a git checkout reads only the folders that changed.
    A folder without one (outside git) is stated once, path by path as its record lists them (``restat_sized``):
    ``restated`` gains its entries and their signature, which the build's change survey then reads instead of
    stating them again. ``ignored_of(paths)`` gives the ignored paths of the skills at ``paths``, those read."""
    try:
        known = json.loads((state / SIZES_FILE).read_bytes())
    except (OSError, ValueError):
        known = {}
    known = known if isinstance(known, dict) else {}
    unsized = [path for path, _ in folders if not _sized(known.get(path), signatures.get(path))]
    ignored, read = ignored_of(unsized), set(unsized)
    recorded: dict[str, list[Any]] = {}
    sizes: list[int] = []
    for path, folder in folders:
        signature = signatures.get(path)
        old = known.get(path)
        if signature is None and not ignored.get(path):
            signature, entries, size = _surveyed(folder, old)
            if entries != "\0":
                recorded[path] = [signature, size, entries]
                if restated is not None:
                    restated[path] = (entries, signature)
        elif path not in read:
            size = int(known[path][1])
            recorded[path] = [signature, size]
        else:
            size = folder_bytes(folder, ignored.get(path, ()))
            if signature is not None:
                recorded[path] = [signature, size]
        sizes.append(size)
    if recorded != known:
        try:
            state.mkdir(parents=True, exist_ok=True)
            write_atomic(state / SIZES_FILE, dumps(recorded), durable=False)
        except OSError:
            pass  # only saves work
    return sizes


def _surveyed(folder: Path, old: Any) -> tuple[str, str, int]:
    """The signature, entries and file bytes of a folder git does not sign: stated again path by path while it
    still lists what its record says, else surveyed."""
    if isinstance(old, list) and len(old) == 3 and isinstance(old[2], str):
        signature, size = restat_sized(os.fspath(folder), old[2])
        if signature and signature == old[0]:
            return signature, old[2], size
    return survey_sized(folder)


def choose(config: RegistryConfig, sizes: Callable[[], Sequence[int]],
           was_lean: bool) -> tuple[RegistryConfig, PublishChoice | None]:
    """``config`` with the lean settings for the keys registry.yaml does not write when the projection from each
    skill's file bytes (``sizes``) passes the limit (or stays above half of it after a lean build), and the choice;
    None when the defaults stay. A registry.yaml that writes every setting keeps them: past the limit the choice,
    not lean, only carries the warning."""
    publish = config.publish
    each = sizes()
    projected = project(publish, each)
    limit = publish.host_limit
    if all(key in publish.written for key in PUBLISH_COPIES):  # nothing to choose; past the limit, a warning
        if projected <= limit:
            return config, None
        return config, PublishChoice(False, projected, limit, chosen_projected=projected, heavier=_heavier(publish))
    if projected <= limit and not (was_lean and projected >= limit * BACK_BELOW):
        return config, None
    lean = {key: value for key, value in LEAN_PUBLISH.items() if key not in publish.written}
    chosen_publish = replace(publish, **lean)
    chosen = PublishChoice(True, projected, limit, kept=projected <= limit,
                           chosen_projected=project(chosen_publish, each), heavier=_heavier(publish))
    return replace(config, publish=chosen_publish), chosen


def _heavier(publish: Publish) -> tuple[str, ...]:
    """The keys registry.yaml writes with a value that publishes more than the lean one, as the warning names them."""
    return tuple(f"{key}: {json.dumps(getattr(publish, key))}" for key in PUBLISH_COPIES
                 if key in publish.written and getattr(publish, key) != LEAN_PUBLISH[key])


def was_lean(places: Sequence[Path]) -> bool:
    """Whether the last build recorded a lean choice, read from the first of ``places`` that holds a record."""
    for folder in places:
        try:
            data = json.loads((folder / CHOICE_FILE).read_bytes())
        except (OSError, ValueError):
            continue
        return isinstance(data, dict) and data.get("chosen") == "lean"
    return False


def record_choice(places: Sequence[Path], choice: PublishChoice | None) -> None:
    """Keep a lean choice where the next build looks, or forget one (best effort: without a record the projection
    alone decides)."""
    for folder in places:
        try:
            if choice is None:
                (folder / CHOICE_FILE).unlink(missing_ok=True)
            else:
                folder.mkdir(parents=True, exist_ok=True)
                write_atomic(folder / CHOICE_FILE, dumps(choice.document()))
        except OSError:
            pass
