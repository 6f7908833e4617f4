"""Signing at scale: a rebuild signs again only the bins of the skills it changed, with exactly the result a cold
signing of the same tree gives (python-tuf's client is the judge), and the bin count follows the registry's size
without flapping. Real builds of the bundled registry, real keys from `skillreg trust init`, served on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import LONG_LIVED
from helpers.client import GIT_ENV, RegistryServer, commit, edit_csv_profiler
from helpers.trust import signing_registry
from tuf.api.metadata import Metadata, TargetFile, Targets
from tuf.ngclient import Updater, UpdaterConfig

from builder.core.config import load_config
from builder.core.urls import skill_units
from builder.publish.build import BuildOptions, build
from builder.signing import metadata as trust
from builder.signing.bins import MAX_BINS, MIN_BINS, SKILLS_PER_BIN, bins_for
from builder.signing.digests import DIGESTS_NAME, digests_document, digests_path
from builder.signing.expiry import first_expiring
from builder.signing.metadata import TUF_DIR, published_skills, sign_output


class DigestReads:
    """Counts the skills whose digests.json a signing hashes (wraps trust._target)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._real = trust._target

    def __call__(self, out: Path, rel: str) -> TargetFile:
        if rel.endswith("/" + DIGESTS_NAME):
            self.names.append(rel.split("/")[-2])
        return self._real(out, rel)


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> DigestReads:
    counter = DigestReads()
    monkeypatch.setattr(trust, "_target", counter)
    return counter


def _signed_build(registry: Path, out: Path, keys: Path, *, sign: bool = True) -> Path:
    build(load_config(registry / "registry.yaml"), out,
          BuildOptions(keep_going=True, site=False, sign=keys if sign else None))
    return out


def _metadata(site: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (site / TUF_DIR).iterdir()}


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """A signed build of the bundled registry (default bins), then a signed rebuild after csv-profiler changed."""
    base = tmp_path_factory.mktemp("signing")
    registry, keys = signing_registry(base, "")
    site = _signed_build(registry, base / "site", keys)
    v1 = base / "site-v1"
    shutil.copytree(site, v1)
    edit_csv_profiler(registry)
    counter = DigestReads()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trust, "_target", counter)
        _signed_build(registry, site, keys)
    (base / "rebuild-reads.json").write_text(json.dumps(counter.names))
    yield {"registry": registry, "keys": keys, "v1": v1, "v2": site, "base": base}


def _verified(site: Path, cache: Path, paths: list[str]) -> dict[str, TargetFile | None]:
    """What python-tuf's client, trusting the registry's first root, says each of ``paths`` must be."""
    cache.mkdir(parents=True)
    with RegistryServer(site) as server:
        updater = Updater(metadata_dir=str(cache), metadata_base_url=f"{server.url}{TUF_DIR}/",
                          target_base_url=server.url, target_dir=str(cache / "targets"),
                          config=UpdaterConfig(prefix_targets_with_hash=False),
                          bootstrap=(site / TUF_DIR / "1.root.json").read_bytes())
        updater.refresh()
        return {path: updater.get_targetinfo(path) for path in paths}


def _snapshot_version(site: Path) -> int:
    return int(json.loads((site / TUF_DIR / "timestamp.json").read_bytes())["signed"]["meta"]["snapshot.json"]["version"])


def _skill_targets(site: Path) -> list[str]:
    return [digests_path(name) for name in published_skills(site)] + ["api/v1/index.json"]


def test_the_default_bin_count_follows_the_number_of_skills() -> None:
    assert bins_for(0) == MIN_BINS and bins_for(26) == MIN_BINS
    assert bins_for(MIN_BINS * SKILLS_PER_BIN) == MIN_BINS
    assert bins_for(MIN_BINS * SKILLS_PER_BIN + 1) == 2 * MIN_BINS
    assert bins_for(60_000) == 2048
    assert bins_for(10 ** 9) == MAX_BINS
    assert bins_for(26, previous=256) == 256  # never shrinks by itself
    assert bins_for(60_000, previous=256) == 2048


def test_a_small_registry_gets_few_bins(signed: dict[str, Path]) -> None:
    bins = [n for n in _metadata(signed["v1"]) if ".bins-" in n]
    assert len(bins) == MIN_BINS


def test_a_one_skill_rebuild_signs_one_bin_again(signed: dict[str, Path]) -> None:
    """No skill's digests.json is read (csv-profiler's worker reported its length and sha256); its bin, the
    top-level targets (index.json changed), the snapshot and the timestamp are new, every other file keeps its name
    and bytes."""
    assert json.loads((signed["base"] / "rebuild-reads.json").read_text()) == []
    v1, v2 = _metadata(signed["v1"]), _metadata(signed["v2"])
    new = sorted(n for n in v2 if v1.get(n) != v2[n])
    roles = sorted(n.split(".", 1)[1] for n in new)
    assert len(new) == 4, new
    assert roles[0].startswith("bins-") and roles[1:] == ["json", "snapshot.json", "targets.json"]
    csv_bin = next(n for n in new if ".bins-" in n)
    assert digests_path("csv-profiler") in Metadata[Targets].from_bytes(v2[csv_bin]).signed.targets
    assert sum(".bins-" in n for n in v2) == MIN_BINS


def test_the_rebuild_verifies_as_a_cold_signing_of_the_same_tree(signed: dict[str, Path], tmp_path: Path) -> None:
    """Sign v2's tree again from scratch (every skill read), from the same previous metadata: every file but the
    timestamp has the same bytes, and python-tuf's client sees the same targets."""
    cold = tmp_path / "cold"
    shutil.copytree(signed["v2"], cold)
    shutil.rmtree(cold / TUF_DIR)
    shutil.copytree(signed["v1"] / TUF_DIR, cold / TUF_DIR)
    sign_output(load_config(signed["registry"] / "registry.yaml"), cold, signed["keys"])
    incremental, scratch = _metadata(signed["v2"]), _metadata(cold)
    assert sorted(incremental) == sorted(scratch)
    # Only the timestamp may differ: it reads the clock, and two signings within one second sign the same one.
    assert {n for n in incremental if incremental[n] != scratch[n]} <= {"timestamp.json"}
    paths = _skill_targets(signed["v2"])
    seen = _verified(signed["v2"], tmp_path / "client-a", paths)
    assert seen == _verified(cold, tmp_path / "client-b", paths)
    assert all(seen[p] is not None for p in paths)
    csv = seen[digests_path("csv-profiler")]
    assert csv is not None
    csv.verify_length_and_hashes((signed["v2"] / digests_path("csv-profiler")).read_bytes())


def test_a_signing_build_writes_each_digests_json_from_the_bytes_it_staged(
        signed: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers write a built skill's digests.json from what they staged, so the signing stage reads the files
    of none of them; only a skill kept from an unsigned build, which has none, gets one made from the output. Both
    ways give the bytes the output's files give."""
    made: list[str] = []

    def counted(out: Path, name: str) -> bytes:
        made.append(name)
        return digests_document(out, name)

    monkeypatch.setattr(trust, "digests_document", counted)
    cold = _signed_build(signed["registry"], tmp_path / "cold", signed["keys"])
    assert made == []
    names = published_skills(cold)
    assert all((cold / digests_path(name)).read_bytes() == digests_document(cold, name) for name in names)

    registry = tmp_path / "registry"
    shutil.copytree(signed["registry"], registry)
    site = _signed_build(registry, tmp_path / "site", signed["keys"], sign=False)
    assert not any((site / digests_path(name)).exists() for name in names)
    skill_md = registry / "skills" / "adr-writer" / "SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    commit(registry, "adr-writer: one more line")
    _signed_build(registry, site, signed["keys"])
    assert sorted(made) == [name for name in names if name != "adr-writer"]
    assert all((site / digests_path(name)).read_bytes() == digests_document(site, name) for name in names)
    seen = _verified(site, tmp_path / "client", _skill_targets(site))
    for path, target in seen.items():
        assert target is not None, path
        target.verify_length_and_hashes((site / path).read_bytes())


def test_an_unsigned_build_in_between_makes_the_next_signing_read_everything(
        signed: dict[str, Path], tmp_path: Path, reads: DigestReads) -> None:
    """The unsigned build changed adr-writer without signing: the next signed build cannot trust its own list of
    changes, reads every skill but the one it retired (its worker reported that digests.json), and adr-writer's
    signed digests match its files. A retired skill's digests are signed again too; a later one-skill rebuild is
    incremental again."""
    registry = tmp_path / "registry"
    shutil.copytree(signed["registry"], registry)
    site = _signed_build(registry, tmp_path / "site", signed["keys"])  # this test's own build record
    skill_md = registry / "skills" / "adr-writer" / "SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    commit(registry, "adr-writer: one more line")
    _signed_build(registry, site, signed["keys"], sign=False)
    assert (site / TUF_DIR / "timestamp.json").is_file()  # a rebuild in place: the old metadata stays
    reads.names.clear()
    shutil.rmtree(registry / "skills" / "todo-collector")
    commit(registry, "todo-collector retired")
    _signed_build(registry, site, signed["keys"])
    assert sorted(reads.names) == [name for name in published_skills(site) if name != "todo-collector"]
    for name in ("adr-writer", "todo-collector"):
        assert (site / digests_path(name)).read_bytes() == digests_document(site, name)
    seen = _verified(site, tmp_path / "client", _skill_targets(site))
    for path, target in seen.items():
        assert target is not None, path
        target.verify_length_and_hashes((site / path).read_bytes())
    reads.names.clear()
    readme = registry / "skills" / "readme-writer" / "SKILL.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nAnother line.\n", encoding="utf-8")
    commit(registry, "readme-writer: another line")
    _signed_build(registry, site, signed["keys"])
    assert sorted(reads.names) == ["todo-collector"]  # retired skills are always passed; readme-writer's is known


def test_a_damaged_bin_in_the_output_makes_the_signing_read_everything(signed: dict[str, Path], tmp_path: Path,
                                                                        reads: DigestReads) -> None:
    site = tmp_path / "site"
    shutil.copytree(signed["v1"], site)
    csv_bin = next(n for n in _metadata(signed["v2"]) if ".bins-" in n and n not in _metadata(signed["v1"]))
    role = csv_bin.split(".", 1)[1]
    damaged = next(p for p in (site / TUF_DIR).iterdir() if p.name.endswith("." + role))
    damaged.write_bytes(damaged.read_bytes().replace(b'"sig": "', b'"sig": "00', 1))
    index = (site / "api/v1/index.json").read_bytes()
    sign_output(load_config(signed["registry"] / "registry.yaml"), site, signed["keys"], changed={"csv-profiler"},
                index_before=index)
    assert sorted(reads.names) == published_skills(site)
    seen = _verified(site, tmp_path / "client", _skill_targets(site))
    assert all(target is not None for target in seen.values())


def test_the_bin_count_does_not_shrink_when_the_override_goes(signed: dict[str, Path], tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    shutil.copytree(signed["registry"], registry)
    site = tmp_path / "site"
    shutil.copytree(signed["v2"], site)
    config_file = registry / "registry.yaml"
    plain = config_file.read_text(encoding="utf-8")
    config_file.write_text(plain.replace("trust:\n", "trust:\n  bins: 64\n"), encoding="utf-8")
    before = _snapshot_version(site)
    sign_output(load_config(config_file), site, signed["keys"])
    assert sum(".bins-" in n for n in _metadata(site)) == 64
    assert _snapshot_version(site) == before + 1  # the same commit, another snapshot: a higher version
    config_file.write_text(plain, encoding="utf-8")
    sign_output(load_config(config_file), site, signed["keys"])
    assert sum(".bins-" in n for n in _metadata(site)) == 64
    assert all(t is not None for t in _verified(site, tmp_path / "client", _skill_targets(site)).values())


def test_a_skill_gone_from_the_output_leaves_its_bin(signed: dict[str, Path], tmp_path: Path,
                                                     reads: DigestReads) -> None:
    """A removed skill (its files gone from the output) is named in ``changed``: its target leaves its bin, no
    other skill is read, and python-tuf's client no longer knows it."""
    site = tmp_path / "site"
    shutil.copytree(signed["v2"], site)
    index = (site / "api/v1/index.json").read_bytes()
    for rel in skill_units("todo-collector"):
        path = site / rel
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    before = _metadata(site)
    signing = sign_output(load_config(signed["registry"] / "registry.yaml"), site, signed["keys"],
                          changed={"todo-collector"}, index_before=index)
    assert reads.names == []
    assert signing.first_expiry is not None and signing.first_expiry == first_expiring(site)
    after = _metadata(site)
    assert len([n for n in after if ".bins-" in n and before.get(n) != after[n]]) == 1
    seen = _verified(site, tmp_path / "client", [digests_path("todo-collector"), digests_path("adr-writer")])
    assert seen[digests_path("todo-collector")] is None and seen[digests_path("adr-writer")] is not None


@pytest.mark.parametrize(("days_later", "renewed"), [(10, False), (200, True)])
def test_metadata_no_change_touches_is_renewed_at_half_its_life(signed: dict[str, Path], tmp_path: Path,
                                                                 days_later: int, renewed: bool) -> None:
    """A commit that touches no skill, 10 or 200 days after the signed one (metadata lasts a year from its
    commit here): at 10 days every bin keeps its bytes; at 200, less than half a year would be left, so every
    bin is signed again with a year from the new commit, and python-tuf's client still verifies every skill."""
    registry = tmp_path / "registry"
    shutil.copytree(signed["registry"], registry)
    config_file = registry / "registry.yaml"
    config_file.write_text(config_file.read_text(encoding="utf-8").replace(LONG_LIVED, "  metadata_days: 365\n"),
                           encoding="utf-8")
    site = tmp_path / "site"
    shutil.copytree(signed["v2"], site)
    shutil.rmtree(site / TUF_DIR)
    sign_output(load_config(config_file), site, signed["keys"])  # from scratch: a year from the same commit
    before = {n: b for n, b in _metadata(site).items() if ".bins-" in n}
    later = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC) + dt.timedelta(days=days_later)
    (registry / "NOTES.md").write_text("not a skill\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=registry, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "notes"], cwd=registry, check=True,
                   env={**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": later.isoformat()})
    index = (site / "api/v1/index.json").read_bytes()  # no unsigned build in between: only changed bins are read
    signing = sign_output(load_config(config_file), site, signed["keys"], changed=set(), index_before=index)
    # What the signing says expires first is what the files it left say, kept or signed again.
    assert signing.first_expiry is not None and signing.first_expiry == first_expiring(site)
    after = {n: b for n, b in _metadata(site).items() if ".bins-" in n}
    assert len(after) == len(before)
    if not renewed:
        assert after == before
    else:
        assert not set(after) & set(before)  # every bin has a new version
        expiries = {Metadata[Targets].from_bytes(b).signed.expires for b in after.values()}
        assert expiries == {later + dt.timedelta(days=365)}
    assert all(t is not None for t in _verified(site, tmp_path / "client", _skill_targets(site)).values())
