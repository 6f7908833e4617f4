"""Hostile SKILL.md content: whatever validation accepts must build, and validation itself stays linear.

Deep nesting is bounded by rules (SK015 in the frontmatter, SK407 in the body) so that nothing downstream,
the Markdown renderer or the JSON writer, recurses past Python's limit; the deepest accepted content is
built for real. Link scanning is timed on files at the size cap.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import REPO, write_tree
from helpers.timing import grows_linearly

from builder.cli.app import cli
from builder.core.config import Limits, load_config
from builder.core.frontmatter import MAX_NESTING
from builder.validate.body import MAX_MARKDOWN_NESTING, markdown_nesting
from builder.validate.run import validate_paths

FRONTMATTER = """\
---
name: {name}
description: Exercises the nesting limits. Use when testing skillreg build.
{extra}---
"""


def skill_md(name: str, body: str, extra: str = "") -> str:
    return FRONTMATTER.format(name=name, extra=extra) + body


def nested_hooks(levels: int) -> str:
    """A `hooks` value ``levels`` deep, alternating mappings and lists as Claude Code's hooks do."""
    value: object = {"type": "command", "command": "echo deep"}
    for level in range(levels - 1):
        outer = levels - 2 - level  # 0 for the last wrapping, which makes `hooks` a mapping of events
        value = {"PreToolUse" if outer == 0 else "hooks": value} if outer % 2 == 0 else [value]
    return yaml.safe_dump({"hooks": value}, default_flow_style=False)


def deepest_body() -> str:
    """Every way of nesting a line, each at the deepest the limit accepts."""
    deepest = MAX_MARKDOWN_NESTING
    lines = ["# Deep", "", "Follow these steps.", ""]
    lines += ["> " * deepest + "quoted", ""]
    lines += ["- " * deepest + "listed", ""]
    lines += ["1. " * deepest + "numbered", ""]
    lines += ["> - " * (deepest // 2) + "mixed", ""]
    lines += ["    " * level + "- four-space item" for level in range(deepest // 2)] + [""]
    lines += ["\t" * level + "* tab item" for level in range(deepest // 2)] + [""]
    lines += [f"{'    ' * level}* loose item\n" for level in range(deepest // 2)]
    lines += ["    " * level + "- a | b" for level in range(deepest // 2)] + [""]
    return "\n".join(lines) + "\n"


def test_every_line_of_the_deepest_body_is_at_the_limit() -> None:
    depths = [markdown_nesting(line) for line in deepest_body().split("\n")]
    assert max(depths) == MAX_MARKDOWN_NESTING


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_tree(tmp_path, {"registry.yaml": "title: Limits\nprofile: claude-code\n"})


def build(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["build", "--out", "site", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_the_deepest_accepted_content_builds(registry: Path) -> None:
    write_tree(registry, {
        "skills/deep-body/SKILL.md": skill_md("deep-body", deepest_body()),
        "skills/deep-hooks/SKILL.md": skill_md("deep-hooks", "# Hooks\n\nFollow these steps.\n",
                                               nested_hooks(MAX_NESTING)),
    })
    code, output = build()
    assert (code, output.splitlines()[-1]) == (0, "Built 2 skills into site/ (not a git repository: no provenance) "
                                                  "(2 written, 0 unchanged)")
    detail = json.loads((registry / "site/api/v1/skills/deep-hooks.json").read_text(encoding="utf-8"))
    value, depth = detail["frontmatter"]["hooks"], 1
    while "command" not in value:
        value, depth = (next(iter(value.values())) if isinstance(value, dict) else value[0]), depth + 1
    assert (depth, value) == (MAX_NESTING, {"type": "command", "command": "echo deep"})
    page = (registry / "site/skills/deep-body/index.html").read_text(encoding="utf-8")
    assert page.count("<blockquote>") >= MAX_MARKDOWN_NESTING


@pytest.mark.parametrize(("files", "expected"), [
    ({"skills/deep/SKILL.md": skill_md("deep", "# Deep\n\n" + "".join("    " * i + "- x\n" for i in range(300)))},
     "skills/deep/SKILL.md:39: error SK407 lists and block quotes nest 65 levels deep here; the limit is 64"),
    ({"skills/deep/SKILL.md": skill_md("deep", "# Deep\n\n" + "> " * 1000 + "x\n")},
     "skills/deep/SKILL.md:7: error SK407 lists and block quotes nest 1000 levels deep here; the limit is 64"),
    ({"skills/deep/SKILL.md": skill_md("deep", "# Deep\n\nx\n", "hooks:\n  PreToolUse:\n  " + "- " * 499 + "x\n")},
     "skills/deep/SKILL.md:4: error SK015 `hooks` nests 500 levels deep; the limit is 20"),
    ({"skills/deep/SKILL.md": skill_md("deep", "# Deep\n\nx\n", "metadata:\n  x: " + "[" * 400 + "]" * 400 + "\n")},
     "skills/deep/SKILL.md:4: error SK015 `metadata` nests 401 levels deep; the limit is 20"),
])
def test_too_deep_content_stops_the_build_and_keep_going_leaves_it_out(
        registry: Path, files: dict[str, str], expected: str) -> None:
    write_tree(registry, {**files, "skills/fine/SKILL.md": skill_md("fine", "# Fine\n\nFollow these steps.\n")})
    code, output = build()
    assert code == 1
    assert expected in output.splitlines()
    assert not (registry / "site").exists()
    code, output = build("--keep-going")
    assert code == 0
    assert "Left out 1 invalid skill: skills/deep" in output
    index = json.loads((registry / "site/api/v1/index.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in index["skills"]] == ["fine"]


CAP = Limits().max_file_bytes


def _validate_hostile(folder: Path, text: str) -> None:
    """Validates one skill whose SKILL.md is ``text``, read in full (not left out as too large)."""
    if not folder.exists():
        write_tree(folder, {"registry.yaml": "title: Hostile\n", "skills/hostile/SKILL.md": text})
    report = validate_paths([folder / "skills/hostile"], load_config(folder / "registry.yaml"), jobs=1)
    assert [s.name for s in report.skills] == ["hostile"]
    assert not any(d.code == "SK507" for d in report.diagnostics)


@pytest.mark.timing
@pytest.mark.parametrize("unit", ["![a](", "[a](", "[a](<b", "[a](b 'c", "[" * 50 + "a](", "<", "](", "a:\\"])
def test_a_hostile_skill_md_at_the_size_cap_validates_in_linear_time(tmp_path: Path, unit: str) -> None:
    """Each of these took quadratic time in a regular expression (`![a](` x 12,000 took 44 s): the CPU time at
    the size cap is compared with that at an eighth of it, since an absolute bound would depend on the machine
    and on what else runs beside the test."""
    head = skill_md("hostile", "# Hostile\n\n")
    count = (CAP - len(head)) // len(unit)
    assert len((head + unit * count).encode()) > CAP - len(unit)
    linear, times = grows_linearly(lambda n: _validate_hostile(tmp_path / str(n), head + unit * n), count)
    assert linear, f"{unit!r}: {times} repeats"


def test_the_most_html_tags_a_body_may_hold_build(registry: Path) -> None:
    """20,000 nested tags pass and build (the sanitiser takes about a second); one more is SK408."""
    body = "# Tags\n\n" + "<b>" * 20_000 + "x\n"
    write_tree(registry, {"skills/bold/SKILL.md": skill_md("bold", body),
                          "skills/more/SKILL.md": skill_md("more", body.replace("x\n", "<i>x\n"))})
    code, output = build("--keep-going")
    assert code == 0
    assert "skills/more/SKILL.md:5: error SK408 the body holds 20,001 HTML tags; the limit is 20,000" in output
    assert "Left out 1 invalid skill: skills/more" in output
    assert (registry / "site/skills/bold/index.html").is_file()


# Bodies of 40,000 units of markup that never ends: the standard library's html.parser searched again from each
# one (17 s for the first on Python 3.11), and markdown-it-py before 4.3 did the same inline.
UNTERMINATED = {"comment": "<!--", "comment lines": "<!--\n", "marked section": "<![", "instruction": "<?",
                "end tag": "</", "declaration": "<!X", "quoted attribute": '<a x="', "inline comment": "x <!--",
                "inline instruction": "x <?", "inside a comment block": "<!-- a\n\n<!--"}
_TIMED = """\
import json, sys, time
from pathlib import Path
from builder.core.config import load_config
from builder.validate.run import validate_paths
root = Path(sys.argv[1])
times = {}
for folder in sorted((root / "skills").iterdir()):
    started = time.process_time()
    report = validate_paths([folder], load_config(root / "registry.yaml"), jobs=1)
    times[folder.name] = (time.process_time() - started, [d.code for d in report.diagnostics])
print(json.dumps(times))
"""


@pytest.mark.timing
def test_unterminated_html_in_the_body_validates_in_linear_time(tmp_path: Path) -> None:
    """CPU time of a child process (with a hard CPU limit, so a regression fails instead of hanging the run)."""
    import os
    import resource
    import subprocess
    import sys

    names = {case: case.replace(" ", "-") for case in UNTERMINATED}
    # Every `[` costs the Markdown parser tens of microseconds however it ends (SK409 bounds them): fewer of those.
    units = {case: 5_000 if "[" in unit else 40_000 for case, unit in UNTERMINATED.items()}
    write_tree(tmp_path, {"registry.yaml": "title: Timed\n", **{
        f"skills/{names[case]}/SKILL.md": skill_md(names[case], "# Markup\n\n" + unit * units[case] + "\n")
        for case, unit in UNTERMINATED.items()}})

    def limit_cpu() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (60, 60))

    child = subprocess.run([sys.executable, "-c", _TIMED, str(tmp_path)], capture_output=True, text=True,
                           preexec_fn=limit_cpu, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert child.returncode == 0, child.stderr
    times = json.loads(child.stdout)
    assert sorted(times) == sorted(names.values())
    slow = {name: round(seconds, 2) for name, (seconds, _) in times.items() if seconds > 4.0}  # 17 s and more before
    assert slow == {}
    assert all("SK409" not in codes for _, codes in times.values())  # the links really were read
