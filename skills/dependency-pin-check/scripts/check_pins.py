#!/usr/bin/env python3
"""Check that every requirement in a pip requirements file is pinned to an exact version.

Reports unpinned and range-pinned packages, VCS/URL requirements without an immutable
reference, editable installs, duplicates, missing hashes (with --require-hashes) and
extra package indexes (a dependency-confusion risk). Follows -r/-c includes.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

NAME_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")
SPEC_RE = re.compile(r"(===|==|~=|!=|<=|>=|<|>)\s*([^\s,;]+)")
HASH_RE = re.compile(r"--hash[=\s]+(\w+):(\w+)")
COMMIT_RE = re.compile(r"@([0-9a-f]{40})(?:#|$)")
SEVERITY = {"unpinned": "error", "range": "error", "wildcard": "error", "vcs-unpinned": "error",
            "url-unpinned": "error", "editable": "warning", "duplicate": "error", "missing-hash": "error",
            "extra-index": "warning", "local-path": "warning", "unparsable": "error"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def logical_lines(text: str):
    """Yield (first physical line number, logical line) joining backslash continuations."""
    buffer, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw
        if not buffer:
            start = number
        # A comment starts at '#' preceded by whitespace or at line start (URLs keep their #fragment).
        line = re.sub(r"(^|\s)#.*$", "", line)
        if line.rstrip().endswith("\\"):
            buffer += line.rstrip()[:-1] + " "
            continue
        buffer += line
        if buffer.strip():
            yield start, buffer.strip()
        buffer = ""
    if buffer.strip():
        yield start, buffer.strip()


class Checker:
    def __init__(self, require_hashes: bool, allow: set[str]) -> None:
        self.require_hashes = require_hashes
        self.allow = allow
        self.findings: list[dict] = []
        self.seen: dict[str, str] = {}
        self.visited: set[Path] = set()
        self.packages = 0

    def report(self, where: str, kind: str, package: str, detail: str) -> None:
        if canonical(package) in self.allow:
            return
        self.findings.append({"location": where, "kind": kind, "severity": SEVERITY[kind],
                              "package": package, "detail": detail})

    def check_file(self, path: Path, constraints: bool = False) -> None:
        resolved = path.resolve()
        if resolved in self.visited:
            return
        self.visited.add(resolved)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SystemExit(fail(f"requirements file not found: {path}"))
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise SystemExit(fail(f"cannot read {path}: {exc}"))
        for number, line in logical_lines(text):
            where = f"{path}:{number}"
            include = re.match(r"^(-r|--requirement|-c|--constraint)[=\s]+(\S+)", line)
            if include:
                self.check_file(path.parent / include.group(2), include.group(1) in ("-c", "--constraint"))
                continue
            if re.match(r"^--extra-index-url\b", line):
                self.report(where, "extra-index", "-", "an extra index lets a public package shadow a private one; "
                            "prefer --index-url with a proxy that serves both")
                continue
            if line.startswith("-e ") or line.startswith("--editable"):
                target = line.split(None, 1)[1] if " " in line else line
                self.report(where, "editable", target, "editable installs are not reproducible; build a wheel "
                            "or pin a commit instead")
                continue
            if line.startswith("-"):
                continue  # other pip options (--index-url, --no-binary, ...)
            self.check_requirement(where, line, constraints)

    def check_requirement(self, where: str, line: str, constraints: bool) -> None:
        hashes = HASH_RE.findall(line)
        requirement = HASH_RE.sub("", line).split(";", 1)[0].strip()
        if requirement.startswith((".", "/")) or (
                requirement.endswith((".whl", ".tar.gz", ".zip")) and "://" not in requirement):
            self.report(where, "local-path", requirement, "local paths only work on this machine")
            return
        if " @ " in requirement or "://" in requirement:
            name = requirement.split("@", 1)[0].strip() if " @ " in requirement else requirement
            url = requirement.split(" @ ", 1)[1].strip() if " @ " in requirement else requirement
            egg = re.search(r"#egg=([\w.-]+)", url)
            if egg and " @ " not in requirement:
                name = egg.group(1)
            self.packages += 1
            self.note_name(where, name)
            if url.startswith(("git+", "hg+", "svn+", "bzr+")):
                if not COMMIT_RE.search(url):
                    self.report(where, "vcs-unpinned", name, "VCS requirement must reference a full 40-character "
                                "commit hash, not a branch or tag")
            elif not hashes and not re.search(r"#(sha256|sha384|sha512)=", url):
                self.report(where, "url-unpinned", name, "URL requirement has no hash, so its content may change")
            return
        match = NAME_RE.match(requirement)
        if not match:
            self.report(where, "unparsable", requirement, "cannot parse this requirement")
            return
        name, rest = match.group(1), match.group(3)
        self.packages += 1
        self.note_name(where, name)
        specs = SPEC_RE.findall(rest)
        exact = [v for op, v in specs if op in ("==", "===")]
        if not specs:
            self.report(where, "unpinned", name, "no version specifier; pin it with ==")
        elif exact and "*" in exact[0]:
            self.report(where, "wildcard", name, f"'=={exact[0]}' matches many versions; pin one exact version")
        elif not exact:
            ops = ", ".join(op + v for op, v in specs)
            self.report(where, "range", name, f"'{ops}' allows several versions; pin one with ==")
        if self.require_hashes and not constraints and not hashes:
            self.report(where, "missing-hash", name, "no --hash=sha256:...; pip install --require-hashes will fail")

    def note_name(self, where: str, name: str) -> None:
        key = canonical(name)
        if key in self.seen:
            self.report(where, "duplicate", name, f"already listed at {self.seen[key]}")
        else:
            self.seen[key] = where


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check that pip requirements files pin every dependency to one exact version. "
                    "Exit 1 when any error-level problem is found.")
    parser.add_argument("files", nargs="+", type=Path, help="requirements files (includes are followed)")
    parser.add_argument("--require-hashes", action="store_true", help="also require --hash on every requirement")
    parser.add_argument("--allow", action="append", default=[], metavar="NAME",
                        help="package exempt from every check, e.g. a deliberately floating tool (repeatable)")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors for the exit code")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    args = parser.parse_args(argv)

    checker = Checker(args.require_hashes, {canonical(a) for a in args.allow})
    for path in args.files:
        checker.check_file(path)
    errors = sum(1 for f in checker.findings if f["severity"] == "error")
    warnings = len(checker.findings) - errors
    if args.json:
        print(json.dumps({"findings": checker.findings, "packages": checker.packages,
                          "errors": errors, "warnings": warnings}, indent=2, sort_keys=True))
    else:
        for f in checker.findings:
            print(f"{f['location']}: {f['severity']}: [{f['kind']}] {f['package']}: {f['detail']}")
        print(f"{checker.packages} requirement(s) checked: {errors} error(s), {warnings} warning(s)")
    return 1 if errors or (args.strict and warnings) else 0


if __name__ == "__main__":
    sys.exit(main())
