"""Deterministic bundles of a skill: a zip archive and the same files as JSON.

Same files in, same bytes out: entries sorted by path, a fixed timestamp, fixed modes (0644, or 0755
for executables), no directory entries, no extra fields.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Iterable

from .model import Skill, SkillFile

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
BUNDLE_VERSION = 1


def file_mode(f: SkillFile) -> int:
    return 0o755 if f.executable else 0o644


def bundle_order(files: Iterable[SkillFile]) -> list[SkillFile]:
    """The order a bundle holds its files in: SKILL.md first (readers that peek at the first entry find it), then
    by path."""
    return sorted(files, key=lambda f: (f.path not in ("SKILL.md", "skill.md"), f.path.encode("utf-8")))


def zip_bytes(files: Iterable[SkillFile]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for f in bundle_order(files):
            info = zipfile.ZipInfo(f.path, date_time=ZIP_EPOCH)
            info.create_system = 3  # Unix, so external_attr carries the mode
            info.external_attr = (0o100000 | file_mode(f)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, f.data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
    return buffer.getvalue()


def file_entry(f: SkillFile) -> dict[str, object]:
    if f.is_text:
        content, encoding = f.data.decode("utf-8"), "utf-8"
    else:
        content, encoding = base64.b64encode(f.data).decode("ascii"), "base64"
    return {"path": f.path, "content": content, "encoding": encoding, "executable": f.executable,
            "size": f.size, "sha256": f.sha256}


def json_bundle(skill: Skill) -> dict[str, object]:
    return {
        "api_version": BUNDLE_VERSION,
        "name": skill.name,
        "digest": skill.digest,
        "files": [file_entry(f) for f in bundle_order(skill.files)],
    }


def dumps(document: object) -> bytes:
    """The one JSON encoding of every published document: sorted keys, compact, UTF-8, newline at the end."""
    return (json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
