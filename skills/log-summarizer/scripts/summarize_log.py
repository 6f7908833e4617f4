#!/usr/bin/env python3
"""Summarise application logs: counts per level, time span, and the most frequent error messages.

Understands plain text lines with a level word (ERROR, WARN, ...), logfmt (level=error msg=...)
and JSON lines ({"level": "error", "message": ...}). Similar messages are grouped by replacing
numbers, hex ids, UUIDs, IP addresses and quoted strings with placeholders.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
ALIASES = {"WARNING": "WARN", "ERR": "ERROR", "CRITICAL": "FATAL", "CRIT": "FATAL", "PANIC": "FATAL",
           "EMERG": "FATAL", "ALERT": "FATAL", "NOTICE": "INFO", "INFORMATION": "INFO", "DBG": "DEBUG",
           "SEVERE": "ERROR", "FINE": "DEBUG", "FINER": "TRACE", "FINEST": "TRACE"}
LEVEL_WORDS = sorted(set(LEVELS) | set(ALIASES), key=len, reverse=True)
LEVEL_RE = re.compile(r"(?<![\w-])\[?(" + "|".join(LEVEL_WORDS) + r")\]?(?![\w-])", re.IGNORECASE)
LOGFMT_LEVEL_RE = re.compile(r"\b(?:level|lvl|severity)=\"?(\w+)\"?", re.IGNORECASE)
LOGFMT_MSG_RE = re.compile(r"\b(?:msg|message)=(\"(?:[^\"\\]|\\.)*\"|\S+)")
TIMESTAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
JSON_LEVEL_KEYS = ("level", "severity", "lvl", "loglevel", "log.level")
JSON_MSG_KEYS = ("message", "msg", "error", "err")
JSON_TIME_KEYS = ("timestamp", "time", "ts", "@timestamp", "date")

NORMALISERS = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I), "<hex>"),
    (re.compile(r"\"[^\"]*\"|'[^']*'"), "<str>"),
    (re.compile(r"(?<![\w<])-?\d+(?:\.\d+)?(?:ms|s|kb|mb|gb|b)?\b", re.I), "<n>"),
]


def normalise_level(word: str) -> str | None:
    upper = word.upper()
    if upper in LEVELS:
        return upper
    return ALIASES.get(upper)


def template(message: str) -> str:
    text = message.strip()
    for pattern, placeholder in NORMALISERS:
        text = pattern.sub(placeholder, text)
    return re.sub(r"\s+", " ", text)[:200]


def parse_line(line: str) -> tuple[str | None, str, str | None]:
    """Return (level, message, timestamp) for one line. level is None for continuation lines."""
    stripped = line.strip()
    if stripped.startswith("{"):
        try:
            record = json.loads(stripped)
        except json.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            level = next((normalise_level(str(record[k])) for k in JSON_LEVEL_KEYS if k in record), None)
            message = next((str(record[k]) for k in JSON_MSG_KEYS if k in record), stripped)
            stamp = next((str(record[k]) for k in JSON_TIME_KEYS if k in record), None)
            return level, message, stamp
    stamp_match = TIMESTAMP_RE.search(line)
    stamp = stamp_match.group(0) if stamp_match else None
    logfmt = LOGFMT_LEVEL_RE.search(line)
    if logfmt and normalise_level(logfmt.group(1)):
        msg = LOGFMT_MSG_RE.search(line)
        message = msg.group(1).strip('"') if msg else line
        return normalise_level(logfmt.group(1)), message, stamp
    # Only look for a level word near the start, so "retrying after error" in an INFO line stays INFO.
    head_limit = (stamp_match.end() if stamp_match else 0) + 40
    match = LEVEL_RE.search(line, 0, max(head_limit, 40))
    if not match:
        return None, stripped, stamp
    message = line[match.end():].lstrip(" :-]|\t")
    return normalise_level(match.group(1)), message, stamp


def summarise(paths: list[str], top: int, min_level: str) -> dict:
    counts = {level: 0 for level in LEVELS}
    unleveled = 0
    total = 0
    first = last = None
    groups: dict[str, dict] = {}
    threshold = LEVELS.index(min_level)
    for name in paths:
        try:
            if name == "-":
                lines = sys.stdin.read().splitlines()
            else:
                lines = Path(name).read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            raise SystemExit(fail(f"log file not found: {name}"))
        except IsADirectoryError:
            raise SystemExit(fail(f"{name} is a directory; pass log files (a shell glob works)"))
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            total += 1
            level, message, stamp = parse_line(line)
            if stamp:
                first = stamp if first is None or stamp < first else first
                last = stamp if last is None or stamp > last else last
            if level is None:
                unleveled += 1
                continue
            counts[level] += 1
            if LEVELS.index(level) >= threshold:
                key = f"{level} {template(message)}"
                group = groups.setdefault(key, {"level": level, "template": template(message), "count": 0,
                                                "first": f"{name}:{number}", "example": message.strip()[:300]})
                group["count"] += 1
    ranked = sorted(groups.values(), key=lambda g: (-g["count"], -LEVELS.index(g["level"]), g["template"]))
    return {"files": paths, "lines": total, "levels": counts, "unleveled": unleveled,
            "first_timestamp": first, "last_timestamp": last, "min_level": min_level,
            "distinct_messages": len(groups), "top": ranked[:top]}


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def render(report: dict) -> str:
    out = [f"lines: {report['lines']}  (without a level: {report['unleveled']})"]
    if report["first_timestamp"]:
        out.append(f"time span: {report['first_timestamp']} .. {report['last_timestamp']}")
    out.append("levels: " + "  ".join(f"{lvl}={n}" for lvl, n in report["levels"].items() if n) if any(
        report["levels"].values()) else "levels: none detected")
    out.append("")
    out.append(f"top {report['min_level']}+ messages ({report['distinct_messages']} distinct):")
    if not report["top"]:
        out.append("  (none)")
    for g in report["top"]:
        out.append(f"  {g['count']:>5}  {g['level']:<5}  {g['template']}")
        out.append(f"         first at {g['first']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Summarise log files: counts per level, time span and the most frequent error messages.")
    parser.add_argument("logs", nargs="+", help="log files to read ('-' for stdin)")
    parser.add_argument("--top", type=int, default=10, help="how many message groups to show (default 10)")
    parser.add_argument("--min-level", default="ERROR", type=str.upper, choices=LEVELS,
                        help="lowest level included in the top messages (default ERROR)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if args.top < 1:
        parser.error("--top must be at least 1")
    report = summarise(args.logs, args.top, args.min_level)
    print(json.dumps(report, indent=2, sort_keys=True) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
