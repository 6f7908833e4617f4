#!/usr/bin/env python3
"""Build a Markdown changelog section from git history, grouping Conventional Commits by type.

Reads `git log` for a revision range (default: latest tag..HEAD), parses subjects of the form
`type(scope)!: description`, collects BREAKING CHANGE footers, and prints one release section.
Dates come from the newest commit in the range, never from the clock, so output is reproducible.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

SECTIONS = [  # (type, heading) in output order
    ("feat", "Features"),
    ("fix", "Bug Fixes"),
    ("perf", "Performance"),
    ("refactor", "Refactoring"),
    ("revert", "Reverts"),
    ("docs", "Documentation"),
    ("test", "Tests"),
    ("build", "Build System"),
    ("ci", "Continuous Integration"),
    ("style", "Style"),
    ("chore", "Chores"),
]
DEFAULT_TYPES = "feat,fix,perf,refactor,revert,docs"
HEADER_RE = re.compile(r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^()\r\n]*)\))?(?P<bang>!)?: (?P<desc>.+)$")
BREAKING_RE = re.compile(r"^BREAKING[ -]CHANGE: ?(?P<text>.*)", re.M)
REF_RE = re.compile(r"\(#(\d+)\)\s*$")
FIELD, RECORD = "\x1f", "\x1e"


class GitError(Exception):
    pass


def git(repo: str, *args: str) -> str:
    try:
        result = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH")
    if result.returncode != 0:
        message = result.stderr.strip().removeprefix("fatal: ")
        raise GitError(message or f"git {' '.join(args)} failed")
    return result.stdout


def latest_tag(repo: str, ref: str) -> str | None:
    try:
        return git(repo, "describe", "--tags", "--abbrev=0", ref).strip() or None
    except GitError:
        return None  # no tags yet: use the whole history


def read_commits(repo: str, rev_range: str) -> list[dict]:
    fmt = FIELD.join(["%H", "%h", "%cs", "%an", "%s", "%b"]) + RECORD
    out = git(repo, "log", "--no-merges", f"--format={fmt}", rev_range, "--")
    commits = []
    for record in out.split(RECORD):
        record = record.strip("\n")
        if not record:
            continue
        full, short, date, author, subject, body = (record.split(FIELD) + [""] * 6)[:6]
        commits.append({"sha": full, "short": short, "date": date, "author": author,
                        "subject": subject.strip(), "body": body.strip()})
    return commits


def classify(commit: dict) -> dict:
    match = HEADER_RE.match(commit["subject"])
    entry = dict(commit)
    if not match:
        entry.update(type=None, scope=None, description=commit["subject"], breaking=[])
        return entry
    breaking = [m.group("text").strip() for m in BREAKING_RE.finditer(commit["body"])]
    if match.group("bang") and not breaking:
        breaking = [match.group("desc").strip()]
    entry.update(type=match.group("type").lower(), scope=(match.group("scope") or "").strip() or None,
                 description=match.group("desc").strip(), breaking=breaking)
    return entry


def bullet(entry: dict, text: str | None = None, repo_url: str | None = None) -> str:
    description = text or entry["description"]
    scope = f"**{entry['scope']}:** " if entry["scope"] else ""
    sha = entry["short"]
    link = f"[{sha}]({repo_url.rstrip('/')}/commit/{entry['sha']})" if repo_url else sha
    ref = REF_RE.search(description)
    if ref and repo_url:
        description = REF_RE.sub(f"([#{ref.group(1)}]({repo_url.rstrip('/')}/pull/{ref.group(1)}))", description)
    return f"- {scope}{description} ({link})"


def render(version: str, date: str, entries: list[dict], types: list[str], include_other: bool,
           repo_url: str | None) -> str:
    lines = [f"## {version} ({date})" if date else f"## {version}", ""]
    breaking = [(e, text) for e in entries for text in e["breaking"]]
    if breaking:
        lines += ["### BREAKING CHANGES", ""]
        lines += [bullet(e, text, repo_url) for e, text in breaking]
        lines.append("")
    for type_, heading in SECTIONS:
        if type_ not in types:
            continue
        items = [e for e in entries if e["type"] == type_]
        if items:
            lines += [f"### {heading}", ""] + [bullet(e, None, repo_url) for e in items] + [""]
    known = {t for t, _ in SECTIONS}
    other = [e for e in entries if e["type"] is None or e["type"] not in known]
    if include_other and other:
        lines += ["### Other Changes", ""] + [bullet(e, e["subject"], repo_url) for e in other] + [""]
    if len(lines) == 2:
        lines += ["No notable changes.", ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build a Markdown changelog section from git log, grouping Conventional Commits by type.")
    parser.add_argument("range", nargs="?",
                        help="revision range such as v1.2.0..HEAD (default: <latest tag>..HEAD, or all history)")
    parser.add_argument("-C", "--repo", default=".", help="path to the git repository (default: .)")
    parser.add_argument("--version", dest="release", default="Unreleased", help="heading for the section")
    parser.add_argument("--date", help="date shown in the heading (default: date of the newest commit)")
    parser.add_argument("--types", default=DEFAULT_TYPES,
                        help=f"comma-separated types to list, or 'all' (default: {DEFAULT_TYPES})")
    parser.add_argument("--no-other", action="store_true", help="omit commits that are not Conventional Commits")
    parser.add_argument("--repo-url", help="https URL of the repository, to link commits and (#123) references")
    parser.add_argument("--json", action="store_true", help="print parsed commits as JSON instead of Markdown")
    args = parser.parse_args(argv)

    types = [t for t, _ in SECTIONS] if args.types == "all" else [t.strip() for t in args.types.split(",") if t]
    unknown = sorted(set(types) - {t for t, _ in SECTIONS})
    if unknown:
        parser.error(f"unknown type(s) in --types: {', '.join(unknown)}")
    try:
        git(args.repo, "rev-parse", "--git-dir")
        rev_range = args.range
        if not rev_range:
            tag = latest_tag(args.repo, "HEAD")
            rev_range = f"{tag}..HEAD" if tag else "HEAD"
        commits = read_commits(args.repo, rev_range)
    except GitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    entries = [classify(c) for c in commits]
    if args.json:
        print(json.dumps({"range": rev_range, "commits": entries}, indent=2, sort_keys=True))
        return 0
    date = args.date if args.date is not None else (commits[0]["date"] if commits else "")
    sys.stdout.write(render(args.release, date, entries, types, not args.no_other, args.repo_url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
