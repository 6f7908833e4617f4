"""prompts.chat's multi-file text format, byte-exact in both directions.

SKILL.md comes first, then each other file as ``\\n\\x1fFILE:<path>\\x1e\\n<content>``. prompts.chat trims
contents; we do not, so ``parse(serialize(files)) == files`` for every set of text files.
"""

from __future__ import annotations

import re

from .errors import UsageError
from .loader import path_problems
from .model import SkillFile

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
    """Files in the order given; SKILL.md first. Paths are checked as the validator checks them."""
    pieces = _SPLIT.split(text)
    files = [SkillFile("SKILL.md", pieces[0].encode("utf-8"))]
    seen = {"SKILL.md"}
    for i in range(1, len(pieces), 2):
        path, content = pieces[i], pieces[i + 1]
        problems = path_problems(path)
        if problems or not path:
            raise CodecError(f"file {i // 2 + 1}: {problems[0][1] if problems else 'empty path'}")
        if path in seen:
            raise CodecError(f"file {i // 2 + 1}: {path!r} appears twice")
        if FILE_MARK[0] in content or END_MARK in content:
            raise CodecError(f"{path}: a separator character appears inside the content")
        seen.add(path)
        files.append(SkillFile(path, content.encode("utf-8"), executable=path.startswith("scripts/")))
    return files
