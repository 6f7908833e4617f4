"""Tests for skills/docstring-style/scripts/check_docstrings.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "docstring-style" / "scripts" / "check_docstrings.py"

SHAPES = '''"""Geometry helpers."""
import math


class Circle:
    """A circle with a radius."""

    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return math.pi * self.radius ** 2

    def scale(self, factor, *, inplace=False):
        """Scale the circle.

        Args:
            factor (float): Multiplier for the radius.
            in_place: Modify this circle instead of returning a new one.

        Returns:
            Circle: The scaled circle.
        """
        return Circle(self.radius * factor)


def distance(a, b):
    """Return the distance between two points.

    Longer explanation here.
    """
    def helper():
        pass
    return math.dist(a, b)


def _private():
    pass


def describe(shape, verbose=False):
    """Describe a shape.

    Args:
        shape: The shape.
        verbose: Include details.
    """
    return str(shape)
'''

STYLES = '''"""Docstring styles."""


def numpy_style(x, y, *args, **kwargs):
    """Add numbers.

    Parameters
    ----------
    x, y : int
        Operands.
    *args
        More.

    Returns
    -------
    int
    """
    return x + y


def sphinx_style(path, mode="r"):
    """Open a file.

    :param str path: File to open.
    :param mode: Mode.
    :returns: the handle
    """
    return open(path, mode)
'''


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, cwd=cwd)


def make_package(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "shapes.py").write_text(SHAPES, encoding="utf-8")
    (root / "pkg" / "styles.py").write_text(STYLES, encoding="utf-8")


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "docstring coverage" in result.stdout


def test_reports_missing_docstrings_and_arg_mismatches(tmp_path):
    make_package(tmp_path)
    result = run("pkg", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "pkg/shapes.py:11: [missing-docstring] method 'area' has no docstring",
        "pkg/shapes.py:14: [undocumented-arg] method 'scale': parameter 'inplace' is not documented",
        "pkg/shapes.py:14: [unknown-arg] method 'scale': docstring documents 'in_place', which is not a parameter",
        "pkg/shapes.py:27: [no-args-section] function 'distance' has parameters (a, b) but no Args/Parameters section",
        "pkg/styles.py:4: [undocumented-arg] function 'numpy_style': parameter 'kwargs' is not documented",
        "2 file(s), 8/9 documented (88.9%), 5 problem(s)",
    ]


def test_check_returns_private_and_json(tmp_path):
    make_package(tmp_path)
    result = run("pkg/shapes.py", "--check-returns", "--include-private", "--json", cwd=tmp_path)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert (data["objects"], data["documented"], data["coverage"]) == (7, 5, 71.4)
    assert [(p["line"], p["code"]) for p in data["problems"]] == [
        (11, "missing-docstring"), (14, "undocumented-arg"), (14, "unknown-arg"),
        (27, "no-args-section"), (27, "no-returns-section"), (37, "missing-docstring"),
        (41, "no-returns-section")]


def test_init_is_checked_only_when_documented(tmp_path):
    source = tmp_path / "box.py"
    source.write_text('"""Boxes."""\n\n\nclass Box:\n    """A box."""\n\n    def __init__(self, size):\n'
                      '        """Create a box.\n\n        Args:\n            width: Width.\n        """\n',
                      encoding="utf-8")
    result = run(str(source), "--json")
    data = json.loads(result.stdout)
    assert data["objects"] == 2
    assert [p["code"] for p in data["problems"]] == ["undocumented-arg", "unknown-arg"]


def test_min_coverage_and_ignore(tmp_path):
    make_package(tmp_path)
    assert run("pkg", "--min-coverage", "80", cwd=tmp_path).returncode == 0
    assert run("pkg", "--min-coverage", "90", cwd=tmp_path).returncode == 1
    result = run("pkg/styles.py", "--ignore", "undocumented-arg", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == "1 file(s), 3/3 documented (100.0%), 0 problem(s)"


def test_bad_input_exits_two(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    pass\n", encoding="utf-8")
    result = run(str(broken))
    assert result.returncode == 2
    assert "cannot parse" in result.stderr
    result = run(str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "error: path not found" in result.stderr
