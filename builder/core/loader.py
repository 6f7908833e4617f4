"""Find skill folders and read each into a ``Skill``, reporting what is wrong with its files on the way.

Nothing here follows a symbolic link or opens a special file: they are reported and left out.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol, TypeVar

from .config import CONFIG_NAME, Limits, RegistryConfig
from .diagnostics import RULES, Diagnostic
from .errors import ConfigError
from .frontmatter import parse_skill_md
from .model import Skill, SkillFile

_Report = Callable[..., None]  # report(code, rel, message, line=0, **details): records one finding

SKILL_MD = "SKILL.md"
SKILL_MD_FALLBACK = "skill.md"
MAX_PATH_CHARS = 200
JUNK_DIRS = frozenset({"__pycache__", "node_modules", ".git", ".svn", ".hg", ".mypy_cache", ".pytest_cache"})
JUNK_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
JUNK_SUFFIXES = (".pyc", ".pyo", ".swp", "~")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVE = re.compile(r"[A-Za-z]:")
# Names Windows cannot create: its device names (with any extension), a trailing dot or space, and : * ? " < > |
_WINDOWS_DEVICE = re.compile(r"(?:CON|PRN|AUX|NUL|COM[0-9\u00b9\u00b2\u00b3]|LPT[0-9\u00b9\u00b2\u00b3]"
                             r"|CONIN\$|CONOUT\$)(?:\..*)?", re.IGNORECASE)
_WINDOWS_FORBIDDEN = re.compile(r'[:*?"<>|]')


@dataclass(frozen=True)
class LoadedSkill:
    skill: Skill
    diagnostics: tuple[Diagnostic, ...]


def display_path(path: Path) -> str:
    """The path as a user would type it: relative to the current folder when below it."""
    return _display_path(str(path), os.getcwd())


def _display_path(path: str, cwd: str) -> str:
    """``_display_whole`` of the parent joined with the name: the parent's is computed once for all the skills of
    a folder, where ``relpath`` of each costs ten times the join. Only for a POSIX path without `.`, `..` or `//`
    that is not the current folder or above it: there the two always agree."""
    parent, name = os.path.split(path)
    if os.sep == "/" and parent and name and not path.startswith(".") and "/." not in path and "//" not in path \
            and cwd != path and not cwd.startswith(path + "/"):
        shown = _display_whole(parent, cwd)
        if shown == ".":
            return name
        if not shown.endswith("/"):
            return f"{shown}/{name}"
    return _display_whole(path, cwd)


@functools.lru_cache(maxsize=4096)
def _display_whole(path: str, cwd: str) -> str:
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()
    return Path(relative).as_posix() if not relative.startswith("..") else Path(path).as_posix()


def is_junk(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in JUNK_DIRS
    return name in JUNK_FILES or name.endswith(JUNK_SUFFIXES)


def path_problems(path: str) -> list[tuple[str, str]]:
    """(code, message) for a relative POSIX path that cannot be published safely; shared with import and install."""
    problems = []
    if _CONTROL.search(path):
        problems.append(("SK504", f"path {path!r} contains a control character"))
    parts = path.split("/")
    if path.startswith("/") or ".." in parts or _DRIVE.match(path):
        problems.append(("SK503", f"path {path!r} is absolute or contains a `..` component"))
    if "\\" in path:
        problems.append(("SK514", f"path {path!r} contains a backslash, which Windows and unzip tools read as a "
                                  "folder separator"))
    if len(path) > MAX_PATH_CHARS:
        problems.append(("SK505", f"path is {len(path)} characters long; the limit is {MAX_PATH_CHARS}: {path[:60]}…"))
    return problems


def windows_problem(name: str) -> str | None:
    """Why Windows cannot create a file or folder called ``name`` (one path component), or None."""
    if _WINDOWS_DEVICE.fullmatch(name):
        return f"`{name}` is a device name on Windows"
    if name.endswith((".", " ")):
        return f"`{name}` ends with a {'dot' if name.endswith('.') else 'space'}, which Windows drops"
    found = _WINDOWS_FORBIDDEN.search(name)
    if found:
        return f"`{name}` contains `{found.group(0)}`, which Windows does not allow in a name"
    return None


def find_skill_folders(path: Path) -> list[Path]:
    """``path`` itself when it holds SKILL.md, else every visible sub-folder of it (a folder of skills).

    Refuses a registry folder reached through a symbolic link (``skills/`` or a folder above it, below the
    folder holding registry.yaml): the skills would come from outside the repository. A linked skill folder
    is reported by ``load_skill`` instead (SK501).
    """
    is_skill = (path / SKILL_MD).is_file() or (path / SKILL_MD_FALLBACK).is_file()
    refuse_linked_folders(path if not is_skill else path.parent)
    if is_skill:
        return [path]
    found: list[str] = []
    has_files = False
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.name.startswith((".", "_")):
                continue
            if entry.is_dir(follow_symlinks=False) or entry.is_symlink():
                found.append(entry.name)
            else:
                has_files = True
    if not found and has_files:  # files but no sub-folders: a skill whose SKILL.md is missing or misnamed
        return [path]
    found.sort()
    return [path / name for name in found]  # a child of ``path`` costs half of a Path parsed from a string


def refuse_linked_folders(path: Path) -> None:
    """Raise ConfigError when ``path`` or a folder between it and the registry root is a symbolic link.

    The registry root is the nearest folder above holding registry.yaml; without one only ``path`` is checked,
    so a system folder that is itself a link (``/tmp`` on macOS) never counts against a registry.
    """
    absolute = Path(os.path.abspath(path))
    chain = [absolute]
    for parent in absolute.parents:
        if (parent / CONFIG_NAME).is_file():
            break
        chain.append(parent)
    else:
        chain = chain[:1]
    for folder in chain:
        if folder.is_symlink():
            shown = display_path(folder)
            raise ConfigError(f"{shown}: the registry folder is a symbolic link to {os.readlink(folder)!r}; links "
                              f"are never followed: replace {shown} with the folder itself")


def load_skill(folder: Path, config: RegistryConfig, name: str | None = None, *,
               ignored: Collection[str] = ()) -> LoadedSkill:
    """The skill in ``folder``, published as ``name`` (its slug, ``core.slugs``; the folder's name by default).
    ``ignored``: paths below the folder (files or whole folders) that git ignores, left out as if absent."""
    shown = display_path(folder)
    name = name or folder.name
    diagnostics: list[Diagnostic] = []

    def report(code: str, rel: str, message: str, line: int = 0, **kw: object) -> None:
        file = f"{shown}/{rel}" if rel else shown
        diagnostics.append(RULES[code].at(file, line, message, skill=name, **kw))  # type: ignore[arg-type]

    if folder.is_symlink():
        report("SK501", "", f"the skill folder is a symbolic link to {os.readlink(folder)!r}")
        return LoadedSkill(Skill(name, folder, SKILL_MD, None, "", 1, ()), tuple(diagnostics))

    files = _read_files(folder, config, report, ignored)
    by_path = {f.path: f for f in files}
    skill_md = SKILL_MD if SKILL_MD in by_path else SKILL_MD_FALLBACK if SKILL_MD_FALLBACK in by_path else None
    if skill_md is None:
        # A SKILL.md left out as too large, unreadable or a link is already reported; "no SKILL.md" would mislead.
        left_out = {f"{shown}/{SKILL_MD}", f"{shown}/{SKILL_MD_FALLBACK}"} & {d.file for d in diagnostics}
        if not left_out:
            report("SK001", "", f"no {SKILL_MD} in {shown}/")
        return LoadedSkill(Skill(name, folder, SKILL_MD, None, "", 1, tuple(files)), tuple(diagnostics))
    if skill_md == SKILL_MD_FALLBACK:
        report("SK002", skill_md, "found `skill.md`; the standard name is `SKILL.md`")
    parsed = parse_skill_md(by_path[skill_md].data, f"{shown}/{skill_md}",
                           max_frontmatter_bytes=config.limits.max_frontmatter_bytes, skill=name)
    diagnostics.extend(parsed.diagnostics)
    skill = Skill(name=name, folder=folder, skill_md=skill_md, frontmatter=parsed.frontmatter,
                  body=parsed.body, body_line=parsed.body_line, files=tuple(files))
    return LoadedSkill(skill, tuple(diagnostics))


class TreeNode(NamedTuple):
    """One entry of a folder as a checkout holds it, links not followed: from a directory listing or git's file list."""

    name: str
    kind: str  # "file", "folder", "submodule" (checks out as an empty folder), "link", "special" or "unreadable"
    folder: bool  # what the listing says before any ``stat``: the Windows-name rule needs it for junk folders
    size: int = 0  # a file's bytes: ``stat``'s, or a git object header's (no content read)
    executable: bool = False
    where: str = ""  # how its tree finds it again: a path on disk, a blob id, a folder's key
    error: str = ""  # why an "unreadable" entry could not be looked at


class FileTree(Protocol):
    """What ``read_tree`` walks: the working tree's folders or a git tree's file list, one folder at a time."""

    def children(self, where: str) -> list[TreeNode]:
        """The entries of the folder ``where`` names, sorted by name; OSError when it cannot be listed."""

    def link_target(self, node: TreeNode) -> str:
        """How the SK501 message shows what a link points to."""

    def keep(self, rel: str, node: TreeNode) -> int:
        """Take a file within the size limit (read it now, or note it for later); its bytes. OSError: unreadable."""


def read_tree(tree: FileTree, top: str, limits: Limits, report: _Report) -> int:
    """Walk ``tree`` from ``top`` with the loader's file rules, handing each loadable file to ``tree.keep``, and
    report every problem; returns the number of files counted against ``max_files`` (those too large included).
    The one walk both the working tree and a git tree go through, so the rules are written once."""
    total = count = 0  # bytes and regular files, kept or left out as too large
    stack = [(top, "")]
    while stack:
        where, prefix = stack.pop()
        try:
            nodes = tree.children(where)
        except OSError as exc:
            report("SK512", prefix.rstrip("/"), f"cannot list folder: {exc.strerror}")
            continue
        for node in nodes:
            rel = prefix + node.name
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                report("SK513", rel.encode("utf-8", "replace").decode(), "file name is not valid UTF-8")
                continue
            for code, message in path_problems(rel):
                report(code, repr(rel)[1:-1] if code == "SK504" else rel, message)
            windows = windows_problem(node.name)
            if windows and not is_junk(node.name, node.folder):  # junk: SK510 says enough
                report("SK516", rel, windows)
            kind = node.kind
            if kind == "unreadable":
                report("SK512", rel, f"cannot read: {node.error}")
            elif kind == "link":
                report("SK501", rel, f"`{rel}` is a symbolic link to {tree.link_target(node)}")
            elif kind == "folder" or kind == "submodule":
                if is_junk(node.name, True):
                    report("SK510", rel, f"`{rel}/` is a generated folder that must not be committed")
                elif kind == "folder":
                    stack.append((node.where, rel + "/"))
            elif kind != "file":
                report("SK502", rel, f"`{rel}` is not a regular file")
            elif is_junk(node.name, False):
                report("SK510", rel, f"`{rel}` is a generated or editor file that must not be committed")
            else:
                count += 1
                if node.size > limits.max_file_bytes:
                    report("SK507", rel, f"`{rel}` is {node.size:,} bytes; the limit is {limits.max_file_bytes:,}")
                    total += node.size
                    continue
                try:
                    total += tree.keep(rel, node)
                except OSError as exc:
                    report("SK512", rel, f"cannot read `{rel}`: {exc.strerror}")
    if total > limits.max_skill_bytes:
        report("SK508", "", f"the skill holds {total:,} bytes; the limit is {limits.max_skill_bytes:,}")
    if count > limits.max_files:
        report("SK518", "", f"the skill holds {count:,} files; the limit is {limits.max_files:,}")
    return count


def sorted_and_checked(files: list[SkillFile], report: _Report) -> list[SkillFile]:
    """The files in bundle order (by UTF-8 path), their colliding names reported."""
    files.sort(key=lambda f: f.path.encode("utf-8"))
    report_collisions([f.path for f in files], report)
    return files


V = TypeVar("V")


def folder_listing(files: Iterable[tuple[str, V]]) -> dict[str, dict[str, V | None]]:
    """A flat list of file paths (each with a value) as a directory listing shows it: folder path -> {name: the
    file's value, or None for a subfolder}. What a ``FileTree`` known only by its file paths lists."""
    listed: dict[str, dict[str, V | None]] = {"": {}}
    for path, value in files:
        parts = path.split("/")
        for i in range(1, len(parts)):
            listed.setdefault("/".join(parts[:i - 1]), {}).setdefault(parts[i - 1], None)
            listed.setdefault("/".join(parts[:i]), {})
        listed.setdefault("/".join(parts[:-1]), {})[parts[-1]] = value
    return listed


class MemoryTree:
    """Files held in memory (a text to import) as ``read_tree`` walks a folder, so that the loader's rules and
    limits judge them before anything is written; ``keep`` reads nothing."""

    def __init__(self, files: Mapping[str, tuple[bytes, bool]]) -> None:
        self._listed = folder_listing(files.items())

    def children(self, where: str) -> list[TreeNode]:
        return [TreeNode(name, "folder", True, where=f"{where}/{name}" if where else name) if file is None
                else TreeNode(name, "file", False, len(file[0]), file[1]) for name, file in
                sorted(self._listed.get(where, {}).items())]

    def link_target(self, node: TreeNode) -> str:
        raise AssertionError("files in memory hold no links")

    def keep(self, rel: str, node: TreeNode) -> int:
        return node.size


class _WorkingTree:
    """A skill folder on disk as ``read_tree`` sees it: reads each file it keeps at once, bounded by the limit."""

    def __init__(self, root: Path, max_file_bytes: int, ignored: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.files: list[SkillFile] = []
        self.ignored = ignored  # the paths of entries left out, as ``os.scandir`` spells them

    def children(self, where: str) -> list[TreeNode]:
        return [self._node(entry) for entry in sorted(os.scandir(where), key=lambda e: e.name)
                if not self.ignored or entry.path not in self.ignored]

    @staticmethod
    def _node(entry: os.DirEntry[str]) -> TreeNode:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            try:
                folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                folder = False
            return TreeNode(entry.name, "unreadable", folder, error=str(exc.strerror))
        mode = st.st_mode
        kind = "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else \
            "link" if stat.S_ISLNK(mode) else "special"
        return TreeNode(entry.name, kind, kind == "folder", st.st_size, bool(mode & 0o111), entry.path)

    def link_target(self, node: TreeNode) -> str:
        target = os.readlink(node.where)
        outside = not _is_within(Path(node.where).parent.resolve() / target, self.root)  # root is resolved too
        return f"{target!r}{' outside the repository' if outside else ''}"

    def keep(self, rel: str, node: TreeNode) -> int:
        data = _read_bounded(node.where, node.size, self.max_file_bytes)
        self.files.append(SkillFile(path=rel, data=data, executable=node.executable))
        return len(data)


def _read_files(folder: Path, config: RegistryConfig, report: _Report, ignored: Collection[str] = ()) -> \
        list[SkillFile]:
    """Every regular file below ``folder`` but those ``ignored`` as bytes, sorted by path; problems are reported,
    not raised."""
    top = str(folder)
    skip = frozenset(os.path.join(top, *rel.split("/")) for rel in ignored)
    tree = _WorkingTree(_resolved(config.root), config.limits.max_file_bytes, skip)
    read_tree(tree, top, config.limits, report)
    return sorted_and_checked(tree.files, report)


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _read_bounded(path: str, size: int, limit: int) -> bytes:
    """The file's bytes, at most ``limit + 1`` of them, in one ``read`` of the size ``stat`` gave plus one byte
    for a file that did not change (asking for ``limit + 1`` at once would allocate that much for every small
    file); reading goes on while the file holds more. A link put in its place since ``stat`` is not followed."""
    fd = os.open(path, _READ_FLAGS)
    try:
        want = min(size, limit) + 1
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, want - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if got < want and got >= size:  # a short read past the size stat gave: the end of the file
                break
            if got >= want:  # it grew since stat: read on, up to the limit
                want = limit + 1
        return b"".join(chunks) if len(chunks) != 1 else chunks[0]
    finally:
        os.close(fd)


def report_collisions(paths: list[str], report: _Report) -> None:
    """Files and folders that one file system would store as one: equal after Unicode normalisation (macOS)
    or after case folding too (macOS and Windows by default). A colliding folder is reported, not each file in it."""
    if len(paths) < 2:  # one file (most skills: SKILL.md alone) collides with nothing
        return
    names = sorted({"/".join(parts[:i]) for parts in (p.split("/") for p in paths) for i in range(1, len(parts) + 1)},
                   key=lambda p: p.encode("utf-8"))
    normal: dict[str, str] = {}
    folded: dict[str, str] = {}
    collided: set[str] = set()
    for name in names:
        parent = name.rpartition("/")[0]
        if parent in collided:
            collided.add(name)
            continue
        nfc = unicodedata.normalize("NFC", name)
        key = nfc.casefold()
        if nfc in normal:
            other = normal[nfc]
            report("SK515", name, f"`{name}` and `{other}` are one name in two Unicode normalisation forms "
                                  f"({ascii(name)} and {ascii(other)})")
        elif key in folded:
            report("SK506", name, f"`{name}` and `{folded[key]}` differ only in case")
        else:
            normal[nfc] = folded[key] = name
            continue
        collided.add(name)


@functools.lru_cache(maxsize=64)
def _resolved(path: Path) -> Path:
    return path.resolve()


def _is_within(path: Path, root: Path) -> bool:
    try:
        Path(os.path.normpath(path.absolute())).relative_to(root)
        return True
    except ValueError:
        return False
