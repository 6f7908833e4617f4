#!/usr/bin/env python3
"""Lint commit messages against Conventional Commits plus common git message conventions.

Checks one message (file or stdin, e.g. from a commit-msg hook) or every commit in a
git revision range. Errors fail the run; warnings fail only with --strict.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

DEFAULT_TYPES = ["build", "chore", "ci", "docs", "feat", "fix", "perf", "refactor", "revert", "style", "test"]
HEADER_RE = re.compile(r"^(?P<type>[^\s(!:]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?"
                       r"(?P<colon>:)?(?P<space> ?)(?P<subject>.*)$")
SCISSORS = "# ------------------------ >8 ------------------------"
AUTO_GENERATED = re.compile(r"^(Merge (branch|pull request|remote-tracking branch|tag) |Revert \"|"
                            r"(fixup|squash|amend)! )")
NON_IMPERATIVE = re.compile(r"^(?:\w+ed|\w+ing|adds|fixes|updates|removes|changes|makes|creates|"
                            r"deletes|improves|implements|refactors|moves|renames)$", re.I)
IMPERATIVE_OK = {"need", "embed", "feed", "seed", "speed", "shred", "bring", "string", "ping", "ring", "spring",
                 "bed", "red", "shed", "wed", "bleed", "breed", "heed", "proceed", "succeed", "exceed"}
RULES = {
    "header-format": "error", "type-enum": "error", "type-case": "error", "scope-case": "error",
    "subject-empty": "error", "subject-space": "error", "header-max-length": "error",
    "subject-full-stop": "error", "body-leading-blank": "error", "subject-case": "warning",
    "subject-imperative": "warning", "body-max-line-length": "warning", "fixup-commit": "error",
    "breaking-footer": "error",
}


def clean(message: str) -> list[str]:
    """Mimic git's default cleanup: drop comment lines and everything below the scissors line."""
    lines = []
    for line in message.splitlines():
        if line.startswith(SCISSORS):
            break
        if line.startswith("#"):
            continue
        lines.append(line.rstrip())
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def lint(message: str, types: list[str], max_header: int, max_body: int, allow_fixup: bool) -> list[dict]:
    lines = clean(message)
    problems: list[dict] = []

    def add(rule: str, line: int, text: str) -> None:
        problems.append({"rule": rule, "severity": RULES[rule], "line": line, "message": text})

    if not lines:
        add("subject-empty", 1, "commit message is empty")
        return problems
    header = lines[0]
    if AUTO_GENERATED.match(header):
        if header.startswith(("fixup!", "squash!", "amend!")) and not allow_fixup:
            add("fixup-commit", 1, "fixup/squash commit must be squashed before merging (git rebase -i --autosquash)")
        return problems
    if len(header) > max_header:
        add("header-max-length", 1, f"header is {len(header)} characters; keep it to {max_header}")
    match = HEADER_RE.match(header)
    if not match or not match.group("colon"):
        add("header-format", 1, "header must look like 'type(scope): subject', e.g. 'fix(parser): handle empty input'")
    else:
        type_, scope, subject = match.group("type"), match.group("scope"), match.group("subject")
        if type_ != type_.lower():
            add("type-case", 1, f"type '{type_}' must be lower case")
        if type_.lower() not in types:
            add("type-enum", 1, f"type '{type_}' is not one of: {', '.join(types)}")
        if scope is not None and (not scope or scope != scope.lower() or " " in scope):
            add("scope-case", 1, f"scope '{scope}' must be a non-empty lower-case word (use '-' between words)")
        if not match.group("space") and subject:
            add("subject-space", 1, "put one space after the colon")
        subject = subject.strip()
        if not subject:
            add("subject-empty", 1, "subject after the colon is empty")
        else:
            if subject.endswith("."):
                add("subject-full-stop", 1, "subject must not end with a full stop")
            first = subject.split()[0]
            if first[0].isupper() and not first.isupper():
                add("subject-case", 1, f"start the subject in lower case ('{first[0].lower() + first[1:]}')")
            word = re.sub(r"\W+$", "", first)
            if NON_IMPERATIVE.match(word) and word.lower() not in IMPERATIVE_OK:
                add("subject-imperative", 1, f"use the imperative mood ('add', 'fix'), not '{word}'")
    if len(lines) > 1 and lines[1]:
        add("body-leading-blank", 2, "leave a blank line between the header and the body")
    for number, line in enumerate(lines[1:], start=2):
        if len(line) > max_body and not re.search(r"https?://\S{20,}", line):
            add("body-max-line-length", number, f"line is {len(line)} characters; wrap at {max_body}")
        if re.match(r"^BREAKING[- ]CHANGE\b", line, re.I) and not re.match(r"^BREAKING[- ]CHANGE: \S", line):
            add("breaking-footer", number, "write the footer as 'BREAKING CHANGE: <description>' (upper case, colon)")
    return problems


def git_messages(repo: str, rev_range: str) -> list[tuple[str, str]]:
    result = subprocess.run(["git", "-C", repo, "log", "--format=%h%x1f%B%x1e", rev_range, "--"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(fail(result.stderr.strip().removeprefix("fatal: ") or "git log failed"))
    messages = []
    for record in result.stdout.split("\x1e"):
        record = record.lstrip("\n")
        if record:
            sha, _, body = record.partition("\x1f")
            messages.append((sha, body))
    return messages


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Lint commit messages (Conventional Commits). Exit 1 on errors, 2 on bad input.")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("file", nargs="?", help="message file, e.g. .git/COMMIT_EDITMSG ('-' or omitted: stdin)")
    source.add_argument("--range", metavar="REVS", help="lint every commit in a git range, e.g. origin/main..HEAD")
    parser.add_argument("-C", "--repo", default=".", help="repository for --range (default: .)")
    parser.add_argument("--types", help="comma-separated allowed types (default: " + ",".join(DEFAULT_TYPES) + ")")
    parser.add_argument("--max-header", type=int, default=72, help="maximum header length (default 72)")
    parser.add_argument("--max-body-line", type=int, default=100, help="maximum body line length (default 100)")
    parser.add_argument("--ignore", action="append", default=[], metavar="RULE", help="rule to skip (repeatable)")
    parser.add_argument("--allow-fixup", action="store_true", help="accept fixup!/squash! commits")
    parser.add_argument("--strict", action="store_true", help="warnings also cause exit 1")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args(argv)

    unknown = sorted(set(args.ignore) - set(RULES))
    if unknown:
        parser.error(f"unknown rule(s) for --ignore: {', '.join(unknown)}; known: {', '.join(sorted(RULES))}")
    types = [t.strip() for t in args.types.split(",") if t.strip()] if args.types else DEFAULT_TYPES

    if args.range:
        messages = git_messages(args.repo, args.range)
    elif args.file in (None, "-"):
        if sys.stdin.isatty():
            parser.error("no message given: pass a file, pipe a message in, or use --range")
        messages = [("stdin", sys.stdin.read())]
    else:
        try:
            messages = [(args.file, Path(args.file).read_text(encoding="utf-8"))]
        except (OSError, UnicodeDecodeError) as exc:
            return fail(f"cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}")

    results = []
    for label, message in messages:
        problems = [p for p in lint(message, types, args.max_header, args.max_body_line, args.allow_fixup)
                    if p["rule"] not in args.ignore]
        header = (clean(message) or [""])[0]
        results.append({"source": label, "header": header, "problems": problems})
    errors = sum(1 for r in results for p in r["problems"] if p["severity"] == "error")
    warnings = sum(1 for r in results for p in r["problems"] if p["severity"] == "warning")
    if args.json:
        print(json.dumps({"results": results, "errors": errors, "warnings": warnings}, indent=2, sort_keys=True))
    else:
        for r in results:
            for p in r["problems"]:
                print(f"{r['source']}:{p['line']}: {p['severity']}: [{p['rule']}] {p['message']}")
        print(f"{len(results)} message(s) checked: {errors} error(s), {warnings} warning(s)")
    return 1 if errors or (args.strict and warnings) else 0


if __name__ == "__main__":
    sys.exit(main())
