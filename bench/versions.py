"""versions: builds of a registry whose git history holds 1 or 10 versions of every skill (issue 15).

The history is written with one ``git fast-import`` (seconds even for 10,000 commits): a first commit with the
whole corpus, then one commit per skill per later version, each appending a line to that skill's SKILL.md, as
merged pull requests would. Cold builds start from an empty output and an empty bundle cache, so every old
version's zip is packed from git objects; the rebuild commits one more change to one skill and builds into the
same output with the same cache, so only that skill is rebuilt and only its one new old version is packed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
from pathlib import Path

from builder.core.urls import INDEX_PATH

from .harness import BenchContext, BenchError, Finished, Row, Target, remove_tree, run_process, settle, skillreg_command

FULL_SIZES = (1_000,)
QUICK_SIZES = (50,)
VERSIONS = (1, 10)
MIB = 1024 * 1024
EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z: commit times are fixed, so every run builds the same bytes

COLD = "cold build, {v} version(s) of each skill in git history"
REBUILD = "rebuild after one committed change, {v} version(s) each"
RSS = "peak RSS of the cold build, largest process, {v} version(s) each"
SIZE = "output size, {v} version(s) each"
RATIO = "rebuild time with 10 versions each / with 1"


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        raise BenchError(f"git {' '.join(args[:2])} failed in {repo}: {done.stderr.decode(errors='replace')[-400:]}")
    return done.stdout


def _stream(corpus: Path, versions: int, *, per_skill: bool = True) -> bytes:
    """A fast-import stream: the corpus in one commit, then ``versions - 1`` edits of every skill, one a commit
    (``per_skill``, as merged pull requests would) or every skill's edit of a version in one commit."""
    chunks: list[bytes] = []
    mark = 0
    when = EPOCH

    def commit(message: str, changes: list[tuple[str, int, bytes]]) -> None:
        nonlocal when, mark
        mark += 1
        when += 60
        body = message.encode()
        chunks.append(f"commit refs/heads/main\nmark :{mark}\ncommitter Bench <bench@example.invalid> {when} +0000\n"
                      f"data {len(body)}\n".encode() + body + b"\n")
        if mark > 1:
            chunks.append(f"from :{mark - 1}\n".encode())
        for path, mode, data in changes:
            chunks.append(f"M {mode:o} inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
        chunks.append(b"\n")

    registry = (corpus.parent / "registry.yaml").read_bytes()
    first: list[tuple[str, int, bytes]] = [("registry.yaml", 0o100644, registry)]
    skills = sorted(p for p in corpus.iterdir() if p.is_dir())
    for folder in skills:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            mode = 0o100755 if os.access(path, os.X_OK) else 0o100644
            first.append((f"skills/{path.relative_to(corpus).as_posix()}", mode, path.read_bytes()))
    commit("the corpus", first)
    for version in range(2, versions + 1):
        edits = b"".join(f"\nRevision {k}.\n".encode() for k in range(2, version + 1))
        changes = [(f"skills/{folder.name}/SKILL.md", 0o100644, (folder / "SKILL.md").read_bytes() + edits)
                   for folder in skills]
        if per_skill:
            for folder, change in zip(skills, changes, strict=True):
                commit(f"{folder.name}: revision {version}", [change])
        else:
            commit(f"every skill: revision {version}", changes)
    return b"".join(chunks)


def history_repo(ctx: BenchContext, n: int, versions: int, *, per_skill: bool = True) -> Path:
    """A git repository of the corpus of ``n`` skills with ``versions`` versions of each, made once per cache;
    later versions are one commit per skill, or with ``per_skill=False`` one commit per version."""
    corpus = ctx.corpus(n)
    repo = ctx.cache_dir / f"history-{corpus.parent.name}-v{versions}{'' if per_skill else '-squashed'}"
    if (repo / ".done").is_file():
        _git(repo, "reset", "-q", "--hard", "base")  # undo the rebuild commits of an earlier run
        return repo
    remove_tree(repo)
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    stream = _stream(corpus, versions, per_skill=per_skill)
    ctx.log(f"  versions: git fast-import of {n:,} skills x {versions} version(s) ({len(stream) / MIB:.0f} MiB)")
    _git(repo, "fast-import", "--quiet", stdin=stream)
    _git(repo, "checkout", "-q", "-f", "main")
    _git(repo, "tag", "base")
    (repo / ".git" / "info" / "exclude").write_text(".done\n")
    (repo / ".done").write_text("")
    return repo


def _build(repo: Path, out: Path, cache: Path) -> Finished:
    done = run_process(skillreg_command() + ["--config", str(repo / "registry.yaml"), "build", "--no-site",
                                             "--out", str(out), "--bundle-cache", str(cache)], cwd=repo)
    if not (out / INDEX_PATH).is_file():
        raise BenchError(f"the build into {out} wrote no index")
    return done


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def versions_bench(ctx: BenchContext) -> list[Row]:
    rows: list[Row] = []
    for n in QUICK_SIZES if ctx.quick else FULL_SIZES:
        rows.extend(_measure(ctx, n))
    return rows


def _measure(ctx: BenchContext, n: int) -> list[Row]:
    repos = {v: history_repo(ctx, n, v) for v in VERSIONS}
    works = {v: ctx.out_dir / f"versions-n{n}-v{v}" for v in VERSIONS}
    cold: dict[int, list[Finished]] = {v: [] for v in VERSIONS}
    outs: dict[int, Path] = {}
    sizes: dict[int, int] = {}
    for v in VERSIONS:
        for run in range(ctx.repeat):
            ctx.log(f"  versions: {n:,} skills x {v}, cold run {run + 1} of {ctx.repeat}")
            ctx.discard(works[v])
            works[v].mkdir(parents=True)
            # A new output path each time: the builder's state (its saved walk of the history) is kept per output.
            outs[v] = works[v] / f"out-{run + 1}"
            settle()
            cold[v].append(_build(repos[v], outs[v], works[v] / "cache"))
        sizes[v] = _size(outs[v])
    # The rebuilds of the two histories alternate, so a machine that gets busier part way slows both alike.
    rebuilds: dict[int, list[Finished]] = {v: [] for v in VERSIONS}
    try:
        for run in range(ctx.repeat):
            ctx.log(f"  versions: {n:,} skills, rebuild {run + 1} of {ctx.repeat} of each history")
            for v in VERSIONS:
                repo = repos[v]
                skill = sorted(p for p in (repo / "skills").iterdir() if p.is_dir())[n // 2]
                with open(skill / "SKILL.md", "a", encoding="utf-8") as fh:
                    fh.write(f"\nBench edit {run + 1}.\n")
                _git(repo, "commit", "-q", "-am", f"{skill.name}: bench edit {run + 1}")
                settle()
                done = _build(repo, outs[v], works[v] / "cache")
                if "Packed 1 old version from" not in done.output or "1 written" not in done.output:
                    raise BenchError(f"the rebuild of {outs[v]} did not take the incremental path: "
                                     f"{done.output[-300:]}")
                rebuilds[v].append(done)
    finally:
        for v in VERSIONS:
            _git(repos[v], "reset", "-q", "--hard", "base")
            ctx.discard(works[v])
    rows: list[Row] = []
    for v in VERSIONS:
        how = ("a first commit of the corpus, then one commit per skill per version (fast-import); "
               if v > 1 else "one commit of the corpus; ")
        rows += [
            Row("versions", COLD.format(v=v), n, "s", tuple(f.seconds for f in cold[v]),
                how + "`skillreg build --no-site` into an empty folder with an empty --bundle-cache: every old "
                "version's zip regenerated from git objects."),
            Row("versions", RSS.format(v=v), n, "MiB", tuple(f.max_rss / MIB for f in cold[v]),
                "ru_maxrss of the cold build's process tree: the largest single process (git's included)."),
            Row("versions", REBUILD.format(v=v), n, "s", tuple(f.seconds for f in rebuilds[v]),
                "a line appended to one SKILL.md and committed, then `skillreg build --no-site` into the same "
                "output with the same cache: that skill rebuilt, one old zip packed (the version that was the "
                "head); alternating with the other history's rebuild."),
            Row("versions", SIZE.format(v=v), n, "MiB", (sizes[v] / MIB,),
                "every file of the cold output: API documents, raw files, bundles, versions.json and old zips."),
        ]
    ratio = (statistics.median(f.seconds for f in rebuilds[10])
             / statistics.median(f.seconds for f in rebuilds[1]))
    rows.append(Row("versions", RATIO, n, "x", (ratio,),
                    "median of the two rebuild rows: old versions are immutable, so a longer history must not "
                    "make a push's build slower (issue 15: within 20%).", Target("<=", 1.2)))
    return rows
