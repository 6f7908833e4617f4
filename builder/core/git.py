"""Running git, and reading its NUL-separated output so that nothing inside a name or a path can shift a field.

Git refuses NUL inside a path (a tree entry ends at one) and inside an identity (it reads the author line as a C
string and shows an empty name when it holds one), so with ``-z`` and ``%x00`` every field ends at a byte its
content cannot hold. Commit ids and times are checked for their shape as well, so output read out of step stops
the build with a message instead of publishing shifted fields.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError

_COMMIT_ID = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1, or SHA-256 repositories
_EPOCH = re.compile(rb"-?[0-9]{1,20}")


def git_command(args: Sequence[str]) -> list[str]:
    """The command line of ``git ARGS``, paths printed as they are (no octal quoting): every git skillreg runs."""
    return ["git", "-c", "core.quotepath=off", *args]


def run_git(args: Sequence[str], cwd: Path, *, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``cwd``; raises OSError without git."""
    return subprocess.run(git_command(args), cwd=cwd, input=stdin, capture_output=True, check=False)


def start_git(args: Sequence[str], cwd: Path) -> subprocess.Popen[bytes]:
    """``git ARGS`` in ``cwd`` left running, talked to through its standard input and output (``cat-file
    --batch-command``); its errors are not shown. Raises OSError without git."""
    return subprocess.Popen(git_command(args), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


class GitFailed(Exception):
    """git could not start (``missing``), or exited non-zero; ``str()`` is one line saying why."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def checked_git(args: Sequence[str], cwd: Path, *, stdin: bytes | None = None) -> bytes:
    """What ``git ARGS`` printed; ``GitFailed`` with git's last line of errors when it fails."""
    try:
        done = run_git(args, cwd, stdin=stdin)
    except OSError as exc:
        raise GitFailed(str(exc.strerror), missing=True) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitFailed(f"git {args[0]} failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def git_output(args: Sequence[str], cwd: Path) -> bytes | None:
    """What ``git ARGS`` printed, or None when git is missing or the command failed (outside a repository)."""
    try:
        done = run_git(args, cwd)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def path_below(path: Path, top: Path) -> str | None:
    """``path`` relative to ``top`` as git spells a pathspec ("" for the top itself); None when outside it. Both
    are taken as given: resolve them first where links may lie between."""
    try:
        rel = path.relative_to(top).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


def work_tree_differs(folder: Path, leave_out: Path) -> bool:
    """Whether the files below ``folder`` differ from the commit checked out (edited, added or deleted files that
    git does not ignore), ``leave_out`` (a build's output) apart; False outside git."""
    folder, leave_out = folder.resolve(), leave_out.resolve()
    excluded = [f":(exclude){leave_out.relative_to(folder).as_posix()}"] if leave_out.is_relative_to(folder) \
        and leave_out != folder else []
    return bool(git_output(["status", "--porcelain", "-z", "--untracked-files=all", "--", ".", *excluded], folder))


def git_text(args: Sequence[str], cwd: Path) -> str | None:
    """``git_output`` as text (undecodable bytes kept as surrogates)."""
    out = git_output(args, cwd)
    return out.decode("utf-8", "surrogateescape") if out is not None else None


@dataclass(frozen=True)
class LogRecord:
    """One commit of ``git log --format=COMMIT_FORMAT...``: its header fields and the NUL-separated body after."""

    commit: str
    time: int  # committer time, seconds since the epoch
    fields: tuple[bytes, ...]  # the rest of the header (author names and such), as git printed them
    body: tuple[bytes, ...]  # ``--raw -z`` or ``--name-only -z`` tokens; paths are never split or joined


def log_format(*extra: str) -> str:
    """The ``--format`` that ``read_log`` parses: an empty field opens each commit (no path is empty), then the
    commit id, the committer time and ``extra`` placeholders, each ended by NUL."""
    return "--format=%x00%H%x00%ct" + "".join(f"%x00{e}" for e in extra)


def read_log(output: bytes, extra: int, where: Path) -> Iterator[LogRecord]:
    """The commits of ``git log -z`` output made with ``log_format`` and ``extra`` more header fields."""
    tokens = output.split(b"\0")
    i, end = 0, len(tokens)
    while i < end:
        if tokens[i] != b"":
            raise BuildError(f"{where}: unexpected `git log` output near {tokens[i][:60]!r}; cannot read the history")
        if i + 1 == end:
            break  # the NUL that ends the output
        header = tokens[i + 1:i + 3 + extra]
        if (len(header) != 2 + extra or not _COMMIT_ID.fullmatch(header[0])
                or not _EPOCH.fullmatch(header[1])):
            raise BuildError(f"{where}: unexpected `git log` output near {b' '.join(header)[:60]!r}; "
                             "cannot read the history")
        i += 3 + extra
        start = i
        while i < end and tokens[i] != b"":
            i += 1
        body = tokens[start:i]
        if body:  # the body starts on a line of its own
            body[0] = body[0].removeprefix(b"\n")
        yield LogRecord(header[0].decode("ascii"), int(header[1]), tuple(header[2:]), tuple(body))
