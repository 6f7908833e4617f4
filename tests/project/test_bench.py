"""The benchmark's corpus generator and a quick run of the whole suite (the figures themselves are not asserted)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import REPO, write_tree
from skills_ref.validator import validate as skills_ref_validate

if str(REPO) not in sys.path:  # bench/ is a folder of the repository, not part of the installed package
    sys.path.insert(0, str(REPO))

from bench import same_output  # noqa: E402
from bench.corpus import (  # noqa: E402
    ASSET_BYTES,
    DESCRIPTION_CHARS,
    EXTRA_FILE_BYTES,
    MAX_EXTRA_FILES,
    REAL_TARGET,
    SKILL_MD_BYTES,
    cached_corpus,
    category_slugs,
    generate,
    measure_shape,
    search_rows,
)
from bench.harness import BenchContext, Target  # noqa: E402
from bench.validate import validate_bench  # noqa: E402
from builder.cli.app import cli  # noqa: E402
from builder.core.config import load_config  # noqa: E402
from builder.core.search import rank, search_index  # noqa: E402
from builder.validate.run import validate_paths  # noqa: E402

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def tree_digest(root: Path) -> str:
    """Every path, mode and byte below ``root``: equal digests mean byte-identical trees."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        h.update(f"{rel}\0{path.stat().st_mode & 0o777:o}\0".encode())
        if path.is_file():
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return generate(tmp_path_factory.mktemp("corpus"), 200, seed=7)


def test_same_seed_gives_byte_identical_trees(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", 30, seed=3)
    b = generate(tmp_path / "b", 30, seed=3)
    generate(tmp_path / "c", 30, seed=4)
    assert [p.name for p in a] == [p.name for p in b]
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")
    assert tree_digest(tmp_path / "a") != tree_digest(tmp_path / "c")


def test_a_small_corpus_is_a_prefix_of_a_larger_one(tmp_path: Path) -> None:
    small = generate(tmp_path / "small", 5)
    large = generate(tmp_path / "large", 12)
    for folder in small:
        assert tree_digest(folder) == tree_digest(tmp_path / "large" / folder.name)
    assert len(large) == 12


def test_skill_md_sizes_and_frontmatter(corpus: list[Path]) -> None:
    categories = set(category_slugs())
    for folder in corpus:
        data = (folder / "SKILL.md").read_bytes()
        assert SKILL_MD_BYTES[0] <= len(data) <= SKILL_MD_BYTES[1], folder.name
        fm = yaml.safe_load(data.decode().split("\n---\n", 1)[0].removeprefix("---\n"))
        assert fm["name"] == folder.name
        assert re.fullmatch(r"skill-\d{5}-[a-z]+", fm["name"])
        assert DESCRIPTION_CHARS[0] <= len(fm["description"]) <= DESCRIPTION_CHARS[1]
        assert fm["license"] == "MIT"
        meta = fm["metadata"]
        assert meta["category"] in categories
        tags = meta["tags"].split(", ")
        assert 1 <= len(tags) <= 5 and all(SLUG.match(t) for t in tags)
        assert re.fullmatch(r"\d+\.\d+\.\d+", meta["version"])
        assert isinstance(meta["author"], str) and meta["author"]


def test_extra_files_sizes_kinds_and_links(corpus: list[Path]) -> None:
    counts, assets = set(), 0
    for folder in corpus:
        files = [p for p in folder.rglob("*") if p.is_file() and p.name != "SKILL.md"]
        text_files = [p for p in files if p.parent.name in ("scripts", "references")]
        binary = [p for p in files if p.parent.name == "assets"]
        assert len(text_files) + len(binary) == len(files)
        counts.add(len(text_files))
        assets += len(binary)
        body = (folder / "SKILL.md").read_text()
        for path in text_files:
            size = path.stat().st_size
            assert EXTRA_FILE_BYTES[0] <= size <= EXTRA_FILE_BYTES[1], path
            executable = bool(path.stat().st_mode & 0o111)
            assert executable == (path.parent.name == "scripts"), path
            if path.suffix == ".py":
                compile(path.read_text(), str(path), "exec")
        for path in binary:
            assert ASSET_BYTES[0] <= path.stat().st_size <= ASSET_BYTES[1]
            assert path.read_bytes().startswith(b"\x89PNG")
        for path in files:
            rel = path.relative_to(folder).as_posix()
            assert f"]({rel})" in body, f"SKILL.md does not link {rel}"
    assert counts == set(range(MAX_EXTRA_FILES + 1))
    assert 5 <= assets <= 40  # about one skill in ten


@pytest.mark.parametrize("shape", ["synthetic", "real"])
def test_generated_skills_validate_clean_under_both_validators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               shape: str) -> None:
    folders = generate(tmp_path / "skills", 30, seed=11, shape=shape)
    report = validate_paths([tmp_path / "skills"], load_config(REPO / "registry.yaml"), "spec")
    assert len(report.skills) == 30
    assert [d.message for d in report.diagnostics] == []
    assert {f.name: skills_ref_validate(f) for f in folders} == {f.name: [] for f in folders}

    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(cli, ["validate", "--profile", "spec", str(tmp_path / "skills")])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "All 30 skills are valid."


# The synthetic corpus as it was when the real shape was added: earlier figures depend on these bytes, so a
# change to the synthetic generator must be deliberate (and this digest updated with it). Files only: the modes
# of folders follow the umask.
SYNTHETIC_FILES_DIGEST_N20_SEED0 = "d7808e3216ff79f696cfa4ff88999ccf43ce63e519f482cac942a15efd26f231"


def files_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(f"{path.relative_to(root).as_posix()}\0{path.stat().st_mode & 0o777:o}\0".encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def test_the_synthetic_shape_is_unchanged(tmp_path: Path) -> None:
    generate(tmp_path / "default", 20)
    generate(tmp_path / "named", 20, shape="synthetic")
    assert files_digest(tmp_path / "default") == files_digest(tmp_path / "named") == SYNTHETIC_FILES_DIGEST_N20_SEED0


def test_the_real_shape_is_deterministic_and_a_prefix_of_larger_corpora(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", 25, seed=3, shape="real")
    generate(tmp_path / "b", 25, seed=3, shape="real")
    generate(tmp_path / "c", 25, seed=4, shape="real")
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b") != tree_digest(tmp_path / "c")
    generate(tmp_path / "large", 40, seed=3, shape="real")
    for folder in a:
        assert tree_digest(folder) == tree_digest(tmp_path / "large" / folder.name)


def test_an_unknown_shape_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown corpus shape 'rael'"):
        generate(tmp_path, 3, shape="rael")
    assert list(tmp_path.iterdir()) == []


# Figures measured on public skills (sizes, files, links and code blocks) and how near a 300-skill real-shaped
# corpus must come to each: +-15% for means and medians; the 99th percentile of 300 sizes rests on its three
# largest skills, so it only has to fall between 25 and 50 KB.
SHAPE_TOLERANCE = 0.15


@pytest.fixture(scope="module")
def real_shape(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    root = tmp_path_factory.mktemp("real")
    generate(root, 300, seed=0, shape="real")
    return measure_shape(root)


@pytest.mark.parametrize("figure", sorted(set(REAL_TARGET) - {"p99_skill_kb"}))
def test_the_real_shape_matches_public_skills(real_shape: dict[str, float], figure: str) -> None:
    target = REAL_TARGET[figure]
    assert abs(real_shape[figure] - target) <= SHAPE_TOLERANCE * target, (figure, real_shape[figure], target)


def test_the_real_shape_has_the_tail_and_the_links_of_public_skills(real_shape: dict[str, float]) -> None:
    assert real_shape["skills"] == 300
    assert 25 <= real_shape["p99_skill_kb"] <= 50
    assert real_shape["share_with_link"] >= 0.9  # "nearly every file with at least one link"


def test_measure_shape_counts_links_and_fences_outside_code(tmp_path: Path) -> None:
    """The scanner behind the link and code-block figures, on a skill written out by hand."""
    skill = tmp_path / "one"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "run.sh").write_text("echo hi\n")
    (skill / "SKILL.md").write_text(
        "---\nname: one\ndescription: d\n---\n# One\n\n"
        "See [the script](scripts/run.sh) and ![logo](assets/logo.png).\n"
        "Read [the guide][guide], <https://example.com/x> and `[not](a-link)`.\n\n"
        "```md\n[inside](code.md)\n```\n\n~~~\n```\n[still](inside.md)\n~~~\n\n"
        "[guide]: https://example.com/guide\n")
    other = tmp_path / "two"
    other.mkdir()
    (other / "SKILL.md").write_text("---\nname: two\ndescription: d\n---\nNo links here.\n")
    shape = measure_shape(tmp_path)
    assert shape["skills"] == 2
    assert shape["mean_links"] == 2.0  # four in the first file, none in the second
    assert shape["share_with_link"] == 0.5
    assert shape["mean_fenced_blocks"] == 1.0
    assert shape["mean_files"] == 1.5
    assert shape["median_skill_md_lines"] == (19 + 5) / 2


def test_validate_bench_accepts_a_real_shaped_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's own fairness check (both validators accept every skill) on the real shape, through the
    context every measurement gets; the shape is measured and logged once."""
    monkeypatch.chdir(REPO)
    logged: list[str] = []
    ctx = BenchContext(cache_dir=tmp_path, quick=True, repeat=1, shape="real", log=logged.append)
    rows = validate_bench(ctx)
    assert {row.n for row in rows} == {100}
    assert next(tmp_path.glob("corpus-real-n100-*/skills")).is_dir()
    assert [line for line in logged if "real-shaped corpus of 100 skills:" in line] != []
    assert set(ctx.measured_shapes) == {100}


def test_cached_corpus_is_generated_once(tmp_path: Path) -> None:
    first = cached_corpus(tmp_path, 3, seed=1)
    stamp = (first / next(p.name for p in first.iterdir()) / "SKILL.md").stat().st_mtime_ns
    second = cached_corpus(tmp_path, 3, seed=1)
    assert second == first
    assert (second / next(p.name for p in second.iterdir()) / "SKILL.md").stat().st_mtime_ns == stamp
    assert cached_corpus(tmp_path, 3, seed=2) != first
    real = cached_corpus(tmp_path, 3, seed=1, shape="real")
    assert real != first and real.parent.name.startswith("corpus-real-n3-s1-")
    assert first.parent.name.startswith("corpus-synthetic-n3-s1-")
    assert tree_digest(real) != tree_digest(first)
    assert first.name == "skills"  # a registry of its own: registry.yaml beside skills/
    assert (first.parent / "registry.yaml").read_bytes() == (REPO / "registry.yaml").read_bytes()
    assert sorted(p.name.startswith(".staging-") for p in tmp_path.iterdir()) == [False, False, False]


def test_search_rows_have_the_search_index_shape() -> None:
    rows = search_rows(300, seed=2)
    assert rows == search_rows(300, seed=2) and rows != search_rows(300, seed=3)
    assert len({r[0] for r in rows}) == 300
    categories = set(category_slugs())
    for name, description, category, tags, heads in rows:
        assert re.fullmatch(r"skill-\d{5}-[a-z]+", name)
        assert DESCRIPTION_CHARS[0] <= len(description) <= DESCRIPTION_CHARS[1]
        assert category in categories
        assert tags == sorted(set(tags)) and all(SLUG.match(t) for t in tags)
        assert heads.split(" · ")[1] == "When to use"
    assert [h.name for h in rank(search_index(rows), rows[7][0])][0] == rows[7][0]


@pytest.mark.parametrize(("op", "value", "figure", "met"), [
    ("<", 20, 19.9, True), ("<", 20, 20, False), ("<=", 2, 2, True), ("<=", 1, 2, False),
    (">=", 4, 4, True), (">=", 8, 7.9, False)])
def test_targets(op: str, value: float, figure: float, met: bool) -> None:
    assert Target(op, value).met(figure) is met


ROW_KEYS = {"measurement", "subject", "n", "unit", "median", "min", "max", "runs", "note", "target"}
# Subjects each measurement must report in the quick run (not all of them: wording of the others may change).
EXPECTED_SUBJECTS = {
    "validate": {"skills-ref `validate` (in-process)", "skillreg `validate_paths` (in-process)"},
    "build": {"cold, output on disk", "peak RSS of a cold build, largest process",
              "rebuild after one changed skill (incremental)", "rebuild, nothing changed"},
    "sizes": {"api/v1/index.json raw", "api/v1/index.json gzipped", "api/v1/search-index.json raw",
              "api/v1/search-index.json gzipped"},
    "site": {"naive mkdocs-material, `write_naive_site`", "ours, `write_site`", "speed-up, naive / ours",
             "size ratio, naive / ours", "ours, website size", "ours, one skill page"},
    "client": {"search, median query (`builder.core.search.rank`, in process)",
               "HTTP requests per install (empty client cache)", "HTTP requests per update check, nothing changed",
               "update check of 5 skills, 100 other skills changed: bytes"},
    "versions": {"cold build, 10 version(s) of each skill in git history",
                 "rebuild after one committed change, 10 version(s) each",
                 "rebuild time with 10 versions each / with 1", "output size, 1 version(s) each"},
    "trust": {"what signing adds to the cold build (CPU, signed / unsigned - 1)", "one-skill rebuild, signed (wall)",
              "update check after an unrelated change, warm cache, 16 bins",
              "update check, nothing changed, 256 bins"},
}
QUICK_N = {"validate": {100}, "build": {200}, "sizes": {200}, "site": {100}, "client": {200, 2000}, "versions": {50},
           "trust": {200}}


def test_quick_run_of_the_whole_suite(tmp_path: Path) -> None:
    """What CI runs: every measurement at its quick size, one table on stdout and in --markdown, JSON rows for
    each; the cached corpus is left as generated and the build outputs are cleared away."""
    out, table = tmp_path / "results.json", tmp_path / "table.md"
    cache = tmp_path / "cache"
    env = {**os.environ, "SKILLREG_BENCH_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-m", "bench", "--quick", "--json", str(out), "--markdown", str(table)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "| Measurement | Subject | Skills | Runs | Median | Min | Max | Unit | Target |" in done.stdout
    assert table.read_text() == done.stdout

    doc = json.loads(out.read_text())
    assert set(doc) == {"version", "date", "machine", "quick", "repeat", "shape", "corpus_shapes", "measurements",
                        "results"}
    assert doc["version"] == 3 and doc["quick"] is True and doc["repeat"] == 3
    assert doc["shape"] == "synthetic" and doc["corpus_shapes"] == {}
    assert ", synthetic-shaped corpus;" in done.stdout.splitlines()[0]
    assert doc["measurements"] == list(EXPECTED_SUBJECTS)
    assert {"cpu", "cores", "python", "load_average"} <= set(doc["machine"])
    for name, subjects in EXPECTED_SUBJECTS.items():
        rows = [r for r in doc["results"] if r["measurement"] == name]
        assert subjects <= {r["subject"] for r in rows}, name
        assert {r["n"] for r in rows} <= QUICK_N[name], name
    for row in doc["results"]:
        assert set(row) == ROW_KEYS
        assert len(row["runs"]) in (1, 3), row["subject"]
        assert row["min"] <= row["median"] <= row["max"]
        assert row["target"] is None or (set(row["target"]) == {"op", "value", "met"}
                                         and row["target"]["op"] in ("<", "<=", ">="))
        assert f"| {row['measurement']} | {row['subject']} | {row['n']:,} | {len(row['runs'])} |" in done.stdout

    assert not (cache / "out").exists()
    corpus = next(cache.glob("corpus-synthetic-n200-*"))
    assert (corpus / "registry.yaml").read_bytes() == (REPO / "registry.yaml").read_bytes()
    generate(tmp_path / "fresh", 200)
    assert tree_digest(corpus / "skills") == tree_digest(tmp_path / "fresh"), "the rebuild runs left an edit behind"


@pytest.mark.parametrize("option", ["--only", "--shape"])
def test_an_unknown_measurement_or_shape_is_a_usage_error(tmp_path: Path, option: str) -> None:
    done = subprocess.run([sys.executable, "-m", "bench", option, "nope", "--json", str(tmp_path / "x.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "invalid choice: 'nope'" in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_shape_real_is_recorded_in_the_table_and_the_json(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    env = {**os.environ, "SKILLREG_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "bench", "--quick", "--repeat", "1", "--only", "validate",
                           "--shape", "real", "--json", str(out)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert ", real-shaped corpus;" in done.stdout.splitlines()[0]
    doc = json.loads(out.read_text())
    assert doc["shape"] == "real"
    assert set(doc["corpus_shapes"]) == {"100"}
    figures = doc["corpus_shapes"]["100"]
    assert figures["skills"] == 100 and set(REAL_TARGET) <= set(figures)
    assert f"real-shaped corpus of 100 skills: {figures['mean_skill_kb']:.1f} KB and" in done.stderr
    assert {r["n"] for r in doc["results"]} == {100}


def test_compare_times_two_programs_side_by_side(tmp_path: Path) -> None:
    """``bench.compare`` runs both programs on one corpus and prints a median line per measurement; here the
    same program twice, so both runs must succeed and each line must carry both medians and their difference."""
    skillreg = str(Path(sys.executable).parent / "skillreg")
    env = {**os.environ, "SKILLREG_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "bench.compare", skillreg, skillreg, "-n", "20", "--rounds", "1",
                           "--only", "validate", "--only", "build", "--out-dir", str(tmp_path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["validate", "build"]
    pattern = re.compile(r"^(validate|build): median of 1 rounds, wall \d+\.\d{3} s -> \d+\.\d{3} s \([+-]\d+\.\d%\); "
                         r"CPU \d+\.\d{3} s -> \d+\.\d{3} s \([+-]\d+\.\d%\)$")
    assert all(pattern.match(line) for line in lines), lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"], "a build output or state folder was left behind"


def test_compare_times_a_cold_website_build_of_a_git_history_with_two_versions_of_each_skill(tmp_path: Path) -> None:
    """The site kind builds, with the website, a cached git repository of the corpus where every skill changed
    once; compare itself refuses a build that did not publish both versions, so a line means it did."""
    skillreg = str(Path(sys.executable).parent / "skillreg")
    env = {**os.environ, "SKILLREG_BENCH_CACHE": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "bench.compare", skillreg, skillreg, "--only", "site", "--site-n", "5", "-n", "3",
            "--rounds", "1", "--out-dir", str(tmp_path)]
    done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"site: median of 1 rounds, wall \d+\.\d{3} s -> \d+\.\d{3} s \([+-]\d+\.\d%\); "
                        r"CPU \d+\.\d{3} s -> \d+\.\d{3} s \([+-]\d+\.\d%\)\n", done.stdout), done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"], "a build output or state folder was left behind"
    [repo] = (tmp_path / "cache").glob("history-*n5-*")
    log = subprocess.run(["git", "log", "--format=%s", "--name-only"], cwd=repo, capture_output=True, text=True,
                         check=True).stdout
    assert log.count("revision 2") == 1 and log.count("/SKILL.md") == 2 * 5  # two commits, every skill in both
    assert not any((tmp_path / "cache").glob("*n3-*")), "the -n corpus was made though no kind of it ran"

    again = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "fast-import" not in again.stderr  # the git corpus is made once and reused


def test_compare_refuses_a_program_that_is_not_there(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bench.compare", str(tmp_path / "nope"), "skillreg"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"{tmp_path / 'nope'}: not an executable" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("race", "line"), [
    ("installs", "1 of 1 rounds: 8 concurrent installs kept every lock entry and folder"),
    ("builds", "1 of 1 rounds: 4 concurrent builds into one output ended clean"),
])
def test_concurrent_installs_and_builds_race_with_nothing_lost(race: str, line: str) -> None:
    skillreg = str(Path(sys.executable).parent / "skillreg")
    done = subprocess.run([sys.executable, "-m", "bench.races", race, "--rounds", "1", "--skillreg", skillreg],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout.splitlines()) == (0, [line]), done.stderr


def test_scale_measures_two_programs_on_one_corpus(tmp_path: Path) -> None:
    """``--scale N --baseline P``: both builds of one corpus, every figure of the scale benchmark in one table; here
    the same program twice, whose outputs must then be equal in size and count."""
    skillreg = str(Path(sys.executable).parent / "skillreg")
    done = subprocess.run([sys.executable, "-m", "bench", "--scale", "8", "--baseline", skillreg, "--cache-dir",
                           str(tmp_path / "cache"), "--publish", "default"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    rows = scale_rows(done.stdout)
    assert done.stdout.startswith("Scale benchmark: 8 skills")
    assert "every program with its default publish settings" in done.stdout.splitlines()[0]
    for figure in ("build seconds", "build peak RSS MB", "one-skill rebuild seconds", "output MB", "files",
                   "api raw files MB", ".well-known copies MB", "zips MB", "JSON bundles MB", "detail docs MB",
                   "pages MB", "search MB", "sitemap files", "index.json MB", "index.json gzip MB",
                   "search KB gz 'data'", "keystroke 1 'c' KB gz", "CLI prepare ms", "CLI query warm median ms",
                   "skill page median KB", "skill page chrome largest KB",
                   "website share of the one-skill rebuild seconds", "update check, nothing changed: bytes",
                   "update check bytes per installed skill", "growth per extra version KB per skill"):
        assert len(rows[figure]) == 2 and all(rows[figure]), figure
    # The update check of 5 installed skills: one 304 when nothing changed, state.json and 5 heads after another
    # skill changed, within the bound of 1 KB per installed skill plus 1 KB.
    assert rows["update check, nothing changed: requests"] == ["1", "1"]
    assert rows["update check of 5 skills, another changed: requests"] == ["6", "6"]
    assert all(float(b.replace(",", "")) <= 6 * 1024 for b in rows["update check of 5 skills, another changed: bytes"])
    assert all(float(kb) > 1 for kb in rows["growth per extra version KB per skill"])  # at least an old zip a skill
    for figure in ("output MB", "files", "search MB", "pages MB", "sitemap files", "search KB gz 'data'"):
        assert rows[figure][0] == rows[figure][1], figure
    assert int(rows["files"][0].replace(",", "")) > 8 * 4 and rows["sitemap files"] == ["1", "1"]
    kept = [p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith("corpus-")]
    assert len(kept) == 1 and kept[0].startswith("baseline-figures-")  # the builds' outputs are gone
    again = subprocess.run([sys.executable, "-m", "bench", "--scale", "8", "--baseline", skillreg, "--cache-dir",
                            str(tmp_path / "cache")], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "| figure | baseline (measured " in again.stdout and "scale: baseline: building" not in again.stderr
    assert rows["output MB"][0] in again.stdout.split("| output MB |")[1].splitlines()[0]


def scale_rows(table: str) -> dict[str, list[str]]:
    return {line.split(" | ")[0].lstrip("| "): line.strip(" |").split(" | ")[1:]
            for line in table.splitlines() if line.startswith("| ") and not line.startswith("| figure")}


def test_scale_builds_this_checkout_lean_by_default(tmp_path: Path) -> None:
    """Without --publish, this checkout builds with the lean publish: settings (a copy of the corpus's
    registry.yaml in its work folder) and the heading says so; the corpus's own file is left as it was."""
    cache = tmp_path / "cache"
    done = subprocess.run([sys.executable, "-m", "bench", "--scale", "8", "--cache-dir", str(cache)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "this checkout with publish: raw_files: linked, json_bundles: false, well_known_skills: false, " \
        "page_body: fetched" in done.stdout.splitlines()[0]
    rows = scale_rows(done.stdout)
    assert rows["JSON bundles MB"] == ["0.00"] and rows[".well-known copies MB"] == ["0.00"]
    assert float(rows["zips MB"][0]) > 0 and float(rows["output KB per skill"][0]) > 0
    assert all(float(rows[f"{change} rebuild seconds"][0]) > 0 for change in ("nothing-changed", "description-change"))
    (corpus,) = [p for p in cache.iterdir() if p.name.startswith("corpus-")]
    assert "publish" not in (corpus / "registry.yaml").read_text(encoding="utf-8")
    assert "Quagga" not in "".join(p.read_text(encoding="utf-8") for p in corpus.glob("skills/*/SKILL.md"))


def test_scale_counts_every_path_and_the_search_page_transfer(tmp_path: Path) -> None:
    import gzip
    import shutil

    from helpers.site import bundled_site

    from bench.scale import output_sizes, part_of, search_transfer

    assert [part_of(p) for p in ("api/v1/skills/a/files/SKILL.md", ".well-known/skills/a/SKILL.md",
                                 "api/v1/bundles/a/a-1.zip", "api/v1/bundles/a/a-1.json", "api/v1/skills/a.json",
                                 "skills/a/index.html", "api/v1/search/rows/x.json", "sitemap-2.xml",
                                 "api/v1/index.json", "assets/site.css")] == [
        "api raw files", ".well-known copies", "zips", "JSON bundles", "detail docs", "pages", "search", "sitemaps",
        "index", "other"]
    (tmp_path / "t" / "skills" / "a").mkdir(parents=True)
    (tmp_path / "t" / "skills" / "a" / "index.html").write_bytes(b"x" * 100)
    os.link(tmp_path / "t" / "skills" / "a" / "index.html", tmp_path / "t" / "404.html")
    sizes, count = output_sizes(tmp_path / "t")
    assert sizes["pages"] == 200 and count == 2  # a hard link is deployed as a copy

    site = bundled_site(tmp_path / "b")
    library = len(gzip.compress((site / "assets/search.js").read_bytes(), 6, mtime=0))
    sharded = search_transfer(site, ["csv"])["csv"]
    old = tmp_path / "old"
    shutil.copytree(site, old)
    shutil.rmtree(old / "api/v1/search")
    whole = library + len(gzip.compress((site / "api/v1/search-index.json").read_bytes(), 6, mtime=0))
    assert search_transfer(old, ["csv", "data"]) == {"csv": whole, "data": whole}
    assert library < sharded


# A child that holds MIB_HELD touched MiB and forks three children that keep it (shared, copy-on-write) a moment.
_FORKED_HOLDERS = """\
import os, time
held = bytearray({size})
held[::4096] = b"\\1" * len(range(0, len(held), 4096))
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        time.sleep(0.6)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""
MIB = 1024 * 1024
MIB_HELD = 64


def test_run_process_measures_the_command_not_the_benchmark_nor_shared_pages_twice() -> None:
    """A benchmark process that had held 60,000 skills (about 1 GB) once reported that size as every later
    command's peak, and the tree counted pages forked workers share once per worker: neither happens."""
    from bench.harness import run_process

    big = bytearray(400 * MIB)  # the benchmark after an in-process run of a large corpus
    big[::4096] = b"\1" * len(range(0, len(big), 4096))
    small = run_process([sys.executable, "-c", "pass"])
    holders = run_process([sys.executable, "-c", _FORKED_HOLDERS.format(size=MIB_HELD * MIB)])
    del big
    assert small.max_rss < 100 * MIB
    assert MIB_HELD * MIB < holders.max_rss < (MIB_HELD + 100) * MIB
    # Four processes each mapping the same 64 MiB: their RSS sums to over 256 MiB, their PSS to about 64 MiB.
    assert MIB_HELD * MIB * 0.9 < holders.tree_rss < 2 * MIB_HELD * MIB
    assert holders.seconds >= 0.6 and holders.cpu_seconds > 0


def test_run_process_reports_a_failure_a_missing_program_and_a_timeout_and_kills_the_whole_tree(
        tmp_path: Path) -> None:
    from bench.harness import BenchError, run_process

    with pytest.raises(BenchError, match=r"`false` exited 1"):
        run_process(["false"])
    with pytest.raises(BenchError, match=r"could not be run"):
        run_process([str(tmp_path / "no-such-program")])
    marker = tmp_path / "still-running"
    with pytest.raises(BenchError, match=r"was killed after 0.5 s"):
        run_process(["sh", "-c", f"sleep 2; touch {marker}"], timeout=0.5)
    subprocess.run(["sleep", "2.5"], check=True)
    assert not marker.exists()  # the shell's own child was killed with it


def test_the_cli_is_measured_with_its_bytecode_written_as_an_installed_package_has_it() -> None:
    """The machine's PYTHONDONTWRITEBYTECODE made every measured `skillreg` compile the package again."""
    import importlib.util

    from bench.harness import compile_bytecode

    compile_bytecode()
    sources = sorted((REPO / "builder").rglob("*.py"))
    assert len(sources) > 40
    for source in sources:
        compiled = Path(importlib.util.cache_from_source(str(source)))
        assert compiled.is_file(), source
        header = compiled.read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER
        assert int.from_bytes(header[8:12], "little") == int(source.stat().st_mtime)  # checked against its source


def test_same_output_names_every_file_that_differs(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    write_tree(old, {"a.json": "1", "b/c.html": "x", "gone.txt": "y"})
    write_tree(new, {"a.json": "2", "b/c.html": "x", "added.txt": "z"})
    assert same_output.differences(same_output.digests(old), same_output.digests(new)) == [
        "only in OLD: gone.txt", "only in NEW: added.txt", "differs:     a.json"]
    assert same_output.differences(same_output.digests(old), same_output.digests(old)) == []


def test_same_output_commits_the_fixed_registry_with_fixed_dates(tmp_path: Path) -> None:
    repo = same_output.fixed_registry(tmp_path, "lean-two-versions", "skillreg-is-not-run")
    log = subprocess.run(["git", "log", "--format=%an %aI %cI"], cwd=repo, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert log == ["Fixed 2026-01-01T13:00:00+00:00 2026-01-01T13:00:00+00:00",
                   "Fixed 2026-01-01T12:00:00+00:00 2026-01-01T12:00:00+00:00"]
    assert "publish" in (repo / "registry.yaml").read_text(encoding="utf-8")


def test_same_output_signs_the_fixed_registry_with_keys_made_once(tmp_path: Path) -> None:
    program = str(Path(sys.executable).parent / "skillreg")
    repo = same_output.fixed_registry(tmp_path, "signed", program)
    tracked = subprocess.run(["git", "ls-files", "trust"], cwd=repo, capture_output=True, text=True,
                             check=True).stdout.split()
    assert tracked == ["trust/1.root.json"]
    assert sorted(p.name for p in same_output.keys_of(repo).iterdir()) == [
        "root.pem", "snapshot.pem", "targets.pem", "timestamp.pem"]
