"""prompts.chat's multi-file text format, byte-exact in both directions.

SKILL.md comes first, then each other file as ``\\n\\x1fFILE:<path>\\x1e\\n<content>``. prompts.chat trims
contents; we do not, so ``parse(serialize(files)) == files`` for every set of text files.
"""

from __future__ import annotations

import re

from ..core.errors import UsageError
from ..core.loader import path_problems
from ..core.model import SkillFile

FILE_MARK = "\x1fFILE:"
END_MARK = "\x1e"
_SPLIT = re.compile("\n\x1fFILE:([^\x1e\n]*)\x1e\n")


class CodecError(UsageError):
    """The files cannot be written in, or read from, the multi-file text format."""


def serialize(files: list[SkillFile] | tuple[SkillFile, ...]) -> str:
    by_path = {f.path: f for f in files}
    main = by_path.get("SKILL.md") or by_path.get("skill.md")
    if main is None:
        raise CodecError("there is no SKILL.md to put first")
    parts = [_text_of(main)]
    for f in sorted(files, key=lambda f: f.path.encode("utf-8")):
        if f is main:
            continue
        if "\n" in f.path or END_MARK in f.path or FILE_MARK[0] in f.path:
            raise CodecError(f"{f.path!r}: a path with a newline or separator character cannot be encoded")
        parts.append(f"\n{FILE_MARK}{f.path}{END_MARK}\n{_text_of(f)}")
    return "".join(parts)


def _text_of(f: SkillFile) -> str:
    if not f.is_text:
        raise CodecError(f"{f.path}: binary files cannot be encoded in the prompts.chat text format; "
                         "use --format zip or json")
    text = f.data.decode("utf-8")
    if FILE_MARK[0] in text or END_MARK in text:
        raise CodecError(f"{f.path}: holds a U+001F or U+001E separator character, which the format cannot carry")
    return text


def parse(text: str) -> list[SkillFile]:
    """Files in the order given; SKILL.md first. Paths are checked as the validator checks them, ``./`` and
    ``//`` are collapsed, and paths that would land on one another (twice the same file, a file where
    another path needs a folder) are refused, naming both."""
    pieces = _SPLIT.split(text)
    files = [SkillFile("SKILL.md", pieces[0].encode("utf-8"))]
    where = {"SKILL.md": "the text's first part (SKILL.md)"}  # path -> which file holds it, for messages
    folders: dict[str, str] = {}  # folder path -> the first file below it
    for i in range(1, len(pieces), 2):
        number = f"file {i // 2 + 1}"
        raw, content = pieces[i], pieces[i + 1]
        path = _normal_path(raw, number)
        shown = f"{raw!r}" if raw == path else f"{raw!r} (that is {path!r})"
        if path in where:
            raise CodecError(f"{number}: {shown} is already {where[path]}")
        if path in folders:
            raise CodecError(f"{number}: {shown} is a file, but {folders[path]} puts files in a folder of that name")
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in where:
                raise CodecError(f"{number}: {shown} needs a folder {folder!r}, but {where[folder]} is a file "
                                 "of that name")
            folders.setdefault(folder, f"{number} ({path!r})")
        if FILE_MARK[0] in content or END_MARK in content:
            raise CodecError(f"{path}: a separator character appears inside the content")
        where[path] = f"{number} ({raw!r})"
        files.append(SkillFile(path, content.encode("utf-8"), executable=path.startswith("scripts/")))
    return files


def _normal_path(raw: str, number: str) -> str:
    """``raw`` with ``.`` components and repeated slashes removed; refused when it is unsafe or names a folder."""
    problems = path_problems(raw)
    if problems:
        raise CodecError(f"{number}: {problems[0][1]}")
    if raw.endswith("/"):
        raise CodecError(f"{number}: {raw!r} ends with `/`, so it names a folder, not a file")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if not parts:
        raise CodecError(f"{number}: empty path" if not raw else f"{number}: {raw!r} names no file")
    return "/".join(parts)
