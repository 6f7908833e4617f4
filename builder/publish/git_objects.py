"""Git objects read by one long-running ``git cat-file --batch-command``: the sizes of a state's blobs come from
their headers before any content is read, so a state too large to load is refused unread; ``CheckedBlobs``
serves the bytes a bundle cache holds, each checked against its git blob id, and asks git only for the rest."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import IO

from ..core.errors import BuildError
from ..core.git import start_git
from ..core.loader import TreeNode, folder_listing
from .bundlecache import git_blob_id


class GitObjects:
    """Blob bytes by id through one ``git cat-file --batch-command`` process, started on first use.

    ``fetch`` asks for many objects per write, so a skill's files cost two round trips, not two per file; what
    it read is kept (up to ``MEMO_BYTES``), as consecutive versions of a skill share most of their files.
    """

    MEMO_BYTES = 64 * 1024 * 1024
    CHUNK = 256  # commands per write: far below a pipe's buffer, so writing never waits for our own reading

    def __init__(self, top: Path) -> None:
        self.top = top
        self._proc: subprocess.Popen[bytes] | None = None
        self._sizes: dict[str, int] = {}
        self._data: dict[str, bytes] = {}
        self._held = 0

    def learn_sizes(self, oids: Iterable[str]) -> None:
        """The size of every object, from its header alone (``info``): no byte of content is read."""
        wanted = sorted({oid for oid in oids if oid not in self._sizes})
        for i in range(0, len(wanted), self.CHUNK):
            chunk = wanted[i:i + self.CHUNK]
            for oid, size in zip(chunk, self._run("info", chunk), strict=True):
                self._sizes[oid] = size

    def fetch(self, oids: Iterable[str]) -> None:
        """Read the bytes of ``oids``, many per write; the caller has checked their sizes against its limits."""
        wanted = sorted(set(oids))
        self.learn_sizes(wanted)
        missing = [oid for oid in wanted if oid not in self._data]
        if self._held + sum(self._sizes[oid] for oid in missing) > self.MEMO_BYTES:
            self._data.clear()
            self._held = 0
            missing = wanted
        for i in range(0, len(missing), self.CHUNK):
            self._run("contents", missing[i:i + self.CHUNK])

    def _run(self, command: str, oids: list[str]) -> list[int]:
        stdin, stdout = self._pipe()
        stdin.write("".join(f"{command} {oid}\n" for oid in oids).encode("ascii"))
        stdin.flush()
        sizes = []
        for oid in oids:
            header = stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise BuildError(f"{self.top}: git object {oid} is missing or not a file; is the clone complete?")
            size = int(header[2])
            sizes.append(size)
            if command == "contents":
                data = stdout.read(size + 1)  # the bytes and a newline
                if len(data) != size + 1:
                    raise BuildError(f"{self.top}: `git cat-file` stopped while reading object {oid}")
                self._data[oid] = data[:-1]
                self._sizes[oid] = size
                self._held += size
        return sizes

    def _pipe(self) -> tuple[IO[bytes], IO[bytes]]:
        if self._proc is None:
            self._proc = start_git(["cat-file", "--batch-command"], self.top)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        return self._proc.stdin, self._proc.stdout

    def forget(self) -> None:
        """Drop the bytes read so far (another skill shares none of them)."""
        self._data.clear()
        self._sizes.clear()
        self._held = 0

    def size(self, oid: str) -> int:
        if oid not in self._sizes:
            self._sizes[oid] = self._run("info", [oid])[0]
        return self._sizes[oid]

    def read(self, oid: str) -> bytes:
        if oid not in self._data:
            self._run("contents", [oid])
        return self._data[oid]

    def close(self) -> None:
        if self._proc is not None:
            with suppress(OSError):
                assert self._proc.stdin is not None
                self._proc.stdin.close()
            self._proc.wait()
            self._proc = None


class CheckedBlobs:
    """Blob bytes by id for ``load_state``: bytes the build already holds (a cached zip's members, the work tree's
    files) are taken only when git's hash of them is the id they are offered for; the rest come from git. So every
    byte ``load_state`` sees is git's, wherever it was found."""

    def __init__(self, objects: GitObjects | None, where: str) -> None:
        self._objects = objects
        self._where = where
        self._known: dict[str, bytes] = {}

    def offer(self, oid: str, data: bytes) -> bool:
        if oid not in self._known:
            if git_blob_id(data, oid) != oid:
                return False
            self._known[oid] = data
        return True

    def add(self, members: Mapping[str, bytes]) -> None:
        """Bytes ``bundle_members`` already checked against their ids."""
        self._known.update(members)

    def _git(self) -> GitObjects:
        if self._objects is None:
            raise BuildError(f"cannot read the history of {self._where}: no git repository")
        return self._objects

    def learn_sizes(self, oids: Iterable[str]) -> None:
        missing = [oid for oid in oids if oid not in self._known]
        if missing:
            self._git().learn_sizes(missing)

    def size(self, oid: str) -> int:
        data = self._known.get(oid)
        return len(data) if data is not None else self._git().size(oid)

    def fetch(self, oids: Iterable[str]) -> None:
        missing = [oid for oid in oids if oid not in self._known]
        if missing:
            self._git().fetch(missing)

    def read(self, oid: str) -> bytes:
        data = self._known.get(oid)
        return data if data is not None else self._git().read(oid)


Entry = tuple[str, str, str]  # (path inside the skill folder, git mode, blob id)
SYMLINK, GITLINK = "120000", "160000"
_LINK_TARGET_BYTES = 4096  # a symbolic link's target is shown in the reason up to this size (PATH_MAX)


class GitTree:
    """A skill folder's git file list as ``loader.read_tree`` walks a folder on disk. Sizes come from object
    headers (``learn_sizes``, before the walk), and ``keep`` only notes a file: no blob is read but a link's
    target, so the caller can refuse a state too large to load before reading any of its files."""

    def __init__(self, entries: Sequence[Entry], objects: GitObjects | CheckedBlobs) -> None:
        self.objects = objects
        self.wanted: list[tuple[str, str, bool]] = []  # (path, blob id, executable): what a checkout would load
        self.wanted_bytes = 0
        objects.learn_sizes(oid for _, mode, oid in entries if mode != GITLINK)
        # Folders are implicit in git: list every folder and file under its parent, as a directory listing shows.
        self._listed = folder_listing((entry[0], entry) for entry in entries)

    def children(self, where: str) -> list[TreeNode]:
        return [self._node(where, name, entry) for name, entry in sorted(self._listed.get(where, {}).items())]

    def _node(self, where: str, name: str, entry: Entry | None) -> TreeNode:
        if entry is None:
            return TreeNode(name, "folder", True, where=f"{where}/{name}" if where else name)
        mode, oid = entry[1], entry[2]
        if mode == GITLINK:
            return TreeNode(name, "submodule", True)
        return TreeNode(name, "link" if mode == SYMLINK else "file", False, self.objects.size(oid), mode == "100755",
                        oid)

    def link_target(self, node: TreeNode) -> str:
        size = self.objects.size(node.where)
        if size > _LINK_TARGET_BYTES:
            return f"a target of {size:,} bytes"
        return repr(self.objects.read(node.where).decode("utf-8", "replace"))

    def keep(self, rel: str, node: TreeNode) -> int:
        self.wanted.append((rel, node.where, node.executable))
        self.wanted_bytes += node.size
        return node.size
