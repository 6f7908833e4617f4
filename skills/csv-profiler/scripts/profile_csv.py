#!/usr/bin/env python3
"""Profile a CSV file: per-column type, null count, distinct count, min and max.

Standard library only. Output is deterministic so it can be diffed between runs.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

NULL_TOKENS = {"", "na", "n/a", "nan", "null", "none", "nil", "-"}
BOOL_TOKENS = {"true", "false", "yes", "no", "t", "f", "y", "n"}
INT_RE = re.compile(r"^[+-]?\d+$")
FLOAT_RE = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")

# Order matters: the first kind that matches every non-null value wins.
KINDS = ("integer", "float", "boolean", "date", "datetime")


def die(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def kind_of(value: str) -> str:
    if INT_RE.match(value):
        return "integer"
    if FLOAT_RE.match(value):
        return "float"
    if value.lower() in BOOL_TOKENS:
        return "boolean"
    if DATE_RE.match(value):
        return "date"
    if DATETIME_RE.match(value):
        return "datetime"
    return "string"


def column_type(kinds: set[str]) -> str:
    if not kinds:
        return "empty"
    if len(kinds) == 1:
        return next(iter(kinds))
    if kinds == {"integer", "float"}:
        return "float"
    if kinds == {"date", "datetime"}:
        return "datetime"
    return "string"


def fmt_number(x: float) -> str:
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


class Column:
    def __init__(self, name: str) -> None:
        self.name = name
        self.nulls = 0
        self.values: dict[str, int] = {}
        self.kinds: set[str] = set()
        self.max_len = 0

    def add(self, raw: str) -> None:
        value = raw.strip()
        if value.lower() in NULL_TOKENS:
            self.nulls += 1
            return
        self.values[value] = self.values.get(value, 0) + 1
        self.kinds.add(kind_of(value))
        self.max_len = max(self.max_len, len(value))

    def summary(self, rows: int, top: int) -> dict:
        ctype = column_type(self.kinds)
        non_null = rows - self.nulls
        result: dict = {
            "name": self.name,
            "type": ctype,
            "non_null": non_null,
            "nulls": self.nulls,
            "null_pct": round(100.0 * self.nulls / rows, 1) if rows else 0.0,
            "distinct": len(self.values),
            "min": None,
            "max": None,
            "mean": None,
            "max_length": self.max_len,
        }
        if self.values:
            if ctype in ("integer", "float"):
                numbers = [float(v) for v in self.values]
                weighted = sum(float(v) * n for v, n in self.values.items())
                result["min"] = fmt_number(min(numbers))
                result["max"] = fmt_number(max(numbers))
                result["mean"] = fmt_number(round(weighted / non_null, 4))
            else:
                # ISO dates and plain strings both sort correctly as text.
                result["min"] = min(self.values)
                result["max"] = max(self.values)
        ranked = sorted(self.values.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        result["top_values"] = [{"value": v, "count": n} for v, n in ranked]
        result["unique"] = bool(self.values) and len(self.values) == non_null and self.nulls == 0
        return result


def sniff_delimiter(sample: str) -> str:
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def profile(path: Path, delimiter: str | None, encoding: str, top: int, max_rows: int = 0) -> dict:
    try:
        text = path.read_text(encoding=encoding)
    except FileNotFoundError:
        die(f"file not found: {path}")
    except IsADirectoryError:
        die(f"{path} is a directory, not a CSV file")
    except UnicodeDecodeError as exc:
        die(f"{path} is not valid {encoding} ({exc.reason} at byte {exc.start}); try --encoding latin-1")
    if not text.strip():
        die(f"{path} is empty")
    delim = delimiter or sniff_delimiter(text[:8192])
    reader = csv.reader(text.splitlines(), delimiter=delim)
    try:
        header = next(reader)
    except csv.Error as exc:
        die(f"cannot parse {path}: {exc}")
    names = [h.strip() or f"column_{i + 1}" for i, h in enumerate(header)]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    columns = [Column(n) for n in names]
    rows = 0
    ragged: list[dict] = []
    try:
        for record in reader:
            if not record:
                continue  # blank line
            if max_rows and rows >= max_rows:
                break
            rows += 1
            if len(record) != len(columns):
                ragged.append({"line": reader.line_num, "fields": len(record)})
            for col, value in zip(columns, record):
                col.add(value)
            for col in columns[len(record):]:
                col.add("")  # missing trailing fields count as nulls
    except csv.Error as exc:
        die(f"cannot parse {path} near line {reader.line_num}: {exc}")
    return {
        "file": str(path),
        "delimiter": delim,
        "rows": rows,
        "truncated": bool(max_rows) and rows >= max_rows,
        "columns": [c.summary(rows, top) for c in columns],
        "duplicate_headers": duplicates,
        "ragged_rows": ragged,
    }


def render_text(report: dict, max_ragged: int = 10) -> str:
    out = [f"file: {report['file']}",
           f"rows: {report['rows']}  columns: {len(report['columns'])}  delimiter: {report['delimiter']!r}",
           ""]
    headers = ["column", "type", "nulls", "null%", "distinct", "min", "max"]
    table = [headers]
    for c in report["columns"]:
        table.append([c["name"], c["type"], str(c["nulls"]), f"{c['null_pct']:.1f}", str(c["distinct"]),
                      "" if c["min"] is None else str(c["min"])[:24],
                      "" if c["max"] is None else str(c["max"])[:24]])
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for row in table:
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    notes = []
    for c in report["columns"]:
        if c["type"] == "empty":
            notes.append(f"column '{c['name']}' has no values")
        elif c["unique"] and report["rows"] > 1:
            notes.append(f"column '{c['name']}' is unique (candidate key)")
        elif c["distinct"] == 1 and report["rows"] > 1:
            notes.append(f"column '{c['name']}' has a single distinct value")
    for name in report["duplicate_headers"]:
        notes.append(f"header '{name}' appears more than once")
    if report["truncated"]:
        notes.append(f"stopped after --max-rows {report['rows']}; figures describe a sample")
    if report["ragged_rows"]:
        shown = ", ".join(f"line {r['line']} ({r['fields']} fields)" for r in report["ragged_rows"][:max_ragged])
        more = len(report["ragged_rows"]) - max_ragged
        notes.append(f"{len(report['ragged_rows'])} row(s) with wrong field count: {shown}"
                     + (f" and {more} more" if more > 0 else ""))
    if notes:
        out.append("")
        out.extend(f"note: {n}" for n in notes)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Profile a CSV file: column types, nulls, distinct counts, min/max.")
    parser.add_argument("csv", type=Path, help="path to the CSV file")
    parser.add_argument("-d", "--delimiter", help="field delimiter (default: sniffed from the first 8 KiB)")
    parser.add_argument("--encoding", default="utf-8-sig", help="text encoding (default: utf-8-sig)")
    parser.add_argument("--top", type=int, default=3, help="most common values to keep per column in --json")
    parser.add_argument("--max-rows", type=int, default=0, metavar="N",
                        help="profile only the first N data rows (default: all)")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    args = parser.parse_args(argv)
    if args.delimiter is not None and len(args.delimiter) != 1:
        parser.error("--delimiter must be a single character (use $'\\t' for tab)")
    if args.max_rows < 0:
        parser.error("--max-rows must be zero or positive")
    report = profile(args.csv, args.delimiter, args.encoding, max(args.top, 0), args.max_rows)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print(render_text(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
