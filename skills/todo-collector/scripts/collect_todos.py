#!/usr/bin/env python3
"""Collect TODO, FIXME, HACK, XXX and BUG markers from source comments, optionally with git blame.

Walks a folder (using `git ls-files` when it is inside a git work tree, so ignored files are
skipped), finds markers in comments, and prints them as path:line, grouped and sorted.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path

DEFAULT_TAGS = ["FIXME", "BUG", "HACK", "XXX", "TODO"]
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
             ".pytest_cache", "dist", "build", ".idea", ".vscode", "target", "vendor"}
# Comment openers anywhere on a line (#, //, /*, <!--, --, {-), or at line start only for the
# ones that also appear in ordinary code (* in block comments, ; in Lisp/INI, % in TeX/Erlang, REM).
COMMENT_PREFIX = r"(?:#|//|/\*|<!--|--|\{-|^\s*(?:\*|;|%|REM\b))"
MAX_BYTES = 2_000_000


def marker_regex(tags: list[str]) -> re.Pattern:
    alternatives = "|".join(re.escape(t) for t in tags)
    return re.compile(COMMENT_PREFIX + r"[^\n]*?\b(?P<tag>" + alternatives + r")\b"
                      r"(?:\((?P<owner>[^)]*)\))?[:\s-]*(?P<text>.*?)\s*(?:\*/|-->|-\})?\s*$")


def git_files(root: Path) -> list[Path] | None:
    try:
        result = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], capture_output=True, check=False)
    except FileNotFoundError:
        return None
    if result.returncode != 0:
        return None
    return sorted(root / p for p in result.stdout.decode("utf-8", "surrogateescape").split("\0") if p)


def walk_files(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        found.extend(Path(dirpath) / f for f in sorted(filenames))
    return found


def blame(root: Path, path: Path, line: int) -> dict:
    result = subprocess.run(["git", "-C", str(root), "blame", "--porcelain", "-L", f"{line},{line}", "--",
                             str(path.relative_to(root))], capture_output=True, text=True, check=False)
    if result.returncode != 0:  # untracked or unreadable file
        return {"author": "(not committed)", "date": None, "commit": None}
    info: dict = {"author": None, "date": None, "commit": result.stdout.split(" ", 1)[0][:10] or None}
    for row in result.stdout.splitlines():
        if row.startswith("author "):
            info["author"] = row[7:]
        elif row.startswith("author-time "):
            stamp = datetime.datetime.fromtimestamp(int(row[12:]), tz=datetime.timezone.utc)
            info["date"] = stamp.strftime("%Y-%m-%d")
    if info["commit"] and set(info["commit"]) == {"0"}:
        info.update(author="(uncommitted)", date=None, commit=None)
    return info


def collect(root: Path, tags: list[str], use_blame: bool) -> list[dict]:
    pattern = marker_regex(tags)
    files = git_files(root)
    in_git = files is not None
    if files is None:
        files = walk_files(root)
    items = []
    for path in files:
        if any(part in SKIP_DIRS for part in path.relative_to(root).parts[:-1]):
            continue
        try:
            if not path.is_file() or path.stat().st_size > MAX_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:4096]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            match = pattern.search(line)
            if not match:
                continue
            item = {"path": path.relative_to(root).as_posix(), "line": number, "tag": match.group("tag"),
                    "owner": (match.group("owner") or "").strip() or None, "text": match.group("text").strip()}
            if use_blame:
                item.update(blame(root, path, number) if in_git else {"author": None, "date": None, "commit": None})
            items.append(item)
    order = {t: i for i, t in enumerate(tags)}
    items.sort(key=lambda i: (order[i["tag"]], i["path"], i["line"]))
    return items


def render(items: list[dict], tags: list[str]) -> str:
    out = []
    for tag in tags:
        group = [i for i in items if i["tag"] == tag]
        if not group:
            continue
        out.append(f"{tag} ({len(group)})")
        for i in group:
            owner = f"({i['owner']})" if i["owner"] else ""
            who = ""
            if "author" in i and i["author"]:
                who = f"  [{i['author']}{', ' + i['date'] if i['date'] else ''}]"
            out.append(f"  {i['path']}:{i['line']}: {tag}{owner}: {i['text']}{who}")
        out.append("")
    summary = ", ".join(f"{t}={sum(1 for i in items if i['tag'] == t)}" for t in tags)
    out.append(f"total: {len(items)} ({summary})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Collect TODO/FIXME/HACK/XXX/BUG comment markers from a source tree.")
    parser.add_argument("root", nargs="?", default=".", type=Path, help="folder to scan (default: .)")
    parser.add_argument("--tags", default=",".join(DEFAULT_TAGS),
                        help="comma-separated markers, in report order (default: %(default)s)")
    parser.add_argument("--blame", action="store_true", help="add author and date of each line via git blame")
    parser.add_argument("--fail-on", default="", metavar="TAGS",
                        help="comma-separated markers that make the exit code 1 when present (for CI)")
    parser.add_argument("--json", action="store_true", help="print items as JSON")
    args = parser.parse_args(argv)

    tags = [t.strip() for t in args.tags.split(",") if t.strip()]
    fail_on = [t.strip() for t in args.fail_on.split(",") if t.strip()]
    if not tags:
        parser.error("--tags is empty")
    if not set(fail_on) <= set(tags):
        parser.error(f"--fail-on markers must also be in --tags: {', '.join(sorted(set(fail_on) - set(tags)))}")
    root = args.root
    if not root.exists():
        print(f"error: folder not found: {root}", file=sys.stderr)
        return 2
    if not root.is_dir():
        print(f"error: {root} is not a folder", file=sys.stderr)
        return 2
    items = collect(root.resolve(), tags, args.blame)
    if args.json:
        print(json.dumps({"items": items, "count": len(items)}, indent=2, sort_keys=True))
    else:
        print(render(items, tags))
    return 1 if any(i["tag"] in fail_on for i in items) else 0


if __name__ == "__main__":
    sys.exit(main())
