"""ruff, configured in pyproject.toml, finds nothing in the package, the tests or the benchmarks."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO


def test_ruff_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


# Style limits (CONTRIBUTING: small functions, one concern per module); nothing is exempt.
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600


def _too_long() -> tuple[list[str], list[str]]:
    import ast

    functions, modules = [], []
    for path in sorted((REPO / "builder").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            modules.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text, rel)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    functions.append(f"{rel}:{node.lineno}: {node.name} has {length} lines")
    return functions, modules


def test_no_function_is_over_80_lines_and_no_module_over_600() -> None:
    functions, modules = _too_long()
    assert functions == [] and modules == []
