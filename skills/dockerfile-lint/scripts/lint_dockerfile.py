#!/usr/bin/env python3
"""Lint a Dockerfile for common correctness, size and security problems (offline, stdlib only).

Rules (id: severity):
  from-latest: error        FROM image without a tag, or with :latest (builds are not reproducible)
  root-user: error          final stage never switches to a non-root USER (or switches back to root)
  apt-no-clean: warning     apt-get install without removing /var/lib/apt/lists in the same RUN
  apt-no-yes: error         apt-get install without -y (the build waits for input and fails)
  apt-no-recommends: warning apt-get install without --no-install-recommends
  apt-update-alone: warning  RUN apt-get update in its own layer (stale cache on later installs)
  apk-no-cache: warning     apk add without --no-cache
  pip-no-cache: warning     pip install without --no-cache-dir
  add-instead-of-copy: warning ADD for local files (use COPY; ADD also unpacks archives and fetches URLs)
  curl-pipe-shell: warning  curl/wget output piped straight into a shell
  cd-in-run: warning        RUN cd ... (use WORKDIR)
  sudo: warning             sudo inside RUN (the build already runs as root)
  secret-in-env: error      ENV/ARG that sets a password, token, secret or key
  maintainer: warning       deprecated MAINTAINER instruction (use a LABEL)
  shell-form-cmd: warning   CMD/ENTRYPOINT in shell form (signals are not delivered to the process)
Suppress a rule for the next instruction with a comment: `# dockerfile-lint ignore=rule-id[,rule-id]`.
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

SEVERITY = {
    "from-latest": "error", "root-user": "error", "apt-no-clean": "warning", "apt-no-yes": "error",
    "apt-no-recommends": "warning", "apt-update-alone": "warning", "apk-no-cache": "warning",
    "pip-no-cache": "warning", "add-instead-of-copy": "warning", "curl-pipe-shell": "warning",
    "cd-in-run": "warning", "sudo": "warning", "secret-in-env": "error", "maintainer": "warning",
    "shell-form-cmd": "warning",
}
SECRET_NAME = re.compile(r"(?i)(passw(or)?d|secret|token|api[_-]?key|private[_-]?key|access[_-]?key|credential)")
IGNORE_RE = re.compile(r"#\s*dockerfile-lint\s+ignore=([\w,-]+)")


def instructions(text: str) -> list[dict]:
    """Split a Dockerfile into instructions, joining continuation lines and keeping line numbers."""
    result: list[dict] = []
    pending_ignore: set[str] = set()
    escape = "\\"
    buffer, start = "", 0
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        directive = re.match(r"#\s*escape\s*=\s*(\S)", stripped)
        if directive and not result and not buffer:
            escape = directive.group(1)
            continue
        if not buffer and stripped.startswith("#"):
            ignore = IGNORE_RE.search(stripped)
            if ignore:
                pending_ignore |= set(ignore.group(1).split(","))
            continue
        if buffer and (stripped.startswith("#") or not stripped):
            continue  # comments and blank lines inside a continued instruction
        if not buffer:
            if not stripped:
                continue
            start = number
        if stripped.endswith(escape):
            buffer += stripped[:-1] + " "
            continue
        buffer += stripped
        keyword, _, args = buffer.partition(" ")
        result.append({"line": start, "keyword": keyword.upper(), "args": args.strip(), "ignore": pending_ignore})
        pending_ignore = set()
        buffer = ""
    if buffer:
        keyword, _, args = buffer.partition(" ")
        result.append({"line": start, "keyword": keyword.upper(), "args": args.strip(), "ignore": pending_ignore})
    return result


def split_commands(script: str) -> list[str]:
    return [c.strip() for c in re.split(r"&&|\|\||;", script) if c.strip()]


def lint(text: str) -> list[dict]:
    findings: list[dict] = []
    items = instructions(text)

    def add(item: dict, rule: str, message: str) -> None:
        if rule not in item["ignore"]:
            findings.append({"line": item["line"], "rule": rule, "severity": SEVERITY[rule], "message": message})

    stages: set[str] = set()
    last_from = None
    user_in_stage: tuple[dict, str] | None = None
    for item in items:
        kw, args = item["keyword"], item["args"]
        if kw == "FROM":
            tokens = [t for t in args.split() if not t.startswith("--")]
            image = tokens[0] if tokens else ""
            if len(tokens) >= 3 and tokens[1].lower() == "as":
                stages.add(tokens[2].lower())
            last_from, user_in_stage = item, None
            name_part = image.rsplit("/", 1)[-1]
            if image.lower() in stages or image == "scratch" or "@sha256:" in image or image.startswith("$"):
                continue
            if ":" not in name_part:
                add(item, "from-latest", f"'{image}' has no tag, so it means :latest; pin a version tag or digest")
            elif name_part.endswith(":latest"):
                add(item, "from-latest", f"'{image}' uses :latest; pin a version tag or digest")
        elif kw == "USER":
            user_in_stage = (item, args.split(":")[0].strip())
        elif kw == "RUN":
            script = args
            if script.startswith("["):
                try:
                    script = " ".join(json.loads(script))
                except json.JSONDecodeError:
                    pass
            commands = split_commands(script)
            for command in commands:
                words = command.split()
                if not words:
                    continue
                if words[0] == "sudo":
                    add(item, "sudo", "sudo is unnecessary in RUN (use USER to change users) and hides privileges")
                    words = words[1:]
                    if not words:
                        continue
                if words[:1] == ["cd"]:
                    add(item, "cd-in-run", "use WORKDIR instead of 'cd' so later instructions run in the right folder")
                if words[:2] in (["apt-get", "install"], ["apt", "install"]):
                    if not any(w in ("-y", "--yes", "-qy", "-yq", "--assume-yes") or re.fullmatch(r"-\w*y\w*", w)
                               for w in words[2:]):
                        add(item, "apt-no-yes", "apt-get install needs -y, or the build stops at the prompt")
                    if "--no-install-recommends" not in words:
                        add(item, "apt-no-recommends", "add --no-install-recommends to avoid pulling extra packages")
                    if "/var/lib/apt/lists" not in script:
                        add(item, "apt-no-clean", "remove the package lists in the same RUN: "
                            "&& rm -rf /var/lib/apt/lists/*")
                if words[:2] == ["apk", "add"] and "--no-cache" not in words:
                    add(item, "apk-no-cache", "use 'apk add --no-cache' to keep the index out of the image")
                is_pip = words[0] in ("pip", "pip3") or words[1:3] == ["-m", "pip"]
                if is_pip and "install" in words and "--no-cache-dir" not in words:
                    add(item, "pip-no-cache", "add --no-cache-dir to pip install (or set PIP_NO_CACHE_DIR=1)")
            if commands and all(c.split()[:2] in (["apt-get", "update"], ["apt", "update"]) for c in commands):
                add(item, "apt-update-alone", "combine 'apt-get update' with 'apt-get install' in one RUN")
            if re.search(r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b", script):
                add(item, "curl-pipe-shell", "piping a download into a shell runs unverified code; download, "
                    "verify a checksum, then run")
        elif kw == "ADD":
            parts = [p for p in args.split() if not p.startswith("--")]
            sources = parts[:-1]
            if sources and all(not re.match(r"^(https?|git)://|\.git$", s) and
                               not re.search(r"\.(tar|tar\.gz|tgz|tar\.bz2|tar\.xz|txz)$", s) for s in sources):
                add(item, "add-instead-of-copy", "use COPY for local files; ADD is only needed for archives and URLs")
        elif kw in ("ENV", "ARG"):
            for name, value in env_pairs(args, kw):
                if SECRET_NAME.search(name) and value not in ("", None) and not value.startswith("$"):
                    add(item, "secret-in-env", f"{kw} {name} bakes a secret into the image layers; "
                        "use a build secret (RUN --mount=type=secret) or a runtime variable")
        elif kw == "MAINTAINER":
            add(item, "maintainer", "MAINTAINER is deprecated; use LABEL org.opencontainers.image.authors=...")
        elif kw in ("CMD", "ENTRYPOINT") and args and not args.startswith("["):
            add(item, "shell-form-cmd", f"{kw} in shell form runs under /bin/sh -c, so the process does not get "
                "SIGTERM; use the JSON form: " + kw + ' ["executable", "arg"]')

    if last_from is not None:
        if user_in_stage is None:
            add(last_from, "root-user", "the final stage runs as root; add 'USER <non-root user>' before CMD")
        elif user_in_stage[1] in ("root", "0"):
            add(user_in_stage[0], "root-user", "the final stage switches back to root; switch to a non-root user")
    findings.sort(key=lambda f: (f["line"], f["rule"]))
    return findings


def env_pairs(args: str, keyword: str) -> list[tuple[str, str | None]]:
    try:
        tokens = shlex.split(args)
    except ValueError:
        tokens = args.split()
    if not tokens:
        return []
    if "=" not in tokens[0]:
        if keyword == "ENV" and len(tokens) >= 2:  # legacy form: ENV NAME value with spaces
            return [(tokens[0], " ".join(tokens[1:]))]
        return [(tokens[0], None)]
    pairs = []
    for token in tokens:
        name, sep, value = token.partition("=")
        pairs.append((name, value if sep else None))
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Lint Dockerfiles for unpinned images, root user, apt/pip cache, ADD vs COPY, secrets and more.",
        epilog="Rules: " + ", ".join(sorted(SEVERITY)))
    parser.add_argument("dockerfiles", nargs="*", default=["Dockerfile"], help="files to lint (default: Dockerfile)")
    parser.add_argument("--ignore", action="append", default=[], metavar="RULE", help="rule to skip (repeatable)")
    parser.add_argument("--strict", action="store_true", help="warnings also cause exit 1")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.ignore) - set(SEVERITY))
    if unknown:
        parser.error(f"unknown rule(s): {', '.join(unknown)}")

    all_findings = []
    for name in args.dockerfiles:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            print(f"error: Dockerfile not found: {name}", file=sys.stderr)
            return 2
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            print(f"error: cannot read {name}: {exc}", file=sys.stderr)
            return 2
        if not any(i["keyword"] == "FROM" for i in instructions(text)):
            print(f"error: {name} has no FROM instruction; is it a Dockerfile?", file=sys.stderr)
            return 2
        for finding in lint(text):
            if finding["rule"] not in args.ignore:
                all_findings.append({"file": name, **finding})
    errors = sum(1 for f in all_findings if f["severity"] == "error")
    warnings = len(all_findings) - errors
    if args.json:
        print(json.dumps({"findings": all_findings, "errors": errors, "warnings": warnings}, indent=2, sort_keys=True))
    else:
        for f in all_findings:
            print(f"{f['file']}:{f['line']}: {f['severity']}: [{f['rule']}] {f['message']}")
        print(f"{errors} error(s), {warnings} warning(s)")
    return 1 if errors or (args.strict and warnings) else 0


if __name__ == "__main__":
    sys.exit(main())
