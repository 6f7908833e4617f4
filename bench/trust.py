"""``python -m bench --only trust [--skills N]``: what signing a registry with TUF costs, at the size of the largest
public registry (``--skills 60000 --shape real``) or a small one for CI's quick run.

One run measures, side by side: the bytes an update check moves through python-tuf's client over HTTP on
127.0.0.1 (five installed skills, after an unrelated skill changed; warm: the client's metadata cache from before
the change, cold: the trusted root only; and with nothing changed), for several bin counts, each response counted
gzip-compressed as GitHub Pages serves it plus this server's status line and headers; and what signing adds to
the build: a cold build signed beside one unsigned, and a one-skill rebuild signed beside one unsigned (the whole
CLI, wall and CPU of every process).

The two cold builds of a pair run at the same time, one worker each, into two outputs: on a shared virtual
machine the speed of a core drifts by 10% and more from one minute to the next (the same unsigned build measured
364 s and 397 s of CPU one after the other), which swamps a 10% difference measured in turn; built side by side,
both builds meet the same machine.

The output is kept in the cache folder (``trust-<corpus>/``, with its own state folder so rebuilds are
rebuilds); each bin count signs the cold signed build's output again into its own ``api/v1/tuf`` (a view of the
output whose other files are symbolic links), so no extra build is needed. The signed output's skills are the
bin targets; the client downloads the five skills' digests.json (its targets) as an update check does, and
nothing else (the skills' own documents cost what ``bench.client`` measures).
"""

from __future__ import annotations

import gzip
import os
import shutil
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from .harness import BenchContext, Row, Target, run_process, skillreg_command
from .scale import lean_config

GZIP_LEVEL = 6
INSTALLED = 5
QUICK_SKILLS, DEFAULT_SKILLS = 200, 2000


def bin_counts(n: int) -> tuple[int, ...]:
    """The bin counts of the curve: around the default for ``n`` skills."""
    return (256, 1024, 2048, 4096, 8192) if n >= 20_000 else (16, 64, 256)


# --- a counting server for a signed output, with the metadata from one of several api/v1/tuf folders ------------

@dataclass
class _Log:
    entries: list[tuple[str, int, int]] = field(default_factory=list)  # (path, status, bytes counted)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def since(self, mark: int) -> list[tuple[str, int, int]]:
        with self.lock:
            return self.entries[mark:]

    def mark(self) -> int:
        with self.lock:
            return len(self.entries)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        server: _Server = self.server  # type: ignore[assignment]
        rel = unquote(urlsplit(self.path).path).lstrip("/")
        file = server.locate(rel)
        body = file.read_bytes() if file is not None and file.is_file() else None
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body) if body is not None else 0))
        headers = sum(len(line) for line in getattr(self, "_headers_buffer", [])) + 2
        counted = headers + (len(gzip.compress(body, GZIP_LEVEL, mtime=0)) if body is not None else 0)
        with server.log.lock:
            server.log.entries.append((rel, 200 if body is not None else 404, counted))
        self.end_headers()
        if body is not None:
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, site: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.site = site
        self.tuf: Path | None = None  # where api/v1/tuf/ is read from (None: the output's own)
        self.log = _Log()

    def locate(self, rel: str) -> Path | None:
        from builder.signing.metadata import TUF_DIR

        if ".." in rel.split("/"):
            return None
        if self.tuf is not None and rel.startswith(TUF_DIR + "/"):
            return self.tuf / rel.removeprefix(TUF_DIR + "/")
        return self.site / rel


@contextmanager
def _serving(site: Path) -> Iterator[_Server]:
    server = _Server(site)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


# --- the client: python-tuf's own ------------------------------------------------------------------------------

def update_check(server: _Server, cache: Path, installed: Sequence[str], root: bytes | None) -> tuple[int, int]:
    """(requests, bytes) of a refresh and the five skills' targets; ``root``: bootstrap an empty cache with it."""
    from tuf.ngclient import Updater, UpdaterConfig

    from builder.signing.digests import digests_path
    from builder.signing.metadata import TUF_DIR

    url = f"http://127.0.0.1:{server.server_address[1]}/"
    cache.mkdir(parents=True, exist_ok=True)
    mark = server.log.mark()
    updater = Updater(metadata_dir=str(cache), metadata_base_url=f"{url}{TUF_DIR}/", target_base_url=url,
                      target_dir=str(cache / "targets"), config=UpdaterConfig(prefix_targets_with_hash=False),
                      bootstrap=root)
    updater.refresh()
    (cache / "targets").mkdir(exist_ok=True)
    for name in installed:
        info = updater.get_targetinfo(digests_path(name))
        if info is None:
            raise RuntimeError(f"{digests_path(name)} is not a signed target")
        if updater.find_cached_target(info) is None:
            updater.download_target(info)
    seen = server.log.since(mark)
    return len(seen), sum(size for _, _, size in seen)


# --- the corpus, its output and the keys -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Place:
    corpus: Path  # the corpus folder (registry.yaml, skills/)
    config: Path  # the lean registry.yaml this checkout builds it with
    work: Path  # cache_dir/trust-<corpus>[-api]
    env: dict[str, str]
    site_pages: bool  # whether the output has the website

    @property
    def site(self) -> Path:
        return self.work / "site"

    @property
    def keys(self) -> Path:
        return self.work / "keys"

    def output(self, sign: bool) -> tuple[Path, Path]:
        """The output folder and its state folder: the kept ones signed, a second pair for the unsigned cold
        build that runs beside the signed one."""
        return (self.site, self.work / "state") if sign else (self.work / "site-unsigned",
                                                              self.work / "state-unsigned")

    def build(self, sign: bool, *, cold_pair: bool = False) -> Any:
        """Build into the kept output (``cold_pair``: into the signed or unsigned output of a pair, one worker)."""
        out, state = self.output(sign) if cold_pair else (self.site, self.work / "state")
        command = [*skillreg_command(), "--config", str(self.config), "build", "--keep-going", "--out", str(out),
                   *([] if self.site_pages else ["--no-site"]), *(["--jobs", "1"] if cold_pair else [])]
        return run_process([*command, "--sign", str(self.keys)] if sign else command,
                           env={**self.env, "SKILLREG_STATE_DIR": str(state)}, timeout=7200)


def _place(ctx: BenchContext, n: int) -> _Place:
    corpus = ctx.corpus(n).parent
    config = lean_config(corpus, corpus)
    work = ctx.cache_dir / f"trust-{corpus.name}{'' if ctx.site else '-api'}"
    work.mkdir(parents=True, exist_ok=True)
    return _Place(corpus, config, work, {**os.environ, "SKILLREG_STATE_DIR": str(work / "state")}, ctx.site)


def _cold_pair(ctx: BenchContext, place: _Place) -> tuple[Any, Any]:
    """A cold build of the corpus signed into the kept output and one unsigned into the other, at the same time
    with one worker each (their outputs and state folders moved out of the way first); (signed, unsigned)."""
    for sign in (True, False):
        for folder in place.output(sign):
            ctx.discard(folder)
    ctx.log(f"  building {place.corpus.name} cold, signed and unsigned side by side, "
            f"{'with' if place.site_pages else 'without'} the website ...")
    done: dict[bool, Any] = {}
    failed: list[BaseException] = []

    def run(sign: bool) -> None:
        try:
            done[sign] = place.build(sign, cold_pair=True)
        except BaseException as exc:  # noqa: BLE001 - raised again below, in the bench's thread
            failed.append(exc)

    threads = [threading.Thread(target=run, args=(sign,)) for sign in (True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise failed[0]
    return done[True], done[False]


def _keys(place: _Place) -> None:
    """KEYS and trust/1.root.json beside the corpus's registry.yaml, made once (again if either went missing)."""
    from builder.core.config import load_config
    from builder.signing.keys import init_keys

    chain = place.corpus / "trust"
    if place.keys.is_dir() and (chain / "1.root.json").is_file():
        return
    shutil.rmtree(place.keys, ignore_errors=True)
    shutil.rmtree(chain, ignore_errors=True)
    init_keys(load_config(place.config), place.keys)


def _signer_config(place: _Place, bins: int) -> Path:
    """A registry.yaml that signs with ``bins`` bins and this corpus's root."""
    folder = place.work / f"signer-{bins}"
    (folder / "trust").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(place.corpus / "trust" / "1.root.json", folder / "trust" / "1.root.json")
    (folder / "skills").mkdir(exist_ok=True)
    (folder / "registry.yaml").write_text(f"trust:\n  bins: {bins}\n", encoding="utf-8")
    return folder / "registry.yaml"


def _view(place: _Place, bins: int) -> Path:
    """A folder that is the output but for its own, empty api/v1/tuf/: every other entry a symbolic link."""
    from builder.signing.metadata import TUF_DIR

    view = place.work / f"view-{bins}"
    shutil.rmtree(view, ignore_errors=True)
    for top in place.site.iterdir():
        if top.name != "api":
            (view / top.name).parent.mkdir(parents=True, exist_ok=True)
            (view / top.name).symlink_to(top)
    (view / TUF_DIR).mkdir(parents=True)
    for entry in (place.site / "api/v1").iterdir():
        if entry.name != "tuf":
            (view / "api/v1" / entry.name).symlink_to(entry)
    return view


# --- the measurements ------------------------------------------------------------------------------------------

def _pick(place: _Place) -> tuple[list[str], str]:
    """Five installed skills spread over the corpus, and an unrelated skill to change: one in none of their bins
    at the smallest bin count of the curve (so in none at any larger one)."""
    from builder.signing.bins import bin_layout
    from builder.signing.digests import digests_path
    from builder.signing.metadata import published_skills

    names = published_skills(place.site)
    installed = [names[len(names) * (i + 1) // (INSTALLED + 2)] for i in range(INSTALLED)]
    layout = bin_layout("0" * 64, min(bin_counts(len(names))))
    taken = {layout.get_role_for_target(digests_path(name)) for name in installed}
    start = len(names) // 2 + 1
    changed = next(n for n in names[start:] + names[:start]
                   if n not in installed and layout.get_role_for_target(digests_path(n)) not in taken)
    return installed, changed


@contextmanager
def _changed_skill(place: _Place, name: str) -> Iterator[None]:
    skill_md = place.corpus / "skills" / name / "SKILL.md"
    before = skill_md.read_bytes()
    skill_md.write_bytes(before + b"\nOne more line, changed for the signing figures.\n")
    try:
        yield
    finally:
        skill_md.write_bytes(before)


@dataclass
class _Curve:
    """Per bin count: (requests, bytes) of each update check, and the size of the snapshot and a bin."""

    checks: dict[int, dict[str, tuple[int, int]]] = field(default_factory=dict)
    sizes: dict[int, dict[str, int]] = field(default_factory=dict)


def _sign_views(place: _Place, counts: Sequence[int], changed: set[str] | None, index_before: bytes | None) -> None:
    """Sign each bin count's view: from nothing (``changed`` None) or after ``changed`` (only their bins)."""
    from builder.core.config import load_config
    from builder.signing.metadata import sign_output

    for bins in counts:
        view = place.work / f"view-{bins}" if changed is not None else _view(place, bins)
        # From nothing, every digests.json is current (the output's own signing wrote them): an empty ``changed``
        # hashes each, without making each again; ``index_before`` None signs every bin.
        sign_output(load_config(_signer_config(place, bins)), view, place.keys,
                    changed=changed if changed is not None else set(),
                    index_before=index_before if changed is not None else None)


def _metadata_sizes(view: Path, installed: Sequence[str]) -> dict[str, int]:
    """Gzipped bytes of the snapshot, the top-level targets and the first installed skill's bin."""
    from tuf.api.metadata import Metadata, Root

    from builder.signing.bins import read_previous
    from builder.signing.digests import digests_path
    from builder.signing.metadata import TUF_DIR

    tuf = view / TUF_DIR
    previous = read_previous(tuf, Metadata[Root].from_bytes((tuf / "1.root.json").read_bytes()).signed)
    layout = previous.layout()
    if layout is None:
        raise RuntimeError(f"{tuf}: no hashed bins in the signed targets")
    role = layout.get_role_for_target(digests_path(installed[0]))
    sizes = {name: len(gzip.compress(previous.bytes_of(r) or b"", GZIP_LEVEL, mtime=0))
             for name, r in (("snapshot", "snapshot"), ("targets", "targets"), ("bin", role))}
    if min(sizes.values()) == 0:
        raise RuntimeError(f"{tuf}: the snapshot, targets or a bin is missing")
    return sizes


def _curve(place: _Place, installed: list[str], changed: str, counts: Sequence[int],
           rebuild: Any) -> _Curve:
    """Sign every view, warm a client of each, change ``changed`` (``rebuild`` makes the output again), sign the
    views again and run the three update checks against each."""
    from builder.signing.metadata import TUF_DIR

    curve = _Curve()
    index_before = (place.site / "api/v1/index.json").read_bytes()
    _sign_views(place, counts, None, None)
    clients = place.work / "clients"
    shutil.rmtree(clients, ignore_errors=True)
    with _serving(place.site) as server:
        for bins in counts:
            server.tuf = place.work / f"view-{bins}" / TUF_DIR
            update_check(server, clients / f"warm-{bins}", installed, (server.tuf / "1.root.json").read_bytes())
            curve.checks[bins] = {"unchanged": update_check(server, clients / f"warm-{bins}", installed, None)}
        rebuild()
        _sign_views(place, counts, {changed}, index_before)
        for bins in counts:
            server.tuf = place.work / f"view-{bins}" / TUF_DIR
            curve.checks[bins]["warm"] = update_check(server, clients / f"warm-{bins}", installed, None)
            curve.checks[bins]["cold"] = update_check(server, clients / f"cold-{bins}", installed,
                                                      (server.tuf / "1.root.json").read_bytes())
            curve.sizes[bins] = _metadata_sizes(place.work / f"view-{bins}", installed)
    return curve


def _fetch_previous(place: _Place, bins: int) -> tuple[float, int, int]:
    """What CI's ``skillreg trust fetch-previous`` costs against the output signed with ``bins`` bins, served on
    127.0.0.1: (wall seconds, requests, bytes counted)."""
    from tuf.api.metadata import Metadata, Root

    from builder.ops.trust_previous import fetch_previous
    from builder.signing.metadata import TUF_DIR

    tuf = place.work / f"view-{bins}" / TUF_DIR
    root = Metadata[Root].from_bytes((tuf / "1.root.json").read_bytes()).signed
    into = place.work / "fetched-previous"
    shutil.rmtree(into, ignore_errors=True)
    with _serving(place.site) as server:
        server.tuf = tuf
        mark = server.log.mark()
        started = time.perf_counter()
        fetched = fetch_previous(f"http://127.0.0.1:{server.server_address[1]}/", into, root)
        seconds = time.perf_counter() - started
        seen = server.log.since(mark)
    if fetched.warning is not None:
        raise RuntimeError(f"fetch-previous: {fetched.warning}")
    return seconds, len(seen), sum(size for _, _, size in seen)


def trust_bench(ctx: BenchContext) -> list[Row]:
    n = ctx.skills or (QUICK_SKILLS if ctx.quick else DEFAULT_SKILLS)
    place = _place(ctx, n)
    _keys(place)
    # The last pair's signed output is the one the curve signs and the rebuilds rebuild.
    colds: dict[bool, list[Any]] = {True: [], False: []}
    for _ in range(1 if ctx.quick else max(1, ctx.repeat)):
        signed, unsigned = _cold_pair(ctx, place)
        colds[True].append(signed)
        colds[False].append(unsigned)
    for folder in place.output(False):
        ctx.discard(folder)
    installed, changed = _pick(place)
    figures: dict[str, Any] = {}

    def rebuild() -> None:
        ctx.log(f"  rebuilding after {changed} changed, signed ...")
        with _changed_skill(place, changed):
            figures["signed"] = place.build(sign=True)

    ctx.log(f"  signing with {', '.join(map(str, bin_counts(n)))} bins and checking for updates ...")
    curve = _curve(place, installed, changed, bin_counts(n), rebuild)
    from builder.signing.bins import bins_for

    default = bins_for(n)
    fetched = _fetch_previous(place, default) if default in curve.checks else None
    ctx.log("  rebuilding with the change put back, unsigned ...")
    unsigned = place.build(sign=False)
    rows = _rows(n, place.site_pages, colds[False], colds[True], figures["signed"], unsigned, curve)
    if fetched is not None:
        seconds, requests, sent = fetched
        rows.append(Row("trust", f"CI's fetch-previous of the live metadata, {default} bins (wall, 127.0.0.1)", n,
                        "s", (seconds,), f"{requests} requests, {sent / KB:.0f} KB gzipped"))
    return rows


KB = 1024


def _rows(n: int, site: bool, cold: Sequence[Any], cold_signed: Sequence[Any], signed: Any, unsigned: Any,
          curve: _Curve) -> list[Row]:
    what = "with the website" if site else "of the API alone"

    def walls(builds: Sequence[Any]) -> str:
        return "wall " + ", ".join(f"{b.seconds:.1f}" for b in builds) + " s"

    # Each signed build against the unsigned one built at the same time.
    shares = tuple(100 * (s.cpu_seconds / u.cpu_seconds - 1) for s, u in zip(cold_signed, cold))
    medians = statistics.median(b.cpu_seconds for b in cold_signed) / statistics.median(b.cpu_seconds for b in cold)
    rows = [
        Row("trust", f"cold build {what}, unsigned (CPU, one worker, beside the signed one)", n, "s",
            tuple(b.cpu_seconds for b in cold), walls(cold)),
        Row("trust", f"cold build {what}, signed (CPU, one worker, beside the unsigned one)", n, "s",
            tuple(b.cpu_seconds for b in cold_signed), walls(cold_signed)),
        Row("trust", "what signing adds to the cold build (CPU, signed / unsigned - 1)", n, "%", shares,
            f"signed median / unsigned median - 1: {100 * (medians - 1):+.1f}%",
            target=Target("<=", 10)),
        Row("trust", "one-skill rebuild, unsigned (wall)", n, "s", (unsigned.seconds,),
            f"CPU {unsigned.cpu_seconds:.2f} s"),
        Row("trust", "one-skill rebuild, signed (wall)", n, "s", (signed.seconds,),
            f"CPU {signed.cpu_seconds:.2f} s", target=Target("<=", 5)),
    ]
    for bins, checks in sorted(curve.checks.items()):
        sizes = curve.sizes[bins]
        note = (f"{bins} bins: snapshot {sizes['snapshot'] / KB:.1f} KB, targets {sizes['targets'] / KB:.1f} KB, "
                f"a bin {sizes['bin'] / KB:.1f} KB gzipped")
        for kind, label, goal in (("warm", "update check after an unrelated change, warm cache", 24),
                                  ("cold", "update check after an unrelated change, cold cache", 64),
                                  ("unchanged", "update check, nothing changed", 1)):
            requests, sent = checks[kind]
            rows.append(Row("trust", f"{label}, {bins} bins", n, "KB", (sent / KB,), f"{requests} requests; {note}",
                            Target("<=", goal)))
    return rows
