#!/usr/bin/env python3
"""Check Python docstrings: coverage of public modules, classes and functions, and whether
Google-style "Args:" sections match the real parameters.

Uses the standard library `ast` module only; the code is parsed, never imported or run.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from pathlib import Path

SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".tox", ".eggs"}
SECTION_RE = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Attributes|"
                        r"Examples?|Notes?|See Also|Warnings?|Todo|References)\s*:\s*$")
ARG_LINE_RE = re.compile(r"^\s*\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:")
RETURNS_RE = re.compile(r"^\s*(Returns?|Yields?)\s*(:|\n\s*-{3,})|:returns?:|:rtype:|:yields?:", re.M)
NUMPY_LINE_RE = re.compile(r"^\s*(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")


def is_public(name: str) -> bool:
    return not name.startswith("_")


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def documented_args(doc: str) -> list[str] | None:
    """Parameter names a docstring documents, or None when it has no parameter section.

    Understands Google style (``Args:``), NumPy style (``Parameters`` underlined with dashes)
    and Sphinx/reST fields (``:param name:``).
    """
    sphinx = re.findall(r"^\s*:param\s+(?:[^:]*\s)?\*{0,2}([A-Za-z_]\w*)\s*:", doc, re.M)
    if sphinx:
        return sphinx
    lines = doc.expandtabs().splitlines()
    names: list[str] = []
    inside = False
    numpy = False
    base_indent = None
    found = False
    for i, line in enumerate(lines):
        section = SECTION_RE.match(line)
        underlined = i + 1 < len(lines) and re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]) is not None
        if section or (underlined and line.strip()):
            title = section.group(1) if section else line.strip()
            inside = title in ("Args", "Arguments", "Parameters", "Params",
                               "Other Parameters", "Keyword Arguments")
            numpy = underlined and not section
            found = found or inside
            base_indent = None
            continue
        if not inside or not line.strip() or re.fullmatch(r"\s*-{3,}\s*", line):
            continue
        indent = len(line) - len(line.lstrip())
        if base_indent is None:
            base_indent = indent
        if indent < base_indent:
            inside = False
            continue
        if indent == base_indent:
            pattern = NUMPY_LINE_RE if numpy else ARG_LINE_RE
            match = pattern.match(line)
            if match:
                names.extend(n.strip().lstrip("*") for n in match.group(1).split(","))
    return names if found else None


def real_args(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> list[str]:
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args]
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if in_class and not is_static and names and names[0] in ("self", "cls"):
        names = names[1:]
    if args.vararg:
        names.append(args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def returns_value(node: ast.AST) -> bool:
    for child in ast.walk(node):
        if child is not node and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(child, ast.Return) and child.value is not None and not (
                isinstance(child.value, ast.Constant) and child.value.value is None):
            return True
    return False


class Checker(ast.NodeVisitor):
    def __init__(self, path: str, include_private: bool, check_returns: bool) -> None:
        self.path = path
        self.include_private = include_private
        self.check_returns = check_returns
        self.problems: list[dict] = []
        self.total = 0
        self.documented = 0
        self.stack: list[ast.AST] = []

    def add(self, line: int, code: str, message: str) -> None:
        self.problems.append({"file": self.path, "line": line, "code": code, "message": message})

    def count(self, node: ast.AST, kind: str, name: str, line: int) -> str | None:
        doc = ast.get_docstring(node)
        self.total += 1
        if doc:
            self.documented += 1
        else:
            self.add(line, "missing-docstring", f"{kind} '{name}' has no docstring")
        return doc

    def visit_Module(self, node: ast.Module) -> None:
        self.count(node, "module", Path(self.path).stem, 1)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if self.wanted(node.name):
            self.count(node, "class", node.name, node.lineno)
            self.stack.append(node)
            self.generic_visit(node)
            self.stack.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        in_class = bool(self.stack) and isinstance(self.stack[-1], ast.ClassDef)
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in self.stack):
            return  # nested helpers are implementation details
        is_overload = any(isinstance(d, ast.Name) and d.id == "overload" or
                          isinstance(d, ast.Attribute) and d.attr in ("overload", "setter", "deleter")
                          for d in node.decorator_list)
        if not self.wanted(node.name) or is_overload:
            return
        kind = "method" if in_class else "function"
        if is_dunder(node.name):
            # __init__ and other special methods may be documented by the class docstring or the
            # data model: check their parameter sections only when they have a docstring.
            doc = ast.get_docstring(node)
        else:
            doc = self.count(node, kind, node.name, node.lineno)
        if doc:
            listed = documented_args(doc)
            actual = real_args(node, in_class)
            if listed is not None:
                for name in actual:
                    if name not in listed:
                        self.add(node.lineno, "undocumented-arg", f"{kind} '{node.name}': parameter '{name}' "
                                 "is not documented")
                for name in listed:
                    if name not in actual:
                        self.add(node.lineno, "unknown-arg", f"{kind} '{node.name}': docstring documents "
                                 f"'{name}', which is not a parameter")
            elif actual and len(doc.splitlines()) > 1 and node.name != "__init__":
                self.add(node.lineno, "no-args-section", f"{kind} '{node.name}' has parameters "
                         f"({', '.join(actual)}) but no Args/Parameters section")
            if self.check_returns and returns_value(node) and not RETURNS_RE.search(doc):
                self.add(node.lineno, "no-returns-section", f"{kind} '{node.name}' returns a value but has "
                         "no Returns section")
        self.stack.append(node)
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def wanted(self, name: str) -> bool:
        return self.include_private or is_public(name) or is_dunder(name)


def python_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                files += [Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py")]
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(str(path))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Check docstring coverage of public Python code and that Google-style Args sections "
                    "match the real parameters. Exit 1 on problems or when coverage is below --min-coverage.")
    parser.add_argument("paths", nargs="+", type=Path, help="Python files or folders")
    parser.add_argument("--include-private", action="store_true", help="also check _private names")
    parser.add_argument("--check-returns", action="store_true",
                        help="require a Returns/Yields section when a documented function returns a value")
    parser.add_argument("--ignore", action="append", default=[], metavar="CODE",
                        choices=["missing-docstring", "undocumented-arg", "unknown-arg", "no-args-section",
                                 "no-returns-section"], help="problem code to skip (repeatable)")
    parser.add_argument("--min-coverage", type=float, metavar="PCT",
                        help="fail only when coverage is below PCT; other problems are still listed")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args(argv)

    try:
        files = python_files(args.paths)
    except FileNotFoundError as exc:
        print(f"error: path not found: {exc}", file=sys.stderr)
        return 2
    problems: list[dict] = []
    total = documented = 0
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as exc:
            print(f"error: {path}:{exc.lineno}: cannot parse: {exc.msg}", file=sys.stderr)
            return 2
        except UnicodeDecodeError as exc:
            print(f"error: {path} is not UTF-8: {exc.reason}", file=sys.stderr)
            return 2
        checker = Checker(path.as_posix(), args.include_private, args.check_returns)
        checker.visit(tree)
        problems += [p for p in checker.problems if p["code"] not in args.ignore]
        total += checker.total
        documented += checker.documented
    coverage = round(100.0 * documented / total, 1) if total else 100.0
    problems.sort(key=lambda p: (p["file"], p["line"], p["code"]))
    if args.json:
        print(json.dumps({"files": len(files), "objects": total, "documented": documented, "coverage": coverage,
                          "problems": problems}, indent=2, sort_keys=True))
    else:
        for p in problems:
            print(f"{p['file']}:{p['line']}: [{p['code']}] {p['message']}")
        print(f"{len(files)} file(s), {documented}/{total} documented ({coverage}%), {len(problems)} problem(s)")
    if args.min_coverage is not None:
        return 1 if coverage < args.min_coverage else 0
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
