"""client: search latency over a 50,000-skill search index in process, and the HTTP requests the ``skillreg``
client sends to install a skill, to check for updates and to restore a locked old version (``install --frozen``),
counted by a real server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from builder.core.search import rank, search_index
from builder.core.urls import INDEX_PATH, versions_path

from .build import QUICK_SIZES, api_output
from .corpus import search_rows
from .harness import BenchContext, BenchError, Finished, Row, Target, run_process, skillreg_command
from .server import CountingServer

SEARCH_FULL = 50_000
SEARCH_QUICK = 2_000
SERVED_FULL = 1_000  # the corpus whose API the server serves: one the build measurement has already built
# Mixed lengths: whole words, several words, prefixes as typed letter by letter, a skill's name.
QUERIES = ("lint", "deploy", "data", "review pull request", "security audit token", "sch", "migr", "te",
           "stale cache", "release notes", "api endpoint", "git branch merge", "conf", "docs", "test fixture flaky",
           "summarise report", "skill-00123", "workflow pipeline", "x", "valid")


def client_bench(ctx: BenchContext) -> list[Row]:
    from .client_sparse import update_check_bench

    return _search(ctx) + _requests(ctx) + _frozen(ctx) + update_check_bench(ctx)


def _search(ctx: BenchContext) -> list[Row]:
    n = SEARCH_QUICK if ctx.quick else SEARCH_FULL
    text = json.dumps(search_index(search_rows(n, ctx.seed)), ensure_ascii=False, separators=(",", ":"))
    loads: list[float] = []
    firsts: list[float] = []
    medians: list[float] = []
    slowest: list[float] = []
    for run in range(ctx.repeat):
        ctx.log(f"  client: search over {n:,} skills, run {run + 1} of {ctx.repeat}, {len(QUERIES)} queries")
        started = time.perf_counter()
        index = json.loads(text)
        loads.append((time.perf_counter() - started) * 1000)
        # The first query on a newly loaded index also pays for whatever rank() prepares once per index.
        started = time.perf_counter()
        rank(index, QUERIES[0])
        firsts.append((time.perf_counter() - started) * 1000)
        times = []
        for query in QUERIES:
            started = time.perf_counter()
            rank(index, query)
            times.append((time.perf_counter() - started) * 1000)
        medians.append(statistics.median(times))
        slowest.append(max(times))
    return [
        Row("client", "search, median query (`builder.core.search.rank`, in process)", n, "ms/query", tuple(medians),
            f"median over {len(QUERIES)} queries per run: one to three words, prefixes (\"sch\", \"te\", \"x\"), a "
            "skill name; default limit 10; after a first query on the loaded index. Rows are synthesized from "
            "the corpus vocabulary.",
            Target("<", 50) if n == SEARCH_FULL else None),
        Row("client", "search, slowest of the queries", n, "ms/query", tuple(slowest), ""),
        Row("client", "search, loading the index (json.loads)", n, "ms", tuple(loads),
            f"the search-index.json document of {n:,} skills, {len(text.encode()):,} bytes, parsed once per run."),
        Row("client", "search, first query on the loaded index", n, "ms", tuple(firsts),
            "includes what rank() prepares once per index; a one-off `skillreg search` pays this and the loading."),
    ]


def _requests(ctx: BenchContext) -> list[Row]:
    n = QUICK_SIZES[0] if ctx.quick else SERVED_FULL
    site = api_output(ctx, n)
    index = json.loads((site / INDEX_PATH).read_bytes())
    name = index["skills"][0]["name"]
    installs: list[tuple[int, Finished]] = []
    first_checks: list[int] = []
    checks: list[tuple[int, int, Finished]] = []
    with CountingServer(site) as server, tempfile.TemporaryDirectory(prefix="skillreg-bench-client-") as tmp:
        for run in range(ctx.repeat):
            # A new project and an empty client cache each run: the install starts from nothing.
            project = Path(tmp) / f"project-{run}"
            project.mkdir()
            env = {**os.environ, "SKILLREG_CACHE_DIR": str(Path(tmp) / f"cache-{run}"), "HOME": tmp,
                   "XDG_CACHE_HOME": str(Path(tmp) / "xdg-cache"), "XDG_CONFIG_HOME": str(Path(tmp) / "xdg-config")}
            env.pop("SKILLREG_REGISTRY", None)
            mark = server.served.mark()
            done = run_process(skillreg_command() + ["install", name, "--registry", server.url, "--dir",
                                                     str(project / "skills")], cwd=project, env=env)
            installs.append((len(server.served.since(mark)), done))
            if not (project / "skills" / name / "SKILL.md").is_file():
                raise BenchError(f"`skillreg install {name}` installed nothing:\n{done.output[-2000:]}")
            mark = server.served.mark()
            # A lock's registry on this machine is used only when named again (and its --dir folder likewise).
            again = ["--registry", server.url, "--dir", str(project / "skills")]
            run_process(skillreg_command() + ["update", *again], cwd=project, env=env)
            first_checks.append(len(server.served.since(mark)))
            mark = server.served.mark()
            done = run_process(skillreg_command() + ["update", *again], cwd=project, env=env)
            log = server.served.since(mark)
            checks.append((len(log), sum(1 for _, status in log if status == 304), done))
    return [
        Row("client", "HTTP requests per install (empty client cache)", n, "requests",
            tuple(float(count) for count, _ in installs),
            f"`skillreg install {name} --registry http://127.0.0.1:PORT/ --dir ...` in a new project with an "
            "empty cache, against a real server that serves the build and honours If-None-Match.",
            Target("<=", 2)),
        Row("client", "HTTP requests per update check, nothing changed", n, "requests",
            tuple(float(count) for count, _, _ in checks),
            "`skillreg update` with the index already cached from an earlier check.", Target("<=", 1)),
        Row("client", "of which answered 304 Not Modified", n, "requests",
            tuple(float(not_modified) for _, not_modified, _ in checks), "", Target(">=", 1)),
        Row("client", "HTTP requests for the first update check after an install", n, "requests",
            tuple(float(count) for count in first_checks),
            "the index is not cached yet (an install does not read it), so it is downloaded once."),
        Row("client", "`skillreg install` wall clock (CLI, subprocess)", n, "s",
            tuple(done.seconds for _, done in installs), "interpreter start-up included."),
        Row("client", "`skillreg update` wall clock, nothing changed", n, "s",
            tuple(done.seconds for _, _, done in checks), "interpreter start-up included."),
    ]


_GIT_ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
            "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **_GIT_ENV}, capture_output=True)


def corpus_repository(ctx: BenchContext, n: int, repo: Path) -> Path:
    """The corpus of ``n`` skills and its registry.yaml as a git repository of one commit, at ``repo``."""
    shutil.copytree(ctx.corpus(n), repo / "skills")
    shutil.copy2(ctx.registry(n), repo / "registry.yaml")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "corpus")
    return repo


def _two_versions(ctx: BenchContext, n: int, tmp: Path) -> tuple[Path, str]:
    """The corpus of ``n`` skills as a git repository in which one skill has two versions, built from scratch (the
    old version's zip comes from git history): (output, that skill's name)."""
    repo = corpus_repository(ctx, n, tmp / "registry")
    name = sorted(p.name for p in (repo / "skills").iterdir() if p.is_dir())[0]
    skill_md = repo / "skills" / name / "SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\n## Changes\n\nA newer version.\n", encoding="utf-8")
    _git(repo, "commit", "-q", "-am", f"{name}: a new version")
    out = tmp / "site"
    run_process(skillreg_command() + ["--config", str(repo / "registry.yaml"), "build", "--no-site", "--out",
                                      str(out)])
    return out, name


def _frozen(ctx: BenchContext) -> list[Row]:
    """``rm -rf .claude && skillreg install --frozen`` with an empty client cache, the lock at the old version and
    at the newest: requests and bytes of the answers' bodies."""
    n = QUICK_SIZES[0] if ctx.quick else SERVED_FULL
    counts: dict[str, list[float]] = {"old": [], "newest": []}
    sizes: dict[str, list[float]] = {"old": [], "newest": []}
    with tempfile.TemporaryDirectory(prefix="skillreg-bench-frozen-") as tmp:
        ctx.log(f"  client: a git history of {n:,} skills, one with two versions, built for `install --frozen`")
        site, name = _two_versions(ctx, n, Path(tmp))
        versions = json.loads((site / versions_path(name)).read_bytes())["versions"]
        if len(versions) != 2:
            raise BenchError(f"the build published {len(versions)} versions of {name}, not 2")
        with CountingServer(site) as server:
            for run in range(ctx.repeat):
                for label, version in (("old", versions[1]), ("newest", versions[0])):
                    project = Path(tmp) / f"project-{label}-{run}"
                    project.mkdir()
                    env = {**os.environ, "HOME": tmp, "XDG_CACHE_HOME": str(Path(tmp) / "xdg-cache"),
                           "XDG_CONFIG_HOME": str(Path(tmp) / "xdg-config"),
                           "SKILLREG_CACHE_DIR": str(Path(tmp) / f"cache-{label}-{run}-install")}
                    env.pop("SKILLREG_REGISTRY", None)
                    run_process(skillreg_command() + ["install", f"{name}@{version['digest']}",
                                                      "--registry", server.url], cwd=project, env=env)
                    shutil.rmtree(project / ".claude")
                    env["SKILLREG_CACHE_DIR"] = str(Path(tmp) / f"cache-{label}-{run}-restore")
                    mark = server.served.mark()
                    run_process(skillreg_command() + ["install", "--frozen", "--registry", server.url], cwd=project,
                                env=env)
                    log = server.served.since(mark)
                    if not (project / ".claude/skills" / name / "SKILL.md").is_file():
                        raise BenchError(f"`install --frozen` restored nothing of {name} ({label})")
                    counts[label].append(float(len(log)))
                    sizes[label].append(float(sum((site / path).stat().st_size for path, status in log
                                                  if status == 200)))
    how = ("`rm -rf .claude && skillreg install --frozen` with an empty client cache, the lock at {}; a real server "
           "on 127.0.0.1 serving a fresh build of a git repository in which one skill has two versions")
    return [
        Row("client", "HTTP requests for `install --frozen` of an old version", n, "requests", tuple(counts["old"]),
            how.format("the older version (its zip rebuilt from git history)"), Target("<=", 2)),
        Row("client", "HTTP requests for `install --frozen` of the newest version", n, "requests",
            tuple(counts["newest"]), how.format("the newest version"), Target("<=", 2)),
        Row("client", "bytes downloaded by `install --frozen`, old version", n, "bytes", tuple(sizes["old"]),
            "response bodies: versions.json and the zip"),
        Row("client", "bytes downloaded by `install --frozen`, newest version", n, "bytes", tuple(sizes["newest"]),
            "response bodies: versions.json and the zip"),
    ]
