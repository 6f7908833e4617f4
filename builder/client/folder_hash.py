"""``computedHash``: the folder hash vercel's ``skills`` CLI records for every skill in ``skills-lock.json``.

SHA-256 over each regular file's path (relative, ``/``-separated, UTF-8) and then its bytes, files in the order
Node's ``String.prototype.localeCompare`` gives (ICU's root collation at tertiary strength, not byte order:
``scripts/x`` sorts before ``SKILL.md``), folders named ``.git`` or ``node_modules`` skipped, links not followed.

The order is computed here without ICU, exactly, for the paths most skills have: printable ASCII; Latin letters
that decompose (NFD) into an ASCII letter and combining diacritics (``é``, ``Ñ``, ``ü``, ``å``); ``ø`` and ``đ``.
Any other character (``ß``, ``ł``, Greek, CJK, emoji) has no exact order here, and neither have two paths that
collate equal (ICU then keeps the order it read them in, which is not fixed): the hash is then ``None``, said so,
never guessed. The weights below are facts of the CLDR root collation, checked against the pinned CLI's Node.
"""

from __future__ import annotations

import hashlib
import os
import stat
import unicodedata
from collections.abc import Mapping
from pathlib import Path

# Printable ASCII by primary weight, lowest first; a letter's two cases share one weight.
_PRIMARY_ORDER = [" ", "_", "-", ",", ";", ":", "!", "?", ".", "'", '"', "(", ")", "[", "]", "{", "}", "@", "*",
                  "/", "\\", "&", "#", "%", "`", "^", "+", "<", "=", ">", "|", "~", "$",
                  *"0123456789", *(c + c.upper() for c in "abcdefghijklmnopqrstuvwxyz")]
_PRIMARY = {c: rank for rank, group in enumerate(_PRIMARY_ORDER) for c in group}
# Combining marks U+0300..U+0362 by secondary weight, lowest first (marks in one group weigh the same). The
# unlisted ones of that block (U+0340, U+0341, U+0343, U+0344) decompose into listed ones.
_SECONDARY_ORDER = [
    "34f", "332", "313", "314", "301", "300", "306", "302", "30c", "30a", "342", "308", "30b", "303", "307", "338",
    "327", "328", "304",
    "30d 30e 312 315 31a 33d 33e 33f 346 34a 34b 34c 350 351 352 357 35b 35d 35e",
    "316 317 318 319 31c 31d 31e 31f 320 329 32a 32b 32c 32f 333 33a 33b 33c 347 348 349 34d 34e 353 354 355 356 "
    "359 35a 35c 35f 362",
    "336 337", "335", "305", "309", "30f", "310", "311", "31b", "321", "322", "323", "324", "325", "326", "32d",
    "32e", "330", "331", "334", "339", "345", "358", "360", "361",
]
_COMMON = 0  # the secondary and tertiary weight of a plain letter, below every mark's
_SECONDARY = {chr(int(h, 16)): rank + 1 for rank, group in enumerate(_SECONDARY_ORDER) for h in group.split()}
# Letters with no decomposition that collate as a base letter and a mark.
_AS_MARKED = {"ø": "o\u0338", "Ø": "O\u0338", "đ": "d\u0335", "Đ": "D\u0335"}
SKIPPED_FOLDERS = frozenset({".git", "node_modules"})

Key = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def collation_key(path: str) -> Key | None:
    """(primary, secondary, tertiary) weights of ``path`` as ICU's root collation compares them, level by level;
    None when ``path`` has a character outside the repertoire this module orders exactly."""
    primaries: list[int] = []
    secondaries: list[int] = []
    tertiaries: list[int] = []
    for char in unicodedata.normalize("NFD", "".join(_AS_MARKED.get(c, c) for c in path)):
        if char in _PRIMARY:
            primaries.append(_PRIMARY[char])
            secondaries.append(_COMMON)
            tertiaries.append(1 if char.isupper() else _COMMON)
        elif char in _SECONDARY:
            secondaries.append(_SECONDARY[char])
            tertiaries.append(_COMMON)
        else:
            return None
    return tuple(primaries), tuple(secondaries), tuple(tertiaries)


def collated(paths: list[str]) -> list[str] | None:
    """``paths`` in the order ``localeCompare`` sorts them, or None when that order is not exactly known here."""
    keys = {}
    for path in paths:
        key = collation_key(path)
        if key is None:
            return None
        keys[path] = key
    ordered = sorted(paths, key=keys.__getitem__)
    if any(keys[a] == keys[b] for a, b in zip(ordered, ordered[1:])):
        return None  # ICU calls them equal and keeps them in the order it read them
    return ordered


def computed_hash(files: Mapping[str, bytes]) -> str | None:
    """vercel's ``computedHash`` of a skill whose files (relative path -> bytes) are ``files``; None when the
    order of their paths is not exactly known (see the module's docstring)."""
    ordered = collated([p for p in files if not SKIPPED_FOLDERS.intersection(p.split("/")[:-1])])
    if ordered is None:
        return None
    digest = hashlib.sha256()
    for path in ordered:
        digest.update(path.encode("utf-8"))
        digest.update(files[path])
    return digest.hexdigest()


def folder_files(folder: Path) -> dict[str, bytes]:
    """The files vercel's CLI hashes in ``folder``: regular files, links not followed, ``.git`` and
    ``node_modules`` skipped at every depth."""
    found: dict[str, bytes] = {}
    pending = [folder]
    while pending:
        current = pending.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode) and entry.name not in SKIPPED_FOLDERS:
                    pending.append(Path(entry.path))
                elif stat.S_ISREG(mode):
                    found[Path(entry.path).relative_to(folder).as_posix()] = Path(entry.path).read_bytes()
    return found


def folder_hash(folder: Path) -> str | None:
    """``computedHash`` of the skill folder ``folder`` as it is on disk (None as ``computed_hash`` says)."""
    return computed_hash(folder_files(folder))
