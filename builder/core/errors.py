"""The project's exceptions. ``str()`` of each is the message a user reads; the CLI shows it without a traceback."""

from __future__ import annotations

import errno

# The exit codes of every command, defined here once: a failure, a usage error (only), an interrupt (Ctrl-C).
EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class SkillRegError(Exception):
    """Base class for every error the CLI turns into a message and a non-zero exit."""

    exit_code = EXIT_FAILURE


class ConfigError(SkillRegError):
    """registry.yaml is missing, unreadable or malformed."""


class UsageError(SkillRegError):
    """The user asked for something that cannot be done as asked (bad name, existing folder, ...)."""

    exit_code = EXIT_USAGE


class BuildError(SkillRegError):
    """The build could not complete; the previous output is left as it was."""


class ClientError(SkillRegError):
    """A registry could not be read, or a skill could not be installed safely."""


def cannot_listen(host: str, port: int, exc: OSError, pick: str) -> SkillRegError:
    """A port that cannot be listened on, worded the same by every command that serves (``pick`` names its own
    option): a failure to serve (exit 1), not a mistake in the command line."""
    shown = f"[{host}]" if ":" in host else host
    if exc.errno == errno.EADDRINUSE:
        return SkillRegError(f"port {port} on {shown} is in use; pick another with {pick}")
    return SkillRegError(f"cannot serve on {shown}:{port}: {(exc.strerror or str(exc)).lower()}")


_DISK_ADVICE = {
    errno.ENOSPC: "the disk is full; free some space and run the command again",
    errno.EDQUOT: "the disk quota is used up; free some space or raise the quota and run the command again",
    errno.EROFS: "the file system is read-only; pick a writable location",
    errno.EACCES: "permission denied; check the folder's owner and permissions",
    errno.EPERM: "operation not permitted; check the folder's owner and permissions",
    errno.EIO: "the disk reported an input/output error; check the device and run the command again",
}


def os_error_message(exc: OSError) -> str:
    """One line for an operating-system error: the path it concerns, what happened and what to do."""
    where = exc.filename if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
    what = _DISK_ADVICE.get(exc.errno or 0) or (exc.strerror or str(exc))
    return f"{where}: {what}" if where is not None else what


def disk_problem(exc: OSError) -> str:
    """What went wrong and what to do, without the temporary file's name that the caller would only confuse."""
    return os_error_message(OSError(exc.errno, exc.strerror)) if exc.errno else str(exc)
