"""``python -m bench --scale N [--baseline OLD_SKILLREG] [--publish lean|default]``: a registry of N real-shaped
skills, built cold with the website, measured as GitHub Pages and its users would pay for it (issue 17), beside
an older ``skillreg``. This checkout builds with the lean ``publish:`` settings unless ``--publish default``.

Each program builds the same generated corpus (``--shape real`` by default) into its own output with its own
state folder, then rebuilds after one changed skill. Sizes are counted as ``upload-pages-artifact`` deploys them:
every path's size, hard links counted per path. Search transfer is what the search page fetches for the first
results of a query, gzip-compressed as Pages serves it, library (``assets/search.js``) included: the whole
``search-index.json`` for a build without the sharded index, else the files ``ShardedSearch`` reads (the same
files search.js reads; tests/core/test_search.py holds the two to one ranking). The CLI figures come from this
checkout's client against each output served on 127.0.0.1 with ETags, as GitHub Pages serves it: its search,
and ``skillreg update`` of five installed skills before the rebuild (nothing changed) and after it (another
skill changed). What an extra version costs is measured on a git repository of 200 of the corpus's skills,
each changed once.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from builder.core.config import LEAN_PUBLISH as CONFIG_LEAN_PUBLISH

from .client import _git
from .client_sparse import INSTALLED, UpdateChecks, client_env
from .corpus import cached_corpus
from .harness import BenchError, run_process, skillreg_command
from .pages import page_figures, site_rebuild_seconds
from .real_corpus import first_skills
from .rebuild import rebuild_figures
from .server import CountingServer

QUERIES = ("data", "git review", "c", "test", "config file")
TYPED = "config"  # typed one key at a time: what each keystroke adds
PARTS = ("api raw files", ".well-known copies", "zips", "JSON bundles", "detail docs", "pages", "search", "index",
         "sitemaps", "other")
GZIP_LEVEL = 6  # what static hosts commonly serve


def part_of(rel: str) -> str:
    """Which part of the output a published path belongs to."""
    if rel.startswith(".well-known/"):
        return ".well-known copies"
    if rel.startswith("api/v1/bundles/"):
        return "zips" if rel.endswith(".zip") else "JSON bundles"
    if rel.startswith("api/v1/skills/"):
        return "api raw files" if "/files/" in rel else "detail docs"
    if rel.startswith(("api/v1/search/", "api/v1/search-index.json")) or rel == "assets/search.js":
        return "search"
    if rel == "api/v1/index.json":
        return "index"
    if rel.startswith("sitemap") and rel.endswith(".xml"):
        return "sitemaps"
    if rel.endswith((".html", ".html.gz")):  # .html.gz: a skill page's body with publish.page_body: fetched
        return "pages"
    return "other"


def output_sizes(root: Path) -> tuple[dict[str, int], int]:
    """Bytes per part and the file count, every path counted (as Pages deploys a hard-linked copy: twice)."""
    sizes = dict.fromkeys(PARTS, 0)
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            sizes[part_of(path.relative_to(root).as_posix())] += path.lstat().st_size
            count += 1
    return sizes, count


def gzipped(data: bytes) -> int:
    return len(gzip.compress(data, GZIP_LEVEL, mtime=0))


def search_transfer(root: Path, queries: Sequence[str]) -> dict[str, int]:
    """Compressed bytes the search page fetches for the first results of each query, each from a cold cache."""
    from builder.client.search import ShardedSearch
    from builder.core.search import SHARDS_INDEX_PATH

    library = gzipped((root / "assets" / "search.js").read_bytes()) if (root / "assets/search.js").is_file() else 0
    if not (root / SHARDS_INDEX_PATH).is_file():
        whole = library + gzipped((root / "api/v1/search-index.json").read_bytes())
        return {q: whole for q in queries}
    out = {}
    for query in queries:
        fetched = _Recorder(root)
        ShardedSearch(fetched(SHARDS_INDEX_PATH), fetched).rank(query)
        out[query] = library + sum(gzipped((root / p).read_bytes()) for p in dict.fromkeys(fetched.paths))
    return out


class _Recorder:
    """Reads published files from ``root`` as the page would fetch them, remembering which, in order."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: list[str] = []

    def __call__(self, path: str, sha256: str | None = None) -> dict[str, Any]:
        self.paths.append(path)
        return json.loads((self.root / path).read_bytes())  # type: ignore[no-any-return]


def keystroke_transfer(root: Path, typed: str) -> list[int]:
    """Compressed bytes each keystroke of ``typed`` adds to what the page already holds (the first includes the
    manifest and library); a build without the sharded index fetches everything on the first."""
    from builder.client.search import ShardedSearch
    from builder.core.search import SHARDS_INDEX_PATH

    if not (root / SHARDS_INDEX_PATH).is_file():
        return [next(iter(search_transfer(root, [typed[:1]]).values()))] + [0] * (len(typed) - 1)
    fetched = _Recorder(root)
    search = ShardedSearch(fetched(SHARDS_INDEX_PATH), fetched)
    library = gzipped((root / "assets/search.js").read_bytes()) if (root / "assets/search.js").is_file() else 0
    steps, seen = [], 0
    for n in range(1, len(typed) + 1):
        search.rank(typed[:n])
        new, seen = fetched.paths[seen:], len(fetched.paths)
        steps.append(sum(gzipped((root / p).read_bytes()) for p in new) + (library if n == 1 else 0))
    return steps


def cli_search(root: Path, queries: Sequence[str], cache: Path) -> dict[str, float]:
    """This checkout's client against ``root`` served on 127.0.0.1: preparation (the first ``search()``), the
    slowest first query and the median of a warm repeat, in seconds, and the bytes it downloaded."""
    from builder.client.registry import Registry

    with CountingServer(root) as server:
        started = time.perf_counter()
        registry = Registry(server.url, cache_dir=cache)
        search = registry.search()
        prepared = time.perf_counter() - started
        cold = []
        for query in queries:
            started = time.perf_counter()
            search.rank(query)
            cold.append(time.perf_counter() - started)
        warm = []
        for query in queries:
            started = time.perf_counter()
            registry.search().rank(query)
            warm.append(time.perf_counter() - started)
        downloaded = sum((root / path).stat().st_size for path, status in server.served.log if status == 200)
    return {"prepare": prepared, "query cold max": max(cold), "query warm median": statistics.median(warm),
            "downloaded": downloaded}


def _change_one_skill(skill: Path) -> Callable[[], None]:
    """Append a line to the SKILL.md of ``skill`` (a folder); the returned function puts it back."""
    skill_md = skill / "SKILL.md"
    before = skill_md.read_bytes()
    skill_md.write_bytes(before + b"\nOne more line, changed for the rebuild figure.\n")

    def restore() -> None:
        skill_md.write_bytes(before)

    return restore


# registry.yaml's `publish:` for `--publish lean`: only the copies a known reader fetches, the settings the build
# chooses itself past the host's limit (builder.publish.host_fit). With `--publish default` the corpus's own
# registry.yaml decides, so this checkout makes that choice past 1 GB.
LEAN_PUBLISH = dict(CONFIG_LEAN_PUBLISH)


def lean_config(corpus: Path, folder: Path) -> Path:
    """``folder/registry-lean.yaml``: the corpus's registry.yaml with the lean ``publish:`` settings, beside the
    skills it names (``folder`` holds them at the corpus's ``skills_dir``, which registry.yaml may not move out of
    its folder). Only this checkout is given it: older builders reject the section."""
    import yaml

    data = yaml.safe_load((corpus / "registry.yaml").read_text(encoding="utf-8")) or {}
    data["publish"] = LEAN_PUBLISH
    path = folder / "registry-lean.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=True), encoding="utf-8")
    return path


VERSION_SAMPLE = 200  # skills of the corpus in the git repository that measures what an extra version costs


def version_growth(program: list[str], corpus: Path, skills: Sequence[Path], work: Path, lean: bool) -> float:
    """Bytes per skill an extra version adds to the output: ``VERSION_SAMPLE`` skills of the corpus in a git
    repository, built with the website, then every one of them changed once, committed and built again (each old
    version keeps its zip and its versions.json row; the new text itself adds a few dozen bytes). ``skills``: the
    corpus's skill folders, sorted."""
    repo = work / "versions-repo"
    names = [p.name for p in skills if p.is_dir()][:VERSION_SAMPLE]
    for name in names:
        shutil.copytree(corpus / "skills" / name, repo / "skills" / name)
    config = lean_config(corpus, repo) if lean else repo / "registry.yaml"
    if not lean:
        shutil.copy2(corpus / "registry.yaml", repo / "registry.yaml")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one version each")
    out = work / "versions-site"
    env = {**os.environ, "SKILLREG_STATE_DIR": str(work / "versions-state"),
           "XDG_STATE_HOME": str(work / "versions-state")}
    command = [*program, "--config", str(config), "build", "--keep-going", "--out", str(out)]
    run_process(command, env=env, timeout=3600)
    before = sum(output_sizes(out)[0].values())
    for name in names:
        skill_md = repo / "skills" / name / "SKILL.md"
        skill_md.write_bytes(skill_md.read_bytes() + b"\n## Changes\n\nA second version.\n")
    _git(repo, "commit", "-q", "-am", "a second version each")
    run_process(command, env=env, timeout=3600)
    return (sum(output_sizes(out)[0].values()) - before) / len(names)


def measure(program: list[str], corpus: Path, work: Path, config: Path | None = None) -> dict[str, Any]:
    """Every figure for one ``skillreg`` program on ``corpus`` (built with ``config``, else the corpus's own
    registry.yaml); its output stays in ``work`` until the caller removes it."""
    out, state = work / "site", work / "state"
    env = {**os.environ, "SKILLREG_STATE_DIR": str(state), "XDG_STATE_HOME": str(state)}
    command = [*program, "--config", str(config or corpus / "registry.yaml"), "build", "--keep-going", "--out",
               str(out)]
    cold = run_process(command, env=env, timeout=3 * 3600)
    # A real corpus holds skills the build leaves out (--keep-going): the skills installed and the one the rebuild
    # changes are published ones.
    published = {row["name"] for row in json.loads((out / "api/v1/index.json").read_bytes())["skills"]}
    folders = [p for p in sorted((corpus / "skills").iterdir()) if p.name in published]
    changed = folders[len(folders) // 2]  # the skill the rebuild figures change: the middle one by name
    updates: dict[str, Any] = {}
    project = work / "project"
    project.mkdir()
    with CountingServer(out) as server:
        # INSTALLED skills other than the one the rebuild changes, installed by this checkout's client.
        checks = UpdateChecks(server, project, client_env(work / "client"))
        checks.install([p.name for p in folders if p != changed][:INSTALLED])
        try:
            requests, sent, _, _ = checks.check("nothing changed")
            updates.update({"update check, nothing changed: requests": requests,
                             "update check, nothing changed: bytes": sent})
        except BenchError as exc:  # an output without state.json: its check is index.json, counted below
            print(f"scale: no sparse update check: {exc}", file=sys.stderr)
        restore = _change_one_skill(changed)
        try:
            again = run_process(command, env=env, timeout=3600)
        finally:
            restore()
        if updates:
            requests, sent, _, _ = checks.check("another skill changed")
            updates.update({f"update check of {INSTALLED} skills, another changed: requests": requests,
                            f"update check of {INSTALLED} skills, another changed: bytes": sent,
                            "update check bytes per installed skill": sent / INSTALLED})
    sizes, files = output_sizes(out)
    index = (out / "api/v1/index.json").read_bytes()
    skills = max(1, json.loads(index)["count"])
    sitemaps = sorted(out.glob("sitemap*.xml"))
    figures: dict[str, Any] = {
        "build seconds": cold.seconds, "build CPU seconds, all processes": cold.cpu_seconds,
        "published skills": skills, "build ms per published skill": cold.seconds * 1000 / skills,
        "build CPU ms per published skill": cold.cpu_seconds * 1000 / skills, "build peak RSS MB": cold.max_rss / 2**20,
        "build tree RSS MB": cold.tree_rss / 2**20, "one-skill rebuild seconds": again.seconds,
        "output MB": sum(sizes.values()) / 2**20, "files": files,
        **{f"{part} MB": size / 2**20 for part, size in sizes.items()},
        "output KB per skill": sum(sizes.values()) / 1024 / skills,
        **{f"{part} KB per skill": size / 1024 / skills for part, size in sizes.items()},
        "sitemap files": len(sitemaps),
        "sitemap largest MB": max((p.stat().st_size for p in sitemaps), default=0) / 2**20,
        "index.json MB": len(index) / 2**20, "index.json gzip MB": gzipped(index) / 2**20,
        **updates,
    }
    figures.update({f"search KB gz '{q}'": b / 1024 for q, b in search_transfer(out, QUERIES).items()})
    figures.update({f"keystroke {n} '{TYPED[:n]}' KB gz": b / 1024
                    for n, b in enumerate(keystroke_transfer(out, TYPED), 1)})
    cli = cli_search(out, QUERIES, work / "client-cache")
    figures.update({"CLI prepare ms": cli["prepare"] * 1000, "CLI query cold max ms": cli["query cold max"] * 1000,
                    "CLI query warm median ms": cli["query warm median"] * 1000,
                    "CLI downloaded MB": cli["downloaded"] / 2**20})
    figures.update(page_figures(out))  # bench/pages.py: the website's rows
    growth = version_growth(program, corpus, folders, work, config is not None)
    figures["growth per extra version KB per skill"] = growth / 1024
    if program == skillreg_command():
        figures["website share of the one-skill rebuild seconds"] = site_rebuild_seconds(
            corpus / "registry.yaml", out, changed.name, env)
        figures.update(rebuild_figures(command, env, changed))  # bench/rebuild.py
    return figures


def render(n: int, results: dict[str, dict[str, Any]], publish: str = "default") -> str:
    labels = list(results)
    lean = ", ".join(f"{k}: {str(v).lower()}" for k, v in LEAN_PUBLISH.items())
    settings = (f"this checkout with publish: {lean}" if publish == "lean"
                else "every program with its default publish settings")
    lines = [f"Scale benchmark: {n:,} skills ({time.strftime('%Y-%m-%d', time.gmtime())}, {os.cpu_count()} cores; "
             f"{settings})", "", "| figure | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    keys = list(dict.fromkeys(key for figures in results.values() for key in figures))  # rows one program lacks
    for key in keys:
        cells = []
        for label in labels:
            value = results[label].get(key)
            cells.append("" if value is None else f"{value:,.0f}" if isinstance(value, int) or abs(value) >= 100
                         else f"{value:,.2f}")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def baseline_cache(cache_dir: Path, program: str, corpus: Path) -> Path:
    """Where the baseline's figures on ``corpus`` are kept: the baseline is a fixed older program, and at 60,000
    skills it takes most of an hour, so a later run reuses them (named by the program's real path, its version
    and the corpus, which ``cached_corpus`` names by its generator's inputs)."""
    version = run_process([program, "--version"], timeout=60).output.strip()
    key = hashlib.sha256("\0".join((str(Path(shutil.which(program) or program).resolve()), version,
                                     corpus.name)).encode("utf-8")).hexdigest()[:16]
    return cache_dir / f"baseline-figures-{key}.json"


def read_cached(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("figures"), dict) else None


def write_cached(path: Path, figures: dict[str, Any]) -> None:
    data = {"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": " ".join(f"{x:.2f}" for x in os.getloadavg()), "figures": figures}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def scale_main(n: int, baseline: str | None, cache_dir: Path, shape: str = "real", seed: int = 0,
               fresh_baseline: bool = False,
               log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
               publish: str = "lean", real: Path | None = None) -> str:
    """Measure this checkout's ``skillreg`` (and ``baseline`` when given) on one corpus of ``n`` skills; the
    table as Markdown. ``publish``: lean builds this checkout with LEAN_PUBLISH, default with the corpus's file."""
    corpus = (first_skills(real, n) if real is not None else cached_corpus(cache_dir, n, seed, shape)).parent
    n = sum(1 for p in (corpus / "skills").iterdir() if p.is_dir())
    programs = {"this checkout": skillreg_command()}
    results: dict[str, dict[str, Any]] = {}
    cached: Path | None = None  # where the baseline's figures are kept
    if baseline is not None:
        cached = baseline_cache(cache_dir, baseline, corpus)
        stored = None if fresh_baseline else read_cached(cached)
        if stored is not None:
            log(f"scale: baseline: figures measured {stored['measured']} (load {stored['load']}), from {cached}")
            results[f"baseline (measured {stored['measured']})"] = stored["figures"]
        else:
            programs = {"baseline": [baseline], **programs}
    for label, program in programs.items():
        work = Path(tempfile.mkdtemp(prefix="scale-", dir=cache_dir))
        try:
            log(f"scale: {label}: building {n:,} skills ...")
            config = lean_config(corpus, corpus) if publish == "lean" and label == "this checkout" else None
            results[label] = measure(program, corpus, work, config)
            log(f"scale: {label}: built in {results[label]['build seconds']:.1f} s")
            if label == "baseline" and cached is not None:
                write_cached(cached, results[label])
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return render(n, results, publish)
