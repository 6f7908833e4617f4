"""Defaults that fit the host: past ``publish.host_limit`` the build picks the lean settings itself, says so,
records it, keeps it until the registry shrinks well below the limit, and builds the same bytes from scratch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from helpers import REPO
from helpers.build import all_files, git, make_registry

from builder.cli.app import cli
from builder.core.config import load_config, parse_size
from builder.core.errors import ConfigError
from builder.core.urls import STATE_PATH, WELL_KNOWN_V1
from builder.publish.build import BuildOptions, build
from builder.publish.folder_changes import survey
from builder.publish.host_fit import CHOICE_FILE, folder_bytes, skill_sizes
from builder.publish.schemas import load_schema

PAYLOAD = "skills/csv-profiler/references/payload.md"
# The three skills publish about 0.1 MB beside their files; each byte of a file is published about 3.5 times with
# the default settings. Against a 1 MB limit: 400 KB passes it, 200 KB lies between half of it and the whole,
# 30 KB is well below half.
BIG, SLIGHTLY_SMALLER, SMALL = 400_000, 200_000, 30_000


def payload(size: int) -> str:
    line = "A line of reference text that the skill reads when it needs it.\n"
    return "# Payload\n\n" + line * (size // len(line))


def registry(root: Path, publish: str = "  host_limit: 1MB\n", size: int = BIG) -> Path:
    make_registry(root, commit=False)
    text = (REPO / "registry.yaml").read_text(encoding="utf-8")
    (root / "registry.yaml").write_text(f"{text.rstrip()}\npublish:\n{publish}", encoding="utf-8")
    (root / PAYLOAD).write_text(payload(size), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def resize(root: Path, size: int) -> None:
    (root / PAYLOAD).write_text(payload(size), encoding="utf-8")
    git(root, "commit", "-q", "-am", f"payload of {size}")


def build_into(root: Path, out: Path, cache: Path) -> list[str]:
    """Build as `skillreg build` does; the lines it printed."""
    result = CliRunner().invoke(cli, ["--config", str(root / "registry.yaml"), "build", "--no-site", "--out",
                                      str(out), "--bundle-cache", str(cache)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def state(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / STATE_PATH).read_bytes())
    return data


def is_lean(out: Path) -> bool:
    """What the output holds says which settings it was built with."""
    lean = not (out / WELL_KNOWN_V1).exists()
    assert lean == (not any((out / "api/v1/bundles").rglob("*.json")))
    return lean


def test_past_the_limit_the_build_chooses_the_lean_settings_and_says_why(tmp_path: Path) -> None:
    root = registry(tmp_path / "repo")
    lines = build_into(root, tmp_path / "site", tmp_path / "cache")
    said = [line for line in lines if line.startswith("Published with lean settings")]
    assert len(said) == 1
    assert "past the host's limit of 1.0 MB (publish.host_limit)" in said[0]
    assert is_lean(tmp_path / "site")
    published = state(tmp_path / "site")
    assert published["publish"]["chosen"] == "lean" and published["publish"]["reason"] == "over_limit"
    assert published["publish"]["host_limit"] == 1_000_000 < published["publish"]["projected_bytes"]
    jsonschema.validate(published, load_schema("state"))
    assert json.loads((tmp_path / "cache" / CHOICE_FILE).read_bytes())["chosen"] == "lean"


def test_when_even_lean_passes_the_limit_the_build_warns_once_and_records_it(tmp_path: Path) -> None:
    # 400 KB of files project to about 0.3 MB with the lean settings but page_body: past a 0.15 MB limit too.
    root = registry(tmp_path / "repo", "  host_limit: 150KB\n  page_body: inline\n")
    result = CliRunner().invoke(cli, ["--config", str(root / "registry.yaml"), "build", "--no-site", "--out",
                                      str(tmp_path / "site"), "--bundle-cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.output.splitlines() if "even the lean settings" in line]
    assert len(warned) == 1
    assert warned[0].startswith("Warning: even the lean settings would publish about 0.")
    assert "past the host's limit of 0.1 MB (publish.host_limit)" in warned[0]
    assert 'drop page_body: "inline" from `publish:` in registry.yaml' in warned[0]
    assert "keep fewer versions (history.keep)" in warned[0]
    published = state(tmp_path / "site")["publish"]
    assert published["fits"] is False
    assert published["projected_bytes"] > published["chosen_projected_bytes"] > published["host_limit"] == 150_000
    jsonschema.validate(state(tmp_path / "site"), load_schema("state"))
    assert is_lean(tmp_path / "site")


def test_a_lean_output_that_fits_says_so_and_warns_nothing(tmp_path: Path) -> None:
    root = registry(tmp_path / "repo")
    result = CliRunner().invoke(cli, ["--config", str(root / "registry.yaml"), "build", "--no-site", "--out",
                                      str(tmp_path / "site"), "--bundle-cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    assert "even the lean settings" not in result.output
    published = state(tmp_path / "site")["publish"]
    assert published["fits"] is True
    assert published["chosen_projected_bytes"] <= published["host_limit"] < published["projected_bytes"]


def test_under_the_limit_the_defaults_stay_and_nothing_is_said(tmp_path: Path) -> None:
    root = registry(tmp_path / "repo", size=SMALL)
    lines = build_into(root, tmp_path / "site", tmp_path / "cache")
    assert not [line for line in lines if "lean settings" in line]
    assert not is_lean(tmp_path / "site")
    assert "publish" not in state(tmp_path / "site")


def test_settings_registry_yaml_writes_win_over_the_choice(tmp_path: Path) -> None:
    root = registry(tmp_path / "repo", "  host_limit: 1MB\n  well_known_skills: true\n")
    build_into(root, tmp_path / "site", tmp_path / "cache")
    out = tmp_path / "site"
    assert (out / WELL_KNOWN_V1 / "csv-profiler/references/payload.md").is_file()  # written: kept
    assert not any((out / "api/v1/bundles").rglob("*.json"))  # not written: chosen lean
    assert state(out)["publish"]["chosen"] == "lean"


def test_a_registry_writing_every_setting_is_never_changed_but_is_warned_past_the_limit(tmp_path: Path) -> None:
    every = "  host_limit: 1MB\n  raw_files: all\n  json_bundles: true\n  well_known_skills: true\n  page_body: inline\n"
    root = registry(tmp_path / "repo", every)
    lines = build_into(root, tmp_path / "site", tmp_path / "cache")
    assert not [line for line in lines if "lean settings" in line]
    warned = [line for line in lines if "past the host's limit" in line]
    assert len(warned) == 1 and warned[0].startswith("Warning: the settings registry.yaml writes would publish about")
    assert 'drop raw_files: "all", json_bundles: true, well_known_skills: true, page_body: "inline"' in warned[0]
    assert not is_lean(tmp_path / "site")
    published = state(tmp_path / "site")["publish"]
    assert published["chosen"] == "written" and published["fits"] is False
    assert published["projected_bytes"] == published["chosen_projected_bytes"] > published["host_limit"]
    jsonschema.validate(state(tmp_path / "site"), load_schema("state"))
    resize(root, SMALL)  # the same settings within the limit: nothing said, nothing recorded
    lines = build_into(root, tmp_path / "site", tmp_path / "cache")
    assert not [line for line in lines if "past the host's limit" in line]
    assert "publish" not in state(tmp_path / "site")
    assert not is_lean(tmp_path / "site")


def test_lean_is_kept_until_the_registry_shrinks_well_below_the_limit(tmp_path: Path) -> None:
    root = registry(tmp_path / "repo")
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_into(root, out, cache)
    resize(root, SLIGHTLY_SMALLER)
    lines = build_into(root, out, cache)
    assert is_lean(out)
    assert state(out)["publish"]["reason"] == "kept"
    assert any("kept from the last build until the projection falls under 0.5 MB, half the host's limit" in line
               for line in lines)
    resize(root, SMALL)
    lines = build_into(root, out, cache)
    assert not is_lean(out)
    assert "publish" not in state(out)
    assert not [line for line in lines if "lean settings" in line]
    assert not (cache / CHOICE_FILE).exists()  # forgotten: the projection alone decides from here
    resize(root, SLIGHTLY_SMALLER)  # between half and the whole again: the defaults stay, as nothing was lean
    build_into(root, out, cache)
    assert not is_lean(out)


def test_a_build_from_scratch_makes_the_recorded_choice_and_the_same_bytes(tmp_path: Path) -> None:
    """A fresh checkout in CI has no output, only the bundle cache it restores: it sees the choice there."""
    root = registry(tmp_path / "repo")
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_into(root, out, cache)
    resize(root, SLIGHTLY_SMALLER)
    build_into(root, out, cache)  # a rebuild: lean kept
    cold = tmp_path / "cold"
    build_into(root, cold, cache)
    assert state(cold)["publish"]["reason"] == "kept"
    assert all_files(cold) == all_files(out)


@pytest.mark.slow
def test_with_the_website_a_build_from_scratch_is_the_same_bytes_as_a_rebuild(tmp_path: Path) -> None:
    root = registry(tmp_path / "repo")
    out, cache = tmp_path / "site", tmp_path / "cache"
    options = BuildOptions(bundle_cache=cache)
    build(load_config(root / "registry.yaml"), out, options)
    resize(root, SLIGHTLY_SMALLER)
    build(load_config(root / "registry.yaml"), out, options)
    build(load_config(root / "registry.yaml"), tmp_path / "cold", options)
    assert (out / "skills/csv-profiler/skill-md.html.gz").is_file()  # page_body: fetched, chosen
    assert all_files(tmp_path / "cold") == all_files(out)


def test_without_the_record_the_projection_alone_decides(tmp_path: Path) -> None:
    root = registry(tmp_path / "repo")
    out = tmp_path / "site"
    build(load_config(root / "registry.yaml"), out, BuildOptions(site=False, bundle_cache=tmp_path / "cache"))
    resize(root, SLIGHTLY_SMALLER)
    build(load_config(root / "registry.yaml"), tmp_path / "elsewhere",
          BuildOptions(site=False, bundle_cache=tmp_path / "other-cache"))
    assert not is_lean(tmp_path / "elsewhere")


@pytest.mark.parametrize(("value", "size"), [
    ("1GB", 10**9), ("500 MB", 5 * 10**8), ("2GiB", 2 * 2**30), ("1.5GB", 1_500_000_000), (123456, 123456),
    ("0", None), ("lots", None), (True, None), (-1, None),
])
def test_host_limit_is_a_size(value: object, size: int | None) -> None:
    assert parse_size(value) == size


def test_a_host_limit_that_is_no_size_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "registry.yaml").write_text("title: x\npublish:\n  host_limit: lots\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "registry.yaml")
    assert str(caught.value) == (f"{tmp_path / 'registry.yaml'}:3: `publish.host_limit` must be a size such as "
                                 "1GB or 500MB, got 'lots'")


def test_the_default_limit_is_what_pages_publishes(tmp_path: Path) -> None:
    (tmp_path / "registry.yaml").write_text("title: x\n", encoding="utf-8")
    assert load_config(tmp_path / "registry.yaml").publish.host_limit == 10**9


def test_outside_git_the_sizes_are_stated_once_and_handed_to_the_change_survey(tmp_path: Path) -> None:
    """A folder git does not sign is stated path by path as the sizes record lists it: its size is the files' bytes
    as they are now, and its entries and signature are the change survey's, so the build does not state it again."""
    repo = make_registry(tmp_path / "repo", commit=False)
    folders = [(f"skills/{p.name}", p) for p in sorted((repo / "skills").iterdir())]
    state = tmp_path / "state"
    first = skill_sizes(folders, lambda paths: {}, {}, state)
    assert first == [folder_bytes(folder) for _, folder in folders]
    restated: dict[str, tuple[str, str]] = {}
    assert skill_sizes(folders, lambda paths: {}, {}, state, restated) == first
    assert restated == {path: survey(folder)[::-1] for path, folder in folders}
    skill_md = folders[0][1] / "SKILL.md"
    skill_md.write_bytes(skill_md.read_bytes() + b"\nmore\n")
    (folders[1][1] / "new.md").write_bytes(b"new\n")
    again: dict[str, tuple[str, str]] = {}
    assert skill_sizes(folders, lambda paths: {}, {}, state, again) == [first[0] + 6, first[1] + 4, *first[2:]]
    assert again == {path: survey(folder)[::-1] for path, folder in folders}
