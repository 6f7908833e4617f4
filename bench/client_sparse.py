"""client: the bytes and requests of ``skillreg update`` for k installed skills (state.json, then one head.json per
installed skill), after no change, after many other skills changed and after an installed one changed, beside
today's layout, in which any change anywhere costs the whole index.json. Counted by a real server on 127.0.0.1
that answers ETag / If-None-Match as GitHub Pages does, without compression."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from builder.core.urls import INDEX_PATH, STATE_PATH

from .build import QUICK_SIZES
from .client import SERVED_FULL, _git, corpus_repository
from .harness import BenchContext, BenchError, Finished, Row, Target, run_process, skillreg_command
from .server import CountingServer

INSTALLED = 5
CHANGED_OTHERS = 100
PER_SKILL = 1024  # issue 17: at most 1 KB per installed skill, plus a constant
CONSTANT = 1024


def _edit(repo: Path, names: list[str], message: str) -> None:
    for name in names:
        skill_md = repo / "skills" / name / "SKILL.md"
        skill_md.write_text(skill_md.read_text(encoding="utf-8") + f"\n## Changes\n\n{message}\n", encoding="utf-8")
    _git(repo, "commit", "-q", "-am", message)


def client_env(tmp: Path) -> dict[str, str]:
    """An environment for ``skillreg`` client commands whose home, caches and settings all live in ``tmp``."""
    env = {**os.environ, "HOME": str(tmp), "SKILLREG_CACHE_DIR": str(tmp / "cache"),
           "XDG_CACHE_HOME": str(tmp / "xdg-cache"), "XDG_CONFIG_HOME": str(tmp / "xdg-config")}
    env.pop("SKILLREG_REGISTRY", None)
    return env


class UpdateChecks:
    """``skillreg update`` in a project of installed skills, against a CountingServer: each check's requests and
    bytes (whole answers), after making sure it went through state.json, never index.json."""

    def __init__(self, server: CountingServer, project: Path, env: dict[str, str]) -> None:
        self.server, self.project, self.env = server, project, env

    def install(self, names: list[str]) -> None:
        run_process(skillreg_command() + ["install", *names, "--registry", self.server.url], cwd=self.project,
                    env=self.env)
        self.update()  # the first check fills the cache

    def update(self) -> Finished:
        """``skillreg update``, naming the registry again: a lock's registry on this machine is not used alone."""
        return run_process(skillreg_command() + ["update", "--registry", self.server.url], cwd=self.project,
                           env=self.env)

    def check(self, label: str) -> tuple[int, int, list[tuple[str, int]], int]:
        """(requests, bytes, the request log, where it starts in the server's log) of one ``skillreg update``."""
        mark = self.server.served.mark()
        done = self.update()
        log = self.server.served.since(mark)
        if any(path == INDEX_PATH for path, _ in log) or not log or log[0][0] != STATE_PATH:
            raise BenchError(f"`skillreg update` ({label}) did not check through state.json: {log}\n"
                             f"{done.output[-2000:]}")
        return len(log), self.server.served.bytes_since(mark), log, mark


def update_check_bench(ctx: BenchContext) -> list[Row]:
    n = QUICK_SIZES[0] if ctx.quick else SERVED_FULL
    changed = min(CHANGED_OTHERS, n // 2)
    figures: dict[str, tuple[int, int]] = {}  # scenario -> (requests, bytes)
    with tempfile.TemporaryDirectory(prefix="skillreg-bench-sparse-") as tmp_text:
        tmp = Path(tmp_text)
        repo = corpus_repository(ctx, n, tmp / "registry")
        names = sorted(p.name for p in (repo / "skills").iterdir() if p.is_dir())
        installed, others = names[:INSTALLED], names[INSTALLED:INSTALLED + changed]
        site = tmp / "site"
        build = skillreg_command() + ["--config", str(repo / "registry.yaml"), "build", "--no-site", "--out", str(site)]
        ctx.log(f"  client: update checks of {INSTALLED} installed skills at {n:,} skills (three builds)")
        run_process(build)
        project = tmp / "project"
        project.mkdir()
        with CountingServer(site) as server:
            checks = UpdateChecks(server, project, client_env(tmp))
            checks.install(installed)

            def check(label: str) -> None:
                requests, sent, log, mark = checks.check(label)
                figures[label] = (requests, sent)
                if label == "installed":  # the check itself: state.json and the heads, not the update's download
                    check_part = [i for i, (path, _) in enumerate(log) if path == STATE_PATH or
                                  path.endswith("/head.json")]
                    sizes = server.served.sent[mark:mark + len(log)]
                    figures["installed check"] = (len(check_part), sum(sizes[i] for i in check_part))

            check("none")
            _edit(repo, others, f"{changed} other skills changed.")
            run_process(build)
            check("others")
            _edit(repo, installed[:1], "An installed skill changed.")
            run_process(build)
            check("installed")
        index_bytes = (site / INDEX_PATH).stat().st_size
    bound = PER_SKILL * INSTALLED + CONSTANT
    how = (f"`skillreg update` of {INSTALLED} installed skills with a warm client cache, against a real server on "
           "127.0.0.1 serving a fresh build and answering If-None-Match; bytes are whole answers (status line, "
           "headers, body), no compression")
    return [
        Row("client", f"update check of {INSTALLED} skills, nothing changed: requests", n, "requests",
            (float(figures["none"][0]),), how, Target("<=", 1)),
        Row("client", f"update check of {INSTALLED} skills, nothing changed: bytes", n, "bytes",
            (float(figures["none"][1]),), "state.json answered 304"),
        Row("client", f"update check of {INSTALLED} skills, {changed} other skills changed: requests", n, "requests",
            (float(figures["others"][0]),), "state.json (200), then each installed skill's head.json (304)",
            Target("<=", 1 + INSTALLED)),
        Row("client", f"update check of {INSTALLED} skills, {changed} other skills changed: bytes", n, "bytes",
            (float(figures["others"][1]),), f"the goal: at most {PER_SKILL:,} per installed skill plus {CONSTANT:,}",
            Target("<=", bound)),
        Row("client", f"update check of {INSTALLED} skills, one of them changed: requests of the check", n,
            "requests", (float(figures["installed check"][0]),), "state.json and the heads (one answered 200)",
            Target("<=", 1 + INSTALLED)),
        Row("client", f"update check of {INSTALLED} skills, one of them changed: bytes of the check", n, "bytes",
            (float(figures["installed check"][1]),), "", Target("<=", bound)),
        Row("client", f"update of {INSTALLED} skills, one of them changed: all requests", n, "requests",
            (float(figures["installed"][0]),), "the check, then that skill's versions.json and zip (the update)"),
        Row("client", f"update of {INSTALLED} skills, one of them changed: all bytes", n, "bytes",
            (float(figures["installed"][1]),), ""),
        Row("client", "today's layout: bytes of an update check after any change anywhere", n, "bytes",
            (float(index_bytes),), "the whole api/v1/index.json body (what clients before state.json download, "
            "and what a registry without state.json still costs)"),
    ]
