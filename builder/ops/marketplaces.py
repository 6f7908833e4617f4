"""``skillreg marketplace``: the plan of every marketplace file registry.yaml's ``marketplaces:`` asks for, Claude
Code's (generated, ``marketplace``, or kept and completed, ``marketplace_keep``) and the other vendors'
(``vendor_marketplaces``), written when it changes."""

from __future__ import annotations

import json
import os
from dataclasses import replace

from ..core.config import RegistryConfig
from ..core.fs import write_atomic
from .marketplace import (
    MARKETPLACE_PATH,
    MarketplacePlan,
    Published,
    generated_document,
    marketplace_path,
    published_skills,
)
from .marketplace_keep import complete
from .vendor_marketplaces import vendor_plans


def plan_marketplaces(config: RegistryConfig) -> list[MarketplacePlan]:
    """A plan per file registry.yaml's ``marketplaces:`` asks for: Claude Code's first, then the other vendors'
    (whose warnings go on the first plan)."""
    published = published_skills(config)
    plans = [plan_marketplace(config, published)] if "claude" in config.marketplaces else []
    others, warnings = vendor_plans(config, published)
    if warnings:
        head = plans[0] if plans else MarketplacePlan(marketplace_path(config), b"", b"")
        plans[:1] = [replace(head, warnings=(*head.warnings, *warnings))]
    return plans + others


def write_marketplaces(config: RegistryConfig) -> list[MarketplacePlan]:
    plans = plan_marketplaces(config)
    for plan in plans:
        if not plan.unchanged:
            os.makedirs(plan.path.parent, exist_ok=True)
            write_atomic(plan.path, plan.data)
    return plans


def plan_marketplace(config: RegistryConfig, published: Published | None = None) -> MarketplacePlan:
    """Claude Code's file: generated when the repository has none, else the maintainer's, completed."""
    path = marketplace_path(config)
    published = published or published_skills(config)
    current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    if current is None:
        document = generated_document(config, published)
        data = (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
        return MarketplacePlan(path, data, None)
    return complete(config, published, current)


def render(config: RegistryConfig) -> bytes:
    """Claude Code's file as ``skillreg marketplace`` would leave it."""
    return plan_marketplace(config).data


def stale_reason(config: RegistryConfig) -> str | None:
    """Why the committed file does not list the published skills, or None when it does."""
    plan = plan_marketplace(config)
    if plan.current is None:
        return f"{MARKETPLACE_PATH} does not exist"
    if plan.unchanged:
        return None
    return f"{MARKETPLACE_PATH} is out of date" + (f" ({'; '.join(plan.changes)})" if plan.changes else "")
