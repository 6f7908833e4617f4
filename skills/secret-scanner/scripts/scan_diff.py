#!/usr/bin/env python3
"""Scan the added lines of a unified diff for secrets and report them as file:line.

Reads `git diff` / `git show` / `.patch` output. Only lines that a change adds are scanned,
so old secrets already in history are not re-reported (scan those separately).
Findings are redacted in the output; the full value is never printed.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

ALLOW_PRAGMA = "secret-scan: allow"
# Key headers are assembled from parts so this file does not match its own rule.
_KEY_HEADER = "-----BEGIN " + r"((?:RSA|DSA|EC|OPENSSH|PGP|ENCRYPTED) )?" + "PRIVATE KEY" + r"( BLOCK)?-----"

RULES: list[tuple[str, str, re.Pattern]] = [
    ("private-key", "private key header", re.compile(_KEY_HEADER)),
    ("aws-access-key-id", "AWS access key ID", re.compile(r"\b((?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16})\b")),
    ("aws-secret-access-key", "AWS secret access key",
     re.compile(r"(?i)aws.{0,20}secret.{0,20}?[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])")),
    ("github-token", "GitHub token", re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b")),
    ("github-fine-grained-token", "GitHub fine-grained token", re.compile(r"\b(github_pat_[A-Za-z0-9_]{50,})\b")),
    ("slack-token", "Slack token", re.compile(r"\b(xox[abprs]-[A-Za-z0-9-]{10,})\b")),
    ("stripe-live-key", "Stripe live secret key", re.compile(r"\b((?:sk|rk)_live_[A-Za-z0-9]{20,})\b")),
    ("google-api-key", "Google API key", re.compile(r"\b(AIza[0-9A-Za-z_-]{35})\b")),
    ("jwt", "JSON Web Token", re.compile(r"\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})")),
    ("url-credentials", "password in URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s:/@]{3,})@[^\s/]+")),
]
GENERIC = re.compile(
    r"(?i)\b([a-z0-9_.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|pwd|auth[_-]?key|access[_-]?key|"
    r"client[_-]?secret|private[_-]?key)[a-z0-9_.-]*)[\"']?\s*(?::=|=>|=|:)\s*[\"']([^\"'\s]{12,})[\"']")
PLACEHOLDER = re.compile(r"(?i)(example|sample|dummy|changeme|change_me|placeholder|your[_-]|xxxx|\*\*\*\*|"
                         r"<[^>]*>|\$\{|\{\{|%\(|redacted|fake|test[_-]?(?:key|token|secret))")
HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def redact(value: str) -> str:
    keep = 4 if len(value) > 12 else 2
    return value[:keep] + "*" * min(len(value) - keep, 12)


def scan_line(text: str, min_entropy: float) -> list[tuple[str, str, str]]:
    """Return (rule id, description, secret) for each finding in one added line."""
    if ALLOW_PRAGMA in text:
        return []
    found = []
    taken: list[tuple[int, int]] = []
    for rule_id, description, pattern in RULES:
        for match in pattern.finditer(text):
            secret = match.group(0) if rule_id == "private-key" else match.group(1)
            if rule_id in ("url-credentials",) and PLACEHOLDER.search(secret):
                continue
            found.append((rule_id, description, secret))
            taken.append(match.span())
    for match in GENERIC.finditer(text):
        start, end = match.span(2)
        if any(s <= start < e for s, e in taken):
            continue  # already reported by a specific rule
        secret = match.group(2)
        if PLACEHOLDER.search(secret) or PLACEHOLDER.search(match.group(0)):
            continue
        if entropy(secret) < min_entropy:
            continue
        found.append(("generic-secret", f"high-entropy value assigned to '{match.group(1)}'", secret))
    return found


def display(rule_id: str, secret: str) -> str:
    # A key header is not itself secret; show which kind of key it is.
    return secret.strip("-") if rule_id == "private-key" else redact(secret)


def scan_files(paths: list[str], min_entropy: float) -> list[dict]:
    findings = []
    for name in paths:
        data = Path(name).read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary file
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            for rule_id, description, secret in scan_line(line, min_entropy):
                findings.append({"file": name, "line": number, "rule": rule_id,
                                 "description": description, "match": display(rule_id, secret)})
    return findings


def scan_diff(lines: list[str], min_entropy: float) -> list[dict]:
    findings = []
    path = None
    new_line = 0
    in_hunk = False
    for raw in lines:
        if raw.startswith("diff --git "):
            in_hunk = False
            path = None
            continue
        if raw.startswith("+++ ") and not in_hunk:
            target = raw[4:].split("\t")[0].strip()
            path = None if target == "/dev/null" else (target[2:] if target.startswith("b/") else target)
            continue
        if raw.startswith("--- ") and not in_hunk:
            continue
        hunk = HUNK_RE.match(raw)
        if hunk:
            new_line = int(hunk.group(1))
            in_hunk = True
            continue
        if not in_hunk or path is None:
            continue
        if raw.startswith("+"):
            for rule_id, description, secret in scan_line(raw[1:], min_entropy):
                findings.append({"file": path, "line": new_line, "rule": rule_id,
                                 "description": description, "match": display(rule_id, secret)})
            new_line += 1
        elif raw.startswith(" ") or raw == "":
            new_line += 1
        elif raw.startswith("-") or raw.startswith("\\"):
            continue
        else:
            in_hunk = False  # unexpected text ends the hunk (e.g. commit message in git show)
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Scan the added lines of a unified diff for secrets (AWS keys, private keys, tokens, "
                    "high-entropy assignments). Exit 1 when anything is found.")
    parser.add_argument("inputs", nargs="*", default=["-"], metavar="DIFF",
                        help="diff file to read (default: stdin); with --files, files to scan whole")
    parser.add_argument("--files", action="store_true",
                        help="scan every line of the given files instead of the added lines of a diff")
    parser.add_argument("--min-entropy", type=float, default=3.5,
                        help="Shannon entropy (bits/char) a generic secret must reach (default 3.5)")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    args = parser.parse_args(argv)

    try:
        if args.files:
            if args.inputs == ["-"]:
                parser.error("--files needs at least one file name")
            findings = scan_files(args.inputs, args.min_entropy)
        else:
            if len(args.inputs) != 1:
                parser.error("give one diff file (or none to read stdin); use --files to scan several files")
            name = args.inputs[0]
            if name == "-":
                if sys.stdin.isatty():
                    parser.error("no diff given: pass a file or pipe one in, e.g. git diff | scan_diff.py")
                text = sys.stdin.read()
            else:
                text = Path(name).read_text(encoding="utf-8", errors="replace")
            lines = text.splitlines()
            if text.strip() and not any(HUNK_RE.match(line) for line in lines):
                print("error: input does not look like a unified diff (no @@ hunk headers found); "
                      "use --files to scan plain files", file=sys.stderr)
                return 2
            findings = scan_diff(lines, args.min_entropy)
    except FileNotFoundError as exc:
        print(f"error: file not found: {exc.filename}", file=sys.stderr)
        return 2
    except IsADirectoryError as exc:
        print(f"error: {exc.filename} is a directory; pass files (git ls-files | xargs ... --files)",
              file=sys.stderr)
        return 2

    if args.json:
        print(json.dumps({"findings": findings, "count": len(findings)}, indent=2, sort_keys=True))
    else:
        for f in findings:
            print(f"{f['file']}:{f['line']}: {f['rule']}: {f['description']} ({f['match']})")
        print(f"{len(findings)} potential secret{'s' if len(findings) != 1 else ''} found")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
