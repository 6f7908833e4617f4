"""Real public skills as a benchmark corpus: ``python -m bench --corpus DIR`` measures on them instead of
generated ones.

``skill_folders`` walks an extracted repository (or a folder of them) for folders holding a SKILL.md.
``prepared_corpus`` copies those folders, flat, into the bench cache beside this repository's registry.yaml, as
the generated corpora are laid out: each folder is named for its skill (the frontmatter's ``name``, made a valid
name, else the folder's own name) and the frontmatter's ``name`` is set to that folder name, so a skill is not
rejected only for having been copied; a name met again is renamed ``<name>-2``, ``<name>-3``... in walk order.
The source is only read; its files stay outside this repository.

``python -m bench.real_corpus SRC... --out DIR`` assembles such a folder once, to pass to ``--corpus``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .corpus import REPO

SKILL_MD = "SKILL.md"
MAX_NAME = 64  # the Agent Skills spec's longest name
_SKIPPED_DIRS = {".git", "node_modules", "__pycache__", ".venv"}
_FRONTMATTER = re.compile(r"\A(\ufeff?---[ \t]*\r?\n)(.*?)(^---[ \t]*$)", re.DOTALL | re.MULTILINE)
_NAME_LINE = re.compile(r"^name[ \t]*:.*$", re.MULTILINE)
_NOT_NAME = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Assembled:
    """A prepared corpus: its ``skills/`` folder, how many skills, and how many were renamed as duplicates."""

    skills: Path
    count: int
    renamed: int


def skill_folders(root: Path) -> Iterator[Path]:
    """Every folder under ``root`` (itself included) holding a SKILL.md, in sorted walk order; git's folder and
    dependency trees are not entered (hidden ones such as ``.claude/skills`` are); a SKILL.md that is a link
    leading nowhere (a mirror's link into its own cache) is no skill."""
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        if SKILL_MD in files and os.path.isfile(os.path.join(here, SKILL_MD)):
            yield Path(here)


def valid_name(text: str) -> str:
    """``text`` as a spec-valid skill name: lowercase letters, digits and single hyphens, at most 64 long."""
    name = _NOT_NAME.sub("-", text.lower()).strip("-")[:MAX_NAME].strip("-")
    return name or "skill"


def declared_name(skill_md: str) -> str | None:
    """The frontmatter's ``name`` value as written (quotes dropped), or None."""
    front = _FRONTMATTER.match(skill_md)
    line = _NAME_LINE.search(front.group(2)) if front else None
    if line is None:
        return None
    value = line.group(0).split(":", 1)[1].strip().strip("'\"")
    return value or None


def with_name(skill_md: str, name: str) -> str:
    """``skill_md`` with its frontmatter's ``name`` set to ``name`` (added when missing); a file without
    frontmatter is left as it is, to be rejected as it would be."""
    front = _FRONTMATTER.match(skill_md)
    if front is None:
        return skill_md
    block = front.group(2)
    block = _NAME_LINE.sub(f"name: {name}", block, count=1) if _NAME_LINE.search(block) else f"name: {name}\n{block}"
    return skill_md[:front.start(2)] + block + skill_md[front.end(2):]


def _copy_skill(source: Path, dest: Path, name: str) -> None:
    """Copy one skill folder's files (not the other skills nested in it, nor symbolic links) to ``dest``."""
    for here, dirs, files in os.walk(source):
        base = Path(here)
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith(".")
                         and not (base / d / SKILL_MD).is_file())
        target = dest / base.relative_to(source)
        target.mkdir(parents=True, exist_ok=True)
        for file in files:
            path = base / file
            if path.is_symlink() or not path.is_file():
                continue
            shutil.copy2(path, target / file)
    skill_md = dest / SKILL_MD
    text = skill_md.read_bytes().decode("utf-8", "surrogateescape")
    skill_md.write_bytes(with_name(text, name).encode("utf-8", "surrogateescape"))


def assemble(sources: Sequence[Path], dest: Path, limit: int | None = None) -> Assembled:
    """Copy the skill folders found under ``sources`` (at most ``limit``) into ``dest``, one folder each."""
    dest.mkdir(parents=True, exist_ok=True)
    taken: dict[str, int] = {}
    count = renamed = 0
    for source in sources:
        for folder in skill_folders(source):
            if limit is not None and count >= limit:
                return Assembled(dest, count, renamed)
            text = (folder / SKILL_MD).read_bytes().decode("utf-8", "replace")
            name = valid_name(declared_name(text) or folder.name)
            seen = taken.get(name, 0)
            taken[name] = seen + 1
            if seen:
                name = valid_name(f"{name[:MAX_NAME - 6]}-{seen + 1}")
                renamed += 1
            _copy_skill(folder, dest / name, name)
            count += 1
    return Assembled(dest, count, renamed)


def _source_key(sources: Sequence[Path], limit: int | None) -> str:
    """What a prepared corpus is made of: the sources' real paths, their SKILL.md files' sizes and times, this
    module's code and the registry.yaml copied beside, so a changed source is never read from a stale copy."""
    digest = hashlib.sha256(Path(__file__).read_bytes() + (REPO / "registry.yaml").read_bytes())
    digest.update(repr(limit).encode())
    for source in sources:
        digest.update(str(source.resolve()).encode())
        for folder in skill_folders(source):
            stat = (folder / SKILL_MD).stat()
            digest.update(f"{folder.relative_to(source)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:12]


def prepared_corpus(cache_dir: Path, sources: Sequence[Path], limit: int | None = None) -> Assembled:
    """The skills of ``sources`` prepared under ``cache_dir`` (made once, then reused), as ``cached_corpus``
    lays out a generated corpus: ``skills/`` beside a copy of registry.yaml. Made in a temporary sibling that
    is renamed into place."""
    final = cache_dir / f"corpus-from-{_source_key(sources, limit)}"
    marker = final / "assembled.txt"
    if marker.is_file():
        count, renamed = (int(x) for x in marker.read_text(encoding="ascii").split())
        return Assembled(final / "skills", count, renamed)
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache_dir))
    try:
        made = assemble(sources, staging / "skills", limit)
        shutil.copyfile(REPO / "registry.yaml", staging / "registry.yaml")
        (staging / "assembled.txt").write_text(f"{made.count} {made.renamed}\n", encoding="ascii")
        try:
            os.rename(staging, final)
        except OSError:
            if not marker.is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return Assembled(final / "skills", made.count, made.renamed)


def first_skills(skills: Path, n: int) -> Path:
    """The ``skills/`` folder of a corpus of the first ``n`` skills of ``skills`` by name (all of them when it
    holds no more), beside its registry.yaml: hard links, made once next to the prepared corpus."""
    folders = sorted(p.name for p in skills.iterdir() if p.is_dir())
    if n >= len(folders):
        return skills
    final = skills.parent.with_name(f"{skills.parent.name}-first{n}")
    if (final / "skills").is_dir():
        return final / "skills"
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=skills.parent.parent))
    try:
        for name in folders[:n]:
            shutil.copytree(skills / name, staging / "skills" / name, copy_function=os.link)
        shutil.copyfile(skills.parent / "registry.yaml", staging / "registry.yaml")
        os.rename(staging, final)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return final / "skills"


def describe(made: Assembled, sources: Sequence[Path]) -> str:
    """One line saying what the corpus is, for the benchmark's log and table."""
    names = ", ".join(str(s) for s in sources)
    return (f"{made.count:,} real skills from {names} ({made.renamed:,} duplicate names renamed <name>-<n>; "
            f"frontmatter names set to their folders)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real_corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path, help="extracted repositories (or folders of them)")
    parser.add_argument("--out", type=Path, required=True, help="the folder to fill with one folder per skill")
    parser.add_argument("--limit", type=int, default=None, help="copy at most this many skills")
    args = parser.parse_args(argv)
    for source in args.sources:
        if not source.is_dir():
            parser.error(f"{source}: not a folder")
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"{args.out}: not empty")
    made = assemble(args.sources, args.out, args.limit)
    print(describe(made, args.sources))
    return 0


if __name__ == "__main__":
    sys.exit(main())
