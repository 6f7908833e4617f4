"""What the commands share: the registry's configuration, read once and only by the commands that need it."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from ..core.config import CONFIG_NAME, RegistryConfig, load_config
from ..core.errors import UsageError


class Context:
    """What every command may need: the registry's configuration, read once on first use."""

    def __init__(self, config_path: Path | None) -> None:
        self.config_path = config_path

    @functools.cached_property
    def config(self) -> RegistryConfig:
        return load_config(self.config_path)

    def registry(self, command: str, *, reads: bool = False) -> RegistryConfig:
        """The configuration of a command that writes into a registry (its skills, its output, its marketplace
        file), or with ``reads`` one that reads a registry's skills: refused when no registry.yaml was found or
        named, so that nothing is written into (or read from) a folder that merely happens to be the current one."""
        config = self.config
        if config.path is None:
            raise UsageError(no_registry(command, reads=reads))
        return config


def no_registry(command: str, *, reads: bool = False) -> str:
    """Why ``skillreg COMMAND`` will not run here, and the three ways to a registry."""
    return (f"no {CONFIG_NAME} in {Path.cwd()} or a parent folder, and `skillreg {command}` "
            f"{'reads the skills of' if reads else 'writes into'} a registry; run it in a registry's checkout, "
            "pass --config FILE, or make a git repository of skills a registry with `skillreg init`")


pass_context = click.make_pass_decorator(Context)
