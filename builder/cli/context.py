"""What the commands share: the registry's configuration, read once and only by the commands that need it."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from ..core.config import RegistryConfig, load_config


class Context:
    """What every command may need: the registry's configuration, read once on first use."""

    def __init__(self, config_path: Path | None) -> None:
        self.config_path = config_path

    @functools.cached_property
    def config(self) -> RegistryConfig:
        return load_config(self.config_path)


pass_context = click.make_pass_decorator(Context)
