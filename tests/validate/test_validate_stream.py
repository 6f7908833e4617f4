"""``skillreg validate`` streams: findings are written while later skills are still checked, in exactly the order
and bytes of sorting every finding first, for every format.

The reference below is the collect-then-sort algorithm the streamed run replaced: every skill checked, the
registry-wide rules over all of them, one stable sort, one ``json.dumps``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import REPO, write_tree

from builder.cli.app import cli
from builder.core.config import RegistryConfig, load_config, profile_named
from builder.core.diagnostics import RULES, Diagnostic
from builder.core.discovery import FoundSkill, discover_paths
from builder.core.loader import display_path
from builder.validate.names import check_registry
from builder.validate.report import origin
from builder.validate.run import _CHUNK, _LAST_CHUNK, ValidationRun, _chunks, validate_folder

FIXTURES = REPO / "tests" / "validate" / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expected.yaml").is_file())


def reference(paths: list[Path], config: RegistryConfig, profile: str) -> tuple[list[Diagnostic], int]:
    diagnostics: list[Diagnostic] = []
    folders: list[FoundSkill] = []
    for path in paths:
        path = path.parent if path.is_file() else path
        found = discover_paths([path], config.root).skills
        if not found:
            diagnostics.append(RULES["SK604"].at(display_path(path), 0, f"no skill folders in {display_path(path)}"))
        folders.extend(found)
    skills = []
    keys = []
    for each in {each.folder.resolve(): each for each in folders}.values():
        skill, found = validate_folder(each.folder, config, profile, key=each.path)
        skills.append(skill)
        keys.append(each.path)
        diagnostics.extend(found)
    diagnostics.extend(check_registry(skills, keys))
    diagnostics.sort(key=Diagnostic.sort_key)
    return diagnostics, len(skills)


def reference_json(diagnostics: list[Diagnostic], skills: int, profile: str) -> str:
    errors = sum(d.severity.value == "error" for d in diagnostics)
    document = {"version": 2, "profile": profile_named(profile),
                "summary": {"errors": errors, "warnings": len(diagnostics) - errors, "baselined": 0, "skills": skills,
                            "skills_with_findings": len({d.skill for d in diagnostics if d.skill})},
                "diagnostics": [d.to_dict() for d in diagnostics]}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def reference_text(diagnostics: list[Diagnostic], last: str) -> str:
    lines = []
    for d in diagnostics:
        where = d.file + (f":{d.line}" if d.line else "") + (f":{d.column}" if d.line and d.column else "")
        lines.append(f"{where}: {d.severity.value} {d.code} {d.message}{origin(d)}")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    return "\n".join([*lines, last]) + "\n"


def run_cli(config: Path, *args: str) -> str:
    return CliRunner().invoke(cli, ["--config", str(config), "validate", *args]).stdout


@pytest.mark.parametrize("case", CASES)
def test_every_fixture_streams_the_same_bytes_as_sorting_everything(case: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    expected = yaml.safe_load((FIXTURES / case / "expected.yaml").read_text(encoding="utf-8"))
    config_path = FIXTURES / expected.get("config", "registry.yaml")
    profile = expected.get("profile", "spec")
    monkeypatch.chdir(FIXTURES / case)
    paths = expected.get("paths", ["."])
    diagnostics, skills = reference([Path(p) for p in paths], load_config(config_path), profile)
    assert list(ValidationRun([Path(p) for p in paths], load_config(config_path), profile)) == diagnostics
    out = run_cli(config_path, "--format", "json", "--profile", profile, *paths)
    assert out == reference_json(diagnostics, skills, profile)
    last = json.loads(out)["summary"]
    text = run_cli(config_path, "--profile", profile, "--verbose", *paths)  # every finding, none grouped
    if diagnostics:
        assert text == reference_text(diagnostics, text.splitlines()[-1])
        assert text.splitlines()[-1].startswith(f"{last['errors']} error")
    github = run_cli(config_path, "--format", "github", "--profile", profile, "--verbose", *paths)
    assert github.count("\n::") + github.startswith("::") == len(diagnostics)


def test_the_bundled_registry_streams_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    config = load_config(REPO / "registry.yaml")
    diagnostics, skills = reference([REPO / "skills"], config, "spec")
    assert run_cli(REPO / "registry.yaml", "--format", "json") == reference_json(diagnostics, skills, "spec")


# Names chosen so that findings of one skill sort between those of others: "a" < "a-b" < "a-b/..." < "a/...",
# and a folder without SKILL.md is reported on the folder itself (SK001 on "skills/a"), not on a file in it.


def tricky_registry(root: Path) -> Path:
    files: dict[str, str | bytes] = {"registry.yaml": "title: T\n"}
    for i, name in enumerate(["a-b", "a-b-c", "a0", "b", "zz"]):
        md = f"---\nname: {name if i % 2 else 'dup'}\ndescription: d\nmetadata:\n  v: 1.10\n---\n[x](gone.md)\n"
        files[f"skills/{name}/SKILL.md"] = md
    files["skills/a/notes.txt"] = "no SKILL.md here\n"  # SK001 on the folder path itself
    files["skills/a.b/SKILL.md"] = "---\nname: a.b\n---\n"
    files["other/c/SKILL.md"] = "---\nname: dup\ndescription: d\n---\nBody.\n"
    (root / "empty").mkdir(parents=True)
    return write_tree(root, files)


@pytest.mark.parametrize("order", [["skills", "other", "empty"], ["empty", "other", "skills"]])
@pytest.mark.parametrize("jobs", [1, 2])
def test_findings_that_interleave_across_skills_and_roots_keep_the_sorted_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: list[str], jobs: int) -> None:
    root = tricky_registry(tmp_path)
    monkeypatch.chdir(root)
    config = load_config(root / "registry.yaml")
    paths = [Path(p) for p in order]
    diagnostics, _ = reference(paths, config, "spec")
    assert len({d.file for d in diagnostics}) >= 6 and {"SK001", "SK601", "SK604"} <= {d.code for d in diagnostics}
    run = ValidationRun(paths, config, "spec", jobs=jobs)
    assert list(run) == diagnostics
    assert (run.tally.skills, run.tally.errors + run.tally.warnings) == (8, len(diagnostics))


def test_findings_are_written_before_the_last_skill_is_checked(tmp_path: Path) -> None:
    """Streaming, not collecting: the first skill's findings come out while later skills are still unread."""
    write_tree(tmp_path, {f"skills/s{i:02d}/SKILL.md": f"---\nname: s{i:02d}\n---\n" for i in range(40)})
    run = ValidationRun([tmp_path / "skills"], load_config(start=tmp_path), "spec", jobs=1)
    stream = iter(run)
    first = next(stream)
    assert first.skill == "skills/s00" and run.tally.skills < 40
    os.rename(tmp_path / "skills/s39", tmp_path / "skills/renamed")  # a later skill is not read yet
    rest = list(stream)
    assert "SK512" in {d.code for d in rest if d.skill == "skills/s39"}  # its folder was gone when its turn came


PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


BODY = "".join(f"{i}. Run the step, read what it prints and note what changed in the file.\n" for i in range(60))


def peak_kib(root: Path, count: int) -> int:
    """Peak RSS of `skillreg validate --format json` over ``count`` small skills (a 4 KB body, one finding)."""
    write_tree(root, {"registry.yaml": "title: T\npolicy: {categories: true}\ncategories:\n  - slug: data\n"
                                       "    title: Data\n"})
    for i in range(count):
        folder = root / "skills" / f"skill-{i:05d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: skill-{i:05d}\ndescription: Does a thing when asked.\n"
                                         f"metadata:\n  category: nowhere\n---\n{BODY}", encoding="utf-8")
    skillreg = Path(sys.executable).parent / "skillreg"
    done = subprocess.run([sys.executable, "-c", PEAK, str(skillreg), "--config", str(root / "registry.yaml"),
                           "validate", "--format", "json"], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_peak_memory_does_not_grow_with_the_number_of_skills(tmp_path: Path) -> None:
    """4x the skills and findings, about the same peak (about 1 KB per skill for the name keys of the
    registry-wide rules). Collecting them all, skills without their files and every finding, as validate did
    before it streamed, peaked 27 MB higher for the larger registry."""
    small, large = peak_kib(tmp_path / "small", 1_000), peak_kib(tmp_path / "large", 4_000)
    assert large - small < 10 * 1024, (small, large)


@pytest.mark.parametrize(("count", "jobs"), [(1000, 2), (1000, 3), (300, 8), (31, 2), (5, 1), (0, 2)])
def test_chunks_cover_every_folder_in_order_and_shrink_towards_the_end(count: int, jobs: int) -> None:
    folders = [f"skills/s{i:04d}" for i in range(count)]
    chunks = _chunks(folders, jobs)
    assert [f for chunk in chunks for f in chunk] == folders
    sizes = [len(chunk) for chunk in chunks]
    assert all(0 < size <= _CHUNK for size in sizes)
    if jobs > 1 and count >= 1000:  # what the workers have last is small, so they finish together
        assert sizes[0] == _CHUNK and max(sizes[-2 * jobs:]) <= _LAST_CHUNK
        assert len(chunks) < 2 * count / _CHUNK  # and the run is not cut into many more pieces


def test_many_skills_over_workers_stream_in_the_order_of_sorting_everything(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Enough skills for chunks of every size: the shrinking ones at the end keep the report's order."""
    files: dict[str, str | bytes] = {"registry.yaml": "title: T\n"}
    for i in range(300):
        name = f"s{i:03d}" + ("-x" * (i % 3))
        files[f"skills/{name}/SKILL.md"] = f"---\nname: {name}\ndescription: d\n---\n[x](gone-{i}.md)\n"
    files["skills/s100-x/notes.txt"] = "no SKILL.md beside it\n"
    root = write_tree(tmp_path, files)
    monkeypatch.chdir(root)
    config = load_config(root / "registry.yaml")
    diagnostics, _ = reference([Path("skills")], config, "spec")
    assert len(diagnostics) >= 300
    assert list(ValidationRun([Path("skills")], config, "spec", jobs=2)) == diagnostics
