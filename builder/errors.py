"""The project's exceptions. ``str()`` of each is the message a user reads; the CLI shows it without a traceback."""

from __future__ import annotations


class SkillRegError(Exception):
    """Base class for every error the CLI turns into a message and a non-zero exit."""

    exit_code = 1


class ConfigError(SkillRegError):
    """registry.yaml is missing, unreadable or malformed."""


class UsageError(SkillRegError):
    """The user asked for something that cannot be done as asked (bad name, existing folder, ...)."""

    exit_code = 2


class BuildError(SkillRegError):
    """The build could not complete; the previous output is left as it was."""


class ClientError(SkillRegError):
    """A registry could not be read, or a skill could not be installed safely."""
