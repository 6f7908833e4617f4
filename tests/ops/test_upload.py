"""``skillreg upload``: a real build of the bundled registry sent to a real S3-compatible server on 127.0.0.1
(moto's server mode), read back over plain HTTP by our own client; a proxy in front of it refuses one key to
show that a failure part way leaves every index a reader can fetch pointing at files that exist."""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import shutil
import socket
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import boto3
import pytest
from click.testing import CliRunner
from helpers import LONG_LIVED
from helpers.build import make_registry
from helpers.client import commit, edit_csv_profiler, run
from moto.server import ThreadedMotoServer

from builder.cli.app import cli
from builder.core.config import load_config
from builder.core.words import counted
from builder.ops.upload import (
    DELETE_AFTER,
    IMMUTABLE,
    INDEX,
    MUTABLE,
    PHASES,
    Destination,
    S3Store,
    UploadPlan,
    cache_class,
    content_type,
    phase_of,
    plan_upload,
    run_upload,
    scan_output,
    upload,
)
from builder.publish.build import BuildOptions, build

LONG = "public, max-age=31536000, immutable"
SHORT = "public, max-age=60, must-revalidate"
# The documents a reader starts from, named here as a reader knows them (not through the builder's constants).
REGISTRY_INDEXES = {"api/v1/index.json", "api/v1/state.json", "api/v1/search/index.json", "api/v1/search-index.json",
                    ".well-known/skills/index.json", ".well-known/agent-skills/index.json", "sitemap.xml"}
REMOVED = "log-summarizer"


# ---------------------------------------------------------------------------------------------------- set-up

@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two real builds with the website: three of the bundled skills, then the same after csv-profiler got a new
    version and log-summarizer was removed (few skills: the S3 server answers a few hundred requests a second)."""
    root = tmp_path_factory.mktemp("upload-builds")
    registry = make_registry(root / "registry", ["csv-profiler", REMOVED, "secret-scanner"])
    first, second = root / "first", root / "second"
    build(load_config(registry / "registry.yaml"), first, BuildOptions(keep_going=True))
    edit_csv_profiler(registry)
    shutil.rmtree(registry / "skills" / REMOVED)
    commit(registry, f"remove {REMOVED}")
    build(load_config(registry / "registry.yaml"), second, BuildOptions(keep_going=True))
    return first, second


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch, isolated_user_dirs: Path) -> None:
    """Credentials the usual AWS way (environment variables); config files only from the test's home."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(isolated_user_dirs / ".aws" / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(isolated_user_dirs / ".aws" / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(var, raising=False)


_buckets = iter(range(1, 10_000))


@pytest.fixture
def bucket(endpoint: str) -> str:
    """A new bucket whose objects below ``reg/`` anyone may read, as a CDN origin's would be."""
    name = f"registry-{next(_buckets)}"
    s3 = client(endpoint)
    s3.create_bucket(Bucket=name)
    s3.put_bucket_policy(Bucket=name, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{name}/reg/*"}]}))
    return name


def client(endpoint: str) -> Any:
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")


def files_of(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def stored(endpoint: str, bucket: str, prefix: str = "") -> dict[str, str]:
    """Key -> MD5 of the bytes the bucket holds (its ETag: every upload here is a single PUT)."""
    s3 = client(endpoint)
    return {o["Key"]: o["ETag"].strip('"') for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=bucket, Prefix=prefix) for o in page.get("Contents", ())}


def by_md5(*outs: Path) -> dict[str, bytes]:
    return {md5(data): data for out in outs for data in files_of(out).values()}


def upload_cli(*args: str) -> Any:
    return CliRunner().invoke(cli, ["upload", *args])


class RefusingProxy:
    """Forwards every request to the S3 server, noting each, but answers PUTs of one key with 403 AccessDenied."""

    def __init__(self, upstream: str, refuse: str | None = None) -> None:
        target = urlsplit(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.requests.append((self.command, unquote(urlsplit(self.path).path)))
                if self.command == "PUT" and unquote(urlsplit(self.path).path) == refuse:
                    proxy.refused += 1
                    error = (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>AccessDenied</Code>"
                             b"<Message>Access Denied</Message></Error>")
                    self.send_response(403)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(error)))
                    self.end_headers()
                    self.wfile.write(error)
                    return
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "host")}
                connection.request(self.command, self.path, body=body, headers=headers)
                answer = connection.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding", "content-length", "server", "date"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                connection.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self.refused = 0
        self.requests: list[tuple[str, str]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> RefusingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------------------------------ the cache classes

def expected_immutable(out: Path) -> set[str]:
    """What the build names by content, read from the documents that point at it: every version's bundles,
    every file of the sharded search index, and the theme's assets the pages load (with their source maps)."""
    found: set[str] = set()
    for versions in out.glob("api/v1/skills/*/versions.json"):
        found.update(v["zip"]["path"] for v in json.loads(versions.read_text())["versions"] if v.get("zip"))
    for detail in out.glob("api/v1/skills/*.json"):
        found.update(bundle["path"] for bundle in json.loads(detail.read_text())["bundles"].values())
    manifest = json.loads((out / "api/v1/search/index.json").read_text())
    found.update(f"api/v1/search/rows/{digest}.json" for _, digest in manifest["rows"])
    found.add(f"api/v1/search/facets/{manifest['facets']}.json")
    facets = json.loads((out / f"api/v1/search/facets/{manifest['facets']}.json").read_text())
    found.update(f"api/v1/search/facets/{digest}.json" for kind in ("category", "tag")
                 for _, digest in facets[kind].values())
    for key, digest in manifest["prefixes"].items():
        found.add(f"api/v1/search/prefix/{key}.{digest}.json")
        terms = json.loads((out / f"api/v1/search/prefix/{key}.{digest}.json").read_text()).get("terms", {})
        found.update(f"api/v1/search/terms/{k}.{d}.json" for k, d in terms.items())
    page = (out / "index.html").read_text()
    for asset in set(re.findall(r'"[./]*(assets/(?:javascripts|stylesheets)/[^"]+)"', page)):
        found.add(asset)
        if (out / f"{asset}.map").is_file():  # a source map is named after its file
            found.add(f"{asset}.map")
    return found


@pytest.mark.parametrize("which", [0, 1], ids=["first-build", "rebuild-with-an-old-version"])
def test_every_file_of_a_real_build_is_in_the_class_its_name_promises(builds: tuple[Path, Path], which: int) -> None:
    out = builds[which]
    files = files_of(out)
    immutable = expected_immutable(out)
    names = {json.loads(p.read_text())["name"] for p in out.glob("api/v1/skills/*.json")} | \
        {p.parent.name for p in out.glob("api/v1/skills/*/versions.json")}  # a removed skill keeps its history
    indexes = (REGISTRY_INDEXES | {f"api/v1/skills/{n}/{doc}.json" for n in names for doc in ("head", "versions")}) \
        & files.keys()  # which of the discovery copies a build keeps is the publishing config's choice
    assert immutable <= files.keys()
    assert {"api/v1/index.json", "api/v1/state.json", "api/v1/search/index.json", "sitemap.xml"} <= indexes
    assert any(p.endswith(".zip") for p in immutable) and any(p.startswith("assets/") for p in immutable)
    for path in files:
        expected = IMMUTABLE if path in immutable else INDEX if path in indexes else MUTABLE
        assert cache_class(path) == expected, path
    # The names that carry a digest carry that of their own bytes (the search shards) or of their version.
    for path in immutable:
        match = re.search(r"([0-9a-f]{12})\.json$", path)
        if path.startswith("api/v1/search/") and match:
            assert hashlib.sha256(files[path]).hexdigest()[:12] == match[1], path
    for versions in out.glob("api/v1/skills/*/versions.json"):
        for version in json.loads(versions.read_text())["versions"]:
            if version.get("zip"):
                assert version["zip"]["path"].endswith(f"-{version['digest'].removeprefix('sha256:')[:12]}.zip")
    assert {cache_class(p) for p in ("index.html", "skills/csv-profiler/index.html", "api/v1/skills/csv-profiler.json",
                                     "api/v1/skills/csv-profiler/files/SKILL.md", "api/v1/schema/index.schema.json",
                                     ".well-known/skills/csv-profiler/SKILL.md", "assets/search.js", "404.html")} \
        == {MUTABLE}


def test_a_rebuild_never_changes_the_bytes_behind_an_immutable_name(builds: tuple[Path, Path]) -> None:
    first, second = (files_of(out) for out in builds)
    changed = {p for p in first.keys() & second.keys() if first[p] != second[p]}
    assert "api/v1/index.json" in changed and "api/v1/skills/csv-profiler.json" in changed
    assert [p for p in changed if cache_class(p) == IMMUTABLE] == []
    new = second.keys() - first.keys()
    assert any(cache_class(p) == IMMUTABLE and p.endswith(".zip") for p in new)


@pytest.mark.parametrize(("path", "expected"), [
    ("api/v1/bundles/a-b/a-b-0123456789ab.zip", IMMUTABLE),
    ("api/v1/bundles/a-b/a-b-0123456789ab.json", IMMUTABLE),
    ("api/v1/bundles/a-b/c-0123456789ab.zip", MUTABLE),  # another skill's name in the folder of a-b
    ("api/v1/bundles/a-b/a-b-0123456789ab.txt", MUTABLE),
    ("api/v1/bundles/a-b/a-b-0123456789a.zip", MUTABLE),
    ("api/v1/search/terms/abc.0123456789ab.json", IMMUTABLE),
    ("api/v1/search/terms/abcd.0123456789ab.json", MUTABLE),  # keys are at most three characters
    ("api/v1/search/rows/0123456789ab.json", IMMUTABLE),
    ("api/v1/search/rows/0123456789AB.json", MUTABLE),
    ("api/v1/search/index.json", INDEX),
    ("api/v1/skills/x/files/api/v1/search/rows/0123456789ab.json", MUTABLE),  # a skill's own file
    ("api/v1/skills/x/files/head.json", MUTABLE),
    ("api/v1/skills/x/head.json", INDEX),
    ("api/v1/skills/x/y/head.json", MUTABLE),
    ("sitemap-3.xml", INDEX),
    ("robots.txt", INDEX),
    ("skills/robots.txt", MUTABLE),
    ("assets/javascripts/bundle.a5f9d56c.min.js.map", IMMUTABLE),
    ("assets/site.css", MUTABLE),
    (".well-known/skills/x/index.json", MUTABLE),
])
def test_look_alike_names_are_not_taken_for_content_addressed_ones(path: str, expected: str) -> None:
    assert cache_class(path) == expected


@pytest.mark.parametrize(("path", "data", "expected"), [
    ("api/v1/index.json", b"{}", "application/json; charset=utf-8"),
    ("skills/x/index.html", b"<p>", "text/html; charset=utf-8"),
    ("sitemap.xml", b"<urlset/>", "application/xml; charset=utf-8"),
    ("api/v1/skills/x/files/SKILL.md", b"# x", "text/markdown; charset=utf-8"),
    ("api/v1/skills/x/files/notes.txt", b"caf\xe9", "text/plain"),  # not UTF-8: no charset claimed
    ("api/v1/bundles/x/x-0123456789ab.zip", b"PK", "application/zip"),
    ("api/v1/skills/x/files/data.bin", b"\0", "application/octet-stream"),
    ("api/v1/skills/x/files/LICENSE", b"MIT", "text/plain; charset=utf-8"),
    ("api/v1/skills/x/files/src/main.rs", b"fn main() {}", "text/plain; charset=utf-8"),  # not rls-services+xml
    # Python's table calls .xpdl application/xml and /etc/mime.types calls .apxml an XML type: the registry's
    # table does not know them, so they are text
    ("api/v1/skills/x/files/process.xpdl", b"<x/>", "text/plain; charset=utf-8"),
    ("api/v1/skills/x/files/policy.apxml", b"<x/>", "text/plain; charset=utf-8"),
    # A skill's own file of an executable type (the build never writes one; an output from an older build may hold
    # one) is never sent as that type, raw or as a discovery v0.1 copy.
    ("api/v1/skills/x/files/page.xht", b"<html/>", "text/plain; charset=utf-8"),
    (".well-known/skills/x/assets/diagram.svg", b"<svg/>", "text/plain; charset=utf-8"),
    (".well-known/skills/index.json", b"{}", "application/json; charset=utf-8"),
])
def test_content_types_come_from_the_registrys_one_table(path: str, data: bytes, expected: str) -> None:
    assert content_type(path, data) == expected


# ------------------------------------------------------------------------------------------------ the upload

@pytest.mark.slow
def test_upload_then_only_changes_then_install_from_the_bucket(builds: tuple[Path, Path], endpoint: str,
                                                               bucket: str, project: Path) -> None:
    first, second = builds
    s3 = client(endpoint)
    s3.put_object(Bucket=bucket, Key="other/keep.json", Body=b"{}")
    s3.put_object(Bucket=bucket, Key="registry-old/api/v1/index.json", Body=b"{}")  # shares the prefix's letters
    s3.put_object(Bucket=bucket, Key="reg/stale/left-over.html", Body=b"old")

    result = upload_cli(f"s3://{bucket}/reg", "--out", str(first), "--endpoint-url", endpoint, "--delete-after", "0")
    assert result.exit_code == 0, result.output
    files = files_of(first)
    assert re.fullmatch(rf"Uploaded {len(files)} files \(\d+ immutable, \d+ other, \d+ index\) and deleted 1 "
                        rf"object at s3://{bucket}/reg/; 0 unchanged\n", result.output)
    objects = stored(endpoint, bucket)
    assert {k.removeprefix("reg/") for k in objects if k.startswith("reg/")} == files.keys() | {".skillreg-upload.json"}
    assert {"other/keep.json", "registry-old/api/v1/index.json"} <= objects.keys()
    assert all(objects[f"reg/{p}"] == md5(data) for p, data in files.items())

    # Every object's headers, as a plain HTTP reader (a CDN) gets them.
    base = f"{endpoint}/{bucket}/reg/"
    for path, data in files.items():
        with urllib.request.urlopen(base + urllib.request.quote(path)) as response:
            assert response.headers["Content-Type"] == content_type(path, data), path
            assert response.headers["Cache-Control"] == (LONG if cache_class(path) == IMMUTABLE else SHORT), path
    for path, kind in [("api/v1/index.json", "application/json; charset=utf-8"), ("index.html", "text/html; charset=utf-8"),
                       (".well-known/skills/csv-profiler/SKILL.md", "text/markdown; charset=utf-8")]:
        head = s3.head_object(Bucket=bucket, Key=f"reg/{path}")
        assert (head["ContentType"], head["CacheControl"]) == (kind, SHORT)
    zips = [p for p in files if p.endswith(".zip")]
    head = s3.head_object(Bucket=bucket, Key=f"reg/{zips[0]}")
    assert (head["ContentType"], head["CacheControl"]) == ("application/zip", LONG)

    with RefusingProxy(endpoint) as proxy:
        again = upload_cli(f"s3://{bucket}/reg", "--out", str(first), "--endpoint-url", proxy.url)
    assert again.exit_code == 0 and again.output.startswith("Uploaded 0 files") and \
        again.output.endswith(f"; {len(files)} unchanged\n"), again.output
    # Nothing changed, so nothing is written: one listing and one read of the upload's record.
    assert sorted(proxy.requests) == [("GET", f"/{bucket}"), ("GET", f"/{bucket}/reg/.skillreg-upload.json")]

    newer = files_of(second)
    plan, done = upload(second, f"s3://{bucket}/reg", endpoint_url=endpoint, delete_after=0)
    assert done is not None
    assert sorted(done.uploaded) == sorted(p for p in newer if files.get(p) != newer[p])
    assert sorted(done.deleted) == sorted(f"reg/{p}" for p in files.keys() - newer.keys())
    # The removed skill's files go; csv-profiler's old version stays installable by its zip.
    assert any(REMOVED in key for key in done.deleted)
    assert not any("csv-profiler" in k and k.endswith(".zip") for k in done.deleted)
    phases = [phase_of(p) for p in done.uploaded]
    assert phases == sorted(phases) and done.uploaded[-2:] == ["api/v1/index.json", "api/v1/state.json"]
    objects = stored(endpoint, bucket)
    assert {k.removeprefix("reg/") for k in objects if k.startswith("reg/")} == newer.keys() | {".skillreg-upload.json"}
    assert {"other/keep.json", "registry-old/api/v1/index.json"} <= objects.keys()

    installed = run("install", "csv-profiler", "--registry", base)
    assert installed.exit_code == 0, installed.output
    skill_md = next(project.rglob("csv-profiler/SKILL.md"))
    assert "9.1.0" in skill_md.read_text()
    assert run("install", REMOVED, "--registry", base).exit_code != 0


def test_changed_headers_alone_are_sent_again(builds: tuple[Path, Path], endpoint: str, bucket: str) -> None:
    out = builds[0]
    assert upload_cli(f"s3://{bucket}/reg", "--out", str(out), "--endpoint-url", endpoint).exit_code == 0
    result = upload_cli(f"s3://{bucket}/reg", "--out", str(out), "--endpoint-url", endpoint, "--max-age", "30")
    assert result.exit_code == 0, result.output
    short = [p for p in files_of(out) if cache_class(p) != IMMUTABLE]
    assert result.output.startswith(f"Uploaded {counted(len(short), 'file')} (0 immutable,"), result.output
    head = client(endpoint).head_object(Bucket=bucket, Key="reg/api/v1/state.json")
    assert head["CacheControl"] == "public, max-age=30, must-revalidate"


@pytest.mark.slow
def test_dry_run_and_no_delete_change_nothing_they_should_not(builds: tuple[Path, Path], endpoint: str,
                                                             bucket: str) -> None:
    first, second = builds
    dry = upload_cli(f"s3://{bucket}/reg", "--out", str(first), "--endpoint-url", endpoint, "--dry-run")
    assert dry.exit_code == 0 and dry.output.startswith("Would upload "), dry.output
    assert stored(endpoint, bucket) == {}
    assert upload_cli(f"s3://{bucket}/reg", "--out", str(first), "--endpoint-url", endpoint).exit_code == 0
    kept = upload_cli(f"s3://{bucket}/reg", "--out", str(second), "--endpoint-url", endpoint, "--no-delete")
    assert kept.exit_code == 0 and "and deleted 0 objects" in kept.output, kept.output
    gone = {f"reg/{p}" for p in files_of(first).keys() - files_of(second).keys()}
    assert gone and gone <= stored(endpoint, bucket).keys()
    # A later upload with deletion still removes what the kept ones were.
    assert upload_cli(f"s3://{bucket}/reg", "--out", str(second), "--endpoint-url", endpoint,
                      "--delete-after", "0").exit_code == 0
    assert not gone & stored(endpoint, bucket).keys()


def test_what_the_output_dropped_stays_until_it_has_been_gone_delete_after(builds: tuple[Path, Path],
                                                                         endpoint: str, bucket: str) -> None:
    first, second = builds
    dest = f"s3://{bucket}/reg"
    destination = Destination.parse(dest)
    store = S3Store(bucket, endpoint_url=endpoint)
    assert upload_cli(dest, "--out", str(first), "--endpoint-url", endpoint).exit_code == 0
    gone = {f"reg/{p}" for p in files_of(first).keys() - files_of(second).keys()}
    assert gone

    def upload_at(out: Path, moment: float) -> UploadPlan:
        plan = plan_upload(scan_output(out), destination, store, now=moment)
        run_upload(out, plan, store)
        return plan

    start = 1_800_000_000
    plan = upload_at(second, start)
    # Nothing is deleted yet: a reader holding the old index.json still finds the removed skill's files.
    assert plan.delete == () and set(plan.waiting) == gone
    assert set(plan.waiting.values()) == {start + DELETE_AFTER}
    assert gone <= stored(endpoint, bucket).keys()
    # Later uploads before the hour is up keep them, and keep the time they went (not their own).
    plan = upload_at(second, start + DELETE_AFTER - 1)
    assert plan.delete == () and set(plan.waiting.values()) == {start + DELETE_AFTER}
    # An object that comes back stops waiting; going again starts the wait again.
    plan = upload_at(first, start + DELETE_AFTER - 1)
    assert plan.delete == () and not gone & plan.waiting.keys()
    assert set(plan.waiting) == {f"reg/{p}" for p in files_of(second).keys() - files_of(first).keys()}
    plan = upload_at(second, start + DELETE_AFTER)
    assert plan.delete == () and set(plan.waiting.values()) == {start + 2 * DELETE_AFTER}
    plan = upload_at(second, start + 2 * DELETE_AFTER)
    assert set(plan.delete) == gone and plan.waiting == {}
    assert not gone & stored(endpoint, bucket).keys()
    # The removed skill's old zip is not among them (its versions stay installable).
    assert not any(k.endswith(".zip") and "csv-profiler" in k for k in gone)


def test_the_command_says_what_it_kept_and_until_when(builds: tuple[Path, Path], endpoint: str, bucket: str) -> None:
    first, second = builds
    dest = f"s3://{bucket}/reg"
    assert upload_cli(dest, "--out", str(first), "--endpoint-url", endpoint).exit_code == 0
    gone = files_of(first).keys() - files_of(second).keys()
    dry = upload_cli(dest, "--out", str(second), "--endpoint-url", endpoint, "--dry-run")
    assert re.search(rf"delete 0 objects .*; {counted(len(gone), 'object')} the output dropped kept until "
                     r"\d{4}-\d\d-\d\d \d\d:\d\d UTC at the latest \(--delete-after\)", dry.output), dry.output
    kept = upload_cli(dest, "--out", str(second), "--endpoint-url", endpoint)
    assert kept.exit_code == 0 and "and deleted 0 objects" in kept.output and "kept until" in kept.output
    now = upload_cli(dest, "--out", str(second), "--endpoint-url", endpoint, "--delete-after", "0")
    assert now.exit_code == 0 and f"and deleted {counted(len(gone), 'object')}" in now.output, now.output
    assert "kept until" not in now.output
    assert upload_cli(dest, "--out", str(second), "--delete-after", "-1").exit_code == 2


# --------------------------------------------------------------------------------------- a failure part way

def _changed_zip(first: Path, second: Path) -> str:
    return next(p for p in files_of(second) if p.endswith(".zip") and "csv-profiler" in p and not (first / p).exists())


@pytest.mark.slow
@pytest.mark.parametrize("refused", ["zip", "api/v1/skills/csv-profiler/head.json"])
def test_a_refused_key_stops_the_upload_with_every_index_still_pointing_at_files_that_exist(
        builds: tuple[Path, Path], endpoint: str, bucket: str, refused: str) -> None:
    first, second = builds
    assert upload_cli(f"s3://{bucket}/reg", "--out", str(first), "--endpoint-url", endpoint).exit_code == 0
    before = stored(endpoint, bucket)
    path = _changed_zip(first, second) if refused == "zip" else refused
    with RefusingProxy(endpoint, f"/{bucket}/reg/{path}") as proxy:
        result = upload_cli(f"s3://{bucket}/reg", "--out", str(second), "--endpoint-url", proxy.url)
    assert proxy.refused == 1  # a 403 is not tried again
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith(f"Error: s3://{bucket}/reg/{path}: AccessDenied: Access Denied (")
    after = stored(endpoint, bucket)
    # Nothing was deleted, the later groups were not sent, and the record of the last upload is unchanged.
    assert before.keys() <= after.keys()
    assert after["reg/.skillreg-upload.json"] == before["reg/.skillreg-upload.json"]
    failed_phase = phase_of(path)
    for key, data in after.items():
        rel = key.removeprefix("reg/")
        if key in before and rel != ".skillreg-upload.json" and phase_of(rel) > failed_phase:
            assert data == before[key], rel
    # Every index a reader can fetch now names bundles that exist in the bucket.
    content = by_md5(first, second)
    index = json.loads(content[after["reg/api/v1/index.json"]])
    for skill in index["skills"]:
        detail = json.loads(content[after[f"reg/api/v1/skills/{skill['name']}.json"]])
        head = json.loads(content[after[f"reg/api/v1/skills/{skill['name']}/head.json"]])
        for document in (detail, head):
            for path in _paths(document):
                assert f"reg/{path}" in after, path
    # Run again without the fault (deleting at once): the store becomes the second build exactly.
    assert upload_cli(f"s3://{bucket}/reg", "--out", str(second), "--endpoint-url", endpoint,
                      "--delete-after", "0").exit_code == 0
    final = stored(endpoint, bucket)
    assert {k.removeprefix("reg/"): v for k, v in final.items() if k != "reg/.skillreg-upload.json"} == \
        {p: md5(data) for p, data in files_of(second).items()}


def _paths(document: Any) -> Iterator[str]:
    """Every ``path`` of a published file that ``document`` names (bundles, raw files)."""
    if isinstance(document, dict):
        if isinstance(document.get("path"), str) and document["path"].startswith("api/v1/"):
            yield document["path"]
        for value in document.values():
            yield from _paths(value)
    elif isinstance(document, list):
        for value in document:
            yield from _paths(value)


# ------------------------------------------------------------------------------------------- errors the user sees

@pytest.mark.parametrize(("dest", "message"), [
    ("https://bucket/reg", "Error: https://bucket/reg: not an s3://BUCKET/PREFIX address\n"),
    ("s3:///reg", "Error: s3:///reg: not an s3://BUCKET/PREFIX address\n"),
    ("s3://bkt/reg/../other", "Error: s3://bkt/reg/../other: the prefix may not hold empty, `.` or `..` parts\n"),
    ("s3://bkt/reg//x", "Error: s3://bkt/reg//x: the prefix may not hold empty, `.` or `..` parts\n"),
    ("s3://bad_bucket!/reg", "Error: s3://bad_bucket!/reg: 'bad_bucket!' is not a bucket name\n"),
])
def test_a_bad_destination_is_one_line(dest: str, message: str, builds: tuple[Path, Path]) -> None:
    result = upload_cli(dest, "--out", str(builds[0]))
    assert (result.exit_code, result.output) == (2, message)


def test_a_folder_that_is_not_a_build_is_refused(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("hi")
    result = upload_cli("s3://bkt/reg", "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.output == (f"Error: {tmp_path}: not a built registry (no api/v1/index.json); "
                             f"run `skillreg build --out {tmp_path}` first\n")
    missing = upload_cli("s3://bkt/reg", "--out", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "no such folder" in missing.output


def test_a_link_out_of_the_output_is_refused(builds: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(builds[0], out, symlinks=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the bucket")
    (out / "api/v1/leak.txt").symlink_to(secret)
    result = upload_cli("s3://bkt/reg", "--out", str(out), "--endpoint-url", "http://127.0.0.1:9")
    assert result.exit_code == 2
    assert result.output == (f"Error: {out}/api/v1/leak.txt: a symbolic link out of the output; "
                             "refusing to upload what it names\n")
    (out / "api/v1/leak.txt").unlink()
    (out / "api/v1/elsewhere").symlink_to(tmp_path, target_is_directory=True)
    result = upload_cli("s3://bkt/reg", "--out", str(out), "--endpoint-url", "http://127.0.0.1:9")
    assert (result.exit_code, result.output) == (2, f"Error: {out}/api/v1/elsewhere: a symbolic link to a folder; "
                                                    "the builder writes none, so this output was changed by "
                                                    "something else\n")


def test_store_errors_are_one_line(builds: tuple[Path, Path], endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    out = str(builds[0])
    missing = upload_cli("s3://no-such-bucket/reg", "--out", out, "--endpoint-url", endpoint)
    assert missing.exit_code == 1
    assert missing.output == ("Error: s3://no-such-bucket/reg/ (listing): NoSuchBucket: The specified bucket does "
                              "not exist\n")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    anonymous = upload_cli("s3://any-bucket/reg", "--out", out, "--endpoint-url", endpoint)
    assert anonymous.exit_code == 1
    assert anonymous.output == ("Error: s3://any-bucket/reg/ (listing): no AWS credentials found; set "
                                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or configure them in "
                                "~/.aws/credentials\n")


def test_an_unreachable_store_is_one_line(builds: tuple[Path, Path]) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    result = upload_cli("s3://bkt/reg", "--out", str(builds[0]), "--endpoint-url", f"http://127.0.0.1:{port}")
    assert result.exit_code == 1 and len(result.output.splitlines()) == 1, result.output
    assert result.output.startswith(f"Error: s3://bkt/reg/ (listing): Could not connect to the endpoint URL: "
                                    f'"http://127.0.0.1:{port}/bkt?'), result.output


def test_without_boto3_the_command_says_what_to_install(builds: tuple[Path, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # import boto3 now raises ImportError
    result = upload_cli("s3://bkt/reg", "--out", str(builds[0]))
    assert (result.exit_code, result.output) == (1, "Error: uploading needs boto3: pip install 'skill-registry[s3]'\n")


def test_destination_keys_stay_below_the_prefix() -> None:
    assert Destination.parse("s3://bkt/reg/").key("api/v1/index.json") == "reg/api/v1/index.json"
    assert Destination.parse("s3://bkt").key("index.html") == "index.html"
    assert str(Destination.parse("s3://bkt/a/b")) == "s3://bkt/a/b/"
    assert PHASES[4:6] == ("api/v1/index.json", "api/v1/state.json")


# ---------------------------------------------------------------------------------------------------- signed

@pytest.fixture(scope="module")
def signed_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A signed build (API only) of two bundled skills, with real keys from `skillreg trust init`."""
    root = tmp_path_factory.mktemp("upload-signed")
    registry = make_registry(root / "registry", ["csv-profiler", "secret-scanner"])
    with open(registry / "registry.yaml", "a", encoding="utf-8") as fh:
        fh.write(f"trust:\n  bins: 4\n{LONG_LIVED}")
    made = CliRunner().invoke(cli, ["--config", str(registry / "registry.yaml"), "trust", "init", str(root / "keys")])
    assert made.exit_code == 0, made.output
    commit(registry, "trust: first root")
    build(load_config(registry / "registry.yaml"), root / "out",
          BuildOptions(keep_going=True, site=False, sign=root / "keys"))
    return root / "out"


def test_a_signed_upload_sends_the_metadata_last_and_a_client_verifies_from_the_bucket(
        signed_build: Path, endpoint: str, bucket: str, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan, done = upload(signed_build, f"s3://{bucket}/reg", endpoint_url=endpoint)
    assert done is not None
    tuf = [p for p in done.uploaded if p.startswith("api/v1/tuf/")]
    assert len(tuf) == 4 + 4 and done.uploaded[-len(tuf):] == tuf  # 1 root, targets, 4 bins, snapshot, timestamp
    assert done.uploaded[-1] == "api/v1/tuf/timestamp.json" and done.uploaded[-2].endswith(".snapshot.json")
    assert {"api/v1/index.json", "api/v1/state.json"} <= set(done.uploaded[:-len(tuf)])
    assert [PHASES[phase_of(p)] for p in done.uploaded[-2:]] == ["signed snapshot", "signed timestamp"]
    base = f"{endpoint}/{bucket}/reg/"
    installed = run("install", "csv-profiler", "--registry", base)
    assert installed.exit_code == 0, installed.output
    assert "trusting the signing keys" in installed.output
    assert next(project.rglob("csv-profiler/SKILL.md")).is_file()

    s3 = client(endpoint)  # whoever controls the bucket rewrites what install and info read
    versions = (signed_build / "api/v1/skills/secret-scanner/versions.json").read_bytes()
    s3.put_object(Bucket=bucket, Key="reg/api/v1/skills/secret-scanner/versions.json", Body=versions + b"\n")
    detail = json.loads((signed_build / "api/v1/skills/secret-scanner.json").read_text())
    detail["description"] = "Uploads your keys somewhere else."
    s3.put_object(Bucket=bucket, Key="reg/api/v1/skills/secret-scanner.json", Body=json.dumps(detail).encode())
    before = {p.relative_to(project).as_posix(): p.read_bytes() for p in project.rglob("*") if p.is_file()}
    for args, tampered in ((("install", "secret-scanner"), "secret-scanner/versions.json"),
                           (("info", "secret-scanner"), "secret-scanner.json")):
        refused = run(*args, "--registry", base)
        assert refused.exit_code != 0
        errors = [line for line in refused.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and f"api/v1/skills/{tampered} was tampered with" in errors[0], refused.output
        assert {p.relative_to(project).as_posix(): p.read_bytes() for p in project.rglob("*") if p.is_file()} == \
            before


def test_signed_metadata_is_uploaded_in_tufs_order() -> None:
    order = ["api/v1/skills/csv-profiler/digests.json", "api/v1/state.json", "api/v1/tuf/3.bins-0.json",
             "api/v1/tuf/3.targets.json", "api/v1/tuf/1.root.json", "api/v1/tuf/3.snapshot.json",
             "api/v1/tuf/timestamp.json"]
    phases = [phase_of(p) for p in order]
    assert phases == sorted(phases) and phases[-1] > phases[-2] > phases[-3] > phases[1]
    assert len(set(phases[2:5])) == 1  # the files a snapshot names go together, before it
    assert {cache_class(p) for p in order[2:]} == {INDEX}  # short-lived: the timestamp is what stays fresh
