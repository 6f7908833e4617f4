#!/usr/bin/env python3
"""Check relative links and #anchors in Markdown files, offline.

For every inline link, image and reference definition in *.md files under the given paths:
- relative targets must exist (files or folders);
- '#fragment' targets must match a heading (GitHub-style slug) or an explicit HTML id/name
  in the target Markdown file (or the same file);
- targets must stay inside the root folder unless --allow-outside is given.
External links (http:, https:, mailto:, ...) are counted but never fetched.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

INLINE = re.compile(r"(!?)\[(?:[^\[\]\\]|\\.|\[[^\[\]]*\])*\]"          # [text] or ![alt]
                    r"\(\s*(<[^>]*>|[^\s)]+)"                                # (target
                    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")          #  "optional title")
REFDEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
HTML_ID = re.compile(r"<[a-zA-Z][^>]*\s(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
MD_SUFFIXES = {".md", ".markdown", ".mdown"}


def github_slug(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)      # links -> their text
    text = re.sub(r"<[^>]+>", "", text)                           # inline HTML
    text = text.strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in ("L", "N") or cat == "Mn":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def strip_code(lines: list[str], inline: bool = True) -> list[str]:
    """Blank out fenced and indented code blocks (and inline code spans), keeping line numbers."""
    out, fence = [], None
    for line in lines:
        match = FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if match:
            fence = match.group(1)
            out.append("")
            continue
        if line.startswith("    ") and (not out or not out[-1].strip()):
            out.append("")  # indented code block after a blank line
            continue
        out.append(re.sub(r"(`+)(?:(?!\1).)+?\1", "", line) if inline else line)
    return out


class Anchors:
    def __init__(self) -> None:
        self.cache: dict[Path, set[str]] = {}

    def of(self, path: Path) -> set[str]:
        if path not in self.cache:
            # Inline code stays: GitHub keeps its text in heading slugs.
            lines = strip_code(path.read_text(encoding="utf-8", errors="replace").splitlines(), inline=False)
            anchors: set[str] = set()
            counts: dict[str, int] = {}
            for i, line in enumerate(lines):
                text = None
                heading = HEADING.match(line)
                if heading:
                    text = heading.group(2)
                elif i > 0 and SETEXT.match(line) and lines[i - 1].strip() and not HEADING.match(lines[i - 1]) \
                        and not lines[i - 1].lstrip().startswith(("-", "*", "+", ">", "|")):
                    text = lines[i - 1].strip()
                if text is not None:
                    slug = github_slug(text)
                    n = counts.get(slug, 0)
                    counts[slug] = n + 1
                    anchors.add(slug if n == 0 else f"{slug}-{n}")
                anchors.update(HTML_ID.findall(line))
            self.cache[path] = anchors
        return self.cache[path]


def find_markdown(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(p for p in path.rglob("*") if p.suffix.lower() in MD_SUFFIXES and p.is_file()
                         and not any(part in (".git", "node_modules") for part in p.parts))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(str(path))
    return sorted(set(files))


def links_in(path: Path) -> list[tuple[int, str]]:
    lines = strip_code(path.read_text(encoding="utf-8", errors="replace").splitlines())
    found = []
    for number, line in enumerate(lines, start=1):
        for match in INLINE.finditer(line):
            found.append((number, match.group(2)))
        ref = REFDEF.match(line)
        if ref and not ref.group(1).startswith("^"):  # skip footnote definitions
            found.append((number, ref.group(2)))
    return found


def check(files: list[Path], root: Path, allow_outside: bool) -> tuple[list[dict], int, int]:
    anchors = Anchors()
    problems: list[dict] = []
    external = checked = 0
    root = root.resolve()
    for md in files:
        for number, raw in links_in(md):
            target = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
            where = {"file": md.as_posix(), "line": number, "link": target}
            if SCHEME.match(target) or target.startswith("//"):
                external += 1
                continue
            checked += 1
            path_part, _, fragment = target.partition("#")
            path_part = unquote(path_part.split("?", 1)[0])
            if path_part.startswith("/"):
                dest = (root / path_part.lstrip("/")).resolve()
            elif path_part:
                dest = (md.parent / path_part).resolve()
            else:
                dest = md.resolve()
            if not allow_outside and dest != root and root not in dest.parents:
                problems.append({**where, "problem": "points outside the root folder"})
                continue
            if not dest.exists():
                problems.append({**where, "problem": "target does not exist"})
                continue
            if fragment:
                fragment = unquote(fragment)
                if dest.is_dir() or dest.suffix.lower() not in MD_SUFFIXES:
                    continue  # anchors into code or other files (e.g. #L10) are not checked
                if fragment not in anchors.of(dest) and fragment.lower() not in anchors.of(dest):
                    name = "this file" if dest == md.resolve() else dest.name
                    problems.append({**where, "problem": f"anchor #{fragment} not found in {name}"})
    return problems, checked, external


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check relative links and #anchors in Markdown files (offline). Exit 1 when any is broken.")
    parser.add_argument("paths", nargs="*", type=Path, default=[Path(".")],
                        help="Markdown files or folders to scan (default: .)")
    parser.add_argument("--root", type=Path,
                        help="folder that '/'-links resolve against and links must stay inside "
                             "(default: the single folder given, else the current folder)")
    parser.add_argument("--allow-outside", action="store_true", help="allow links that leave the root folder")
    parser.add_argument("--json", action="store_true", help="print problems as JSON")
    args = parser.parse_args(argv)

    root = args.root or (args.paths[0] if len(args.paths) == 1 and args.paths[0].is_dir() else Path("."))
    if not root.is_dir():
        print(f"error: root folder not found: {root}", file=sys.stderr)
        return 2
    try:
        files = find_markdown(args.paths)
    except FileNotFoundError as exc:
        print(f"error: path not found: {exc}", file=sys.stderr)
        return 2
    problems, checked, external = check(files, root, args.allow_outside)
    if args.json:
        print(json.dumps({"files": len(files), "checked": checked, "external_skipped": external,
                          "problems": problems}, indent=2, sort_keys=True))
    else:
        for p in problems:
            print(f"{p['file']}:{p['line']}: {p['link']}: {p['problem']}")
        print(f"{len(files)} file(s), {checked} local link(s) checked, {external} external skipped, "
              f"{len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
