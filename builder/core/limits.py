"""The one table of the size and count limits that validation, the build, the client and the MCP server share.

Each limit has the default registry.yaml's ``limits:`` starts from and the ceiling it may not raise it past. The
ceilings sit within what every skillreg client accepts when it unpacks a bundle and within what the MCP Skills
extension serves (512 files and 16 MiB per skill), so a skill that validates under any registry.yaml installs
everywhere and can be served over MCP.
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB

# The MCP Skills extension serves at most this many files and bytes of one skill.
MCP_MAX_FILES = 512
MCP_MAX_SKILL_BYTES = 16 * MIB


@dataclass(frozen=True)
class Limit:
    default: int
    ceiling: int | None  # the most registry.yaml may set; None: no ceiling
    unit: str  # "bytes", "files", "tags": how messages name the number


LIMITS: dict[str, Limit] = {
    "max_files": Limit(MCP_MAX_FILES, MCP_MAX_FILES, "files"),
    "max_file_bytes": Limit(1 * MIB, MCP_MAX_SKILL_BYTES, "bytes"),
    "max_skill_bytes": Limit(10 * MIB, MCP_MAX_SKILL_BYTES, "bytes"),
    "max_frontmatter_bytes": Limit(64 * KIB, 256 * KIB, "bytes"),
    "max_tags": Limit(10, None, "tags"),
}


@dataclass(frozen=True)
class ClientLimits:
    """What a client accepts in a bundle it installs: at least every ceiling above, with room for bundles that
    registries published before the ceilings existed (entries may be up to 2,000, and 64 MiB in all)."""

    max_entries: int = 2_000
    max_file_bytes: int = 16 * MIB
    max_total_bytes: int = 64 * MIB
    max_frontmatter_bytes: int = 256 * KIB


CLIENT = ClientLimits()


def ceiling_problems() -> list[str]:
    """Ceilings the client or MCP would not accept; empty while the table is consistent (a test holds it so)."""
    def ceiling(name: str) -> int:
        value = LIMITS[name].ceiling
        assert value is not None
        return value

    checks = [
        ("max_files", ceiling("max_files") <= min(CLIENT.max_entries, MCP_MAX_FILES)),
        ("max_file_bytes", ceiling("max_file_bytes") <= min(CLIENT.max_file_bytes, ceiling("max_skill_bytes"))),
        ("max_skill_bytes", ceiling("max_skill_bytes") <= min(CLIENT.max_total_bytes, MCP_MAX_SKILL_BYTES)),
        ("max_frontmatter_bytes", ceiling("max_frontmatter_bytes") <= CLIENT.max_frontmatter_bytes),
    ]
    checks += [(name, limit.ceiling is None or limit.default <= limit.ceiling) for name, limit in LIMITS.items()]
    return [name for name, ok in checks if not ok]
