"""A full or read-only disk during `skillreg build` or `skillreg export` is one line naming the output and what
to do, exit 1, no traceback, the previous output intact and no temporary folder left.

The disks are small tmpfs mounts made by the test, which needs root (or CAP_SYS_ADMIN); elsewhere it skips.
"""

from __future__ import annotations

import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.build import SKILLS, all_files, leftovers, make_registry, skillreg

from builder.core.config import load_config
from builder.publish.build import BuildOptions, build

pytestmark = pytest.mark.slow  # tmpfs mounts

FULL = "the disk is full; free some space and run the command again"
READ_ONLY = "the file system is read-only; pick a writable location"


class Disk:
    def __init__(self, path: Path) -> None:
        self.path = path

    def resize(self, size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", str(self.path)], check=True, capture_output=True)

    def remount(self, option: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{option}", str(self.path)], check=True, capture_output=True)

    def fill(self) -> Path:
        """Take every free block, so the next file written fails with ENOSPC."""
        filler = self.path / "filler"
        with open(filler, "wb", buffering=0) as fh:
            try:
                while fh.write(b"\0" * 4096):
                    pass
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        return filler


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    # 2 MB: room for the API, whose sharded search index is a few hundred small files (a 4 KB page each on
    # tmpfs), but not for the website, whose theme alone takes 3 MB.
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield Disk(mount_point)
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], check=True)


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "repo", SKILLS[:1])


def build_into(registry: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return skillreg(["build", "--out", str(out), *extra], cwd=registry)


def edit(registry: Path) -> None:
    md = registry / "skills" / SKILLS[0] / "SKILL.md"
    md.write_text(md.read_text() + "\nAn added line.\n")


def clean_build(registry: Path, tmp_path: Path, site: bool) -> dict[str, bytes]:
    fresh = tmp_path / "fresh"
    build(load_config(registry / "registry.yaml"), fresh, BuildOptions(site=site))
    return all_files(fresh)


@pytest.mark.parametrize("extra", [["--no-site"], ["--no-site", "--jobs", "2"], []], ids=["api", "workers", "site"])
def test_a_full_disk_during_a_rebuild_is_one_line_and_keeps_the_output(disk: Disk, registry: Path, tmp_path: Path,
                                                                        extra: list[str]) -> None:
    out = disk.path / "site"
    if "--no-site" not in extra:
        disk.resize("8m")  # the website's theme assets take 3 MB
    assert build_into(registry, out, *extra).returncode == 0
    before = all_files(out)
    filler = disk.fill()
    edit(registry)
    done = build_into(registry, out, *extra)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"Error: {out}: {FULL} (the previous output is unchanged)\n"
    assert all_files(out) == before
    assert leftovers(disk.path, "site") == []
    filler.unlink()
    again = build_into(registry, out, *extra)
    assert again.returncode == 0, again.stderr
    assert all_files(out) == clean_build(registry, tmp_path, site="--no-site" not in extra)


def test_a_full_disk_during_a_first_build_writes_nothing(disk: Disk, registry: Path) -> None:
    disk.fill()
    out = disk.path / "public"
    done = build_into(registry, out, "--no-site")
    assert done.returncode == 1
    assert done.stderr == f"Error: {out}: {FULL} (nothing was written)\n"
    assert not out.exists() and leftovers(disk.path, "public") == []


def test_a_read_only_disk_is_one_line_and_keeps_the_output(disk: Disk, registry: Path) -> None:
    out = disk.path / "site"
    assert build_into(registry, out, "--no-site").returncode == 0
    before = all_files(out)
    disk.remount("ro")
    edit(registry)
    done = build_into(registry, out, "--no-site")
    assert done.returncode == 1
    assert done.stderr == f"Error: {out}: {READ_ONLY} (the previous output is unchanged)\n"
    assert all_files(out) == before
    other = disk.path / "other"
    done = build_into(registry, other, "--no-site")
    assert done.stderr == f"Error: {other}: {READ_ONLY} (nothing was written)\n"
    disk.remount("rw")
    assert build_into(registry, out, "--no-site").returncode == 0


def test_a_full_disk_under_the_state_folder_names_the_journal(disk: Disk, registry: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The builder's records (lock, journal, manifest) live in the user's state folder, which can fill too."""
    monkeypatch.setenv("SKILLREG_STATE_DIR", str(disk.path / "state"))
    out = tmp_path / "site"
    assert build_into(registry, out, "--no-site").returncode == 0
    before = all_files(out)
    disk.fill()
    edit(registry)
    done = build_into(registry, out, "--no-site")
    assert done.returncode == 1
    journal = next((disk.path / "state" / "builds").iterdir()) / "journal.json"
    assert done.stderr == f"Error: {journal}: {FULL}\n"
    assert all_files(out) == before and leftovers(tmp_path, "site") == []


def test_a_website_that_does_not_fit_names_the_output(disk: Disk, registry: Path) -> None:
    """The theme's files are copied by mkdocs: the error names the theme file and our staging copy; the user
    reads about the output instead."""
    out = disk.path / "site"
    done = build_into(registry, out)
    assert done.returncode == 1
    assert done.stderr == f"Error: {out}: {FULL} (nothing was written)\n"
    assert sorted(p.name for p in disk.path.iterdir()) == []


@pytest.mark.parametrize("failure", ["full", "read-only"])
def test_export_to_a_failing_disk_names_the_file_and_leaves_the_old_one(disk: Disk, registry: Path,
                                                                        failure: str) -> None:
    target = disk.path / "csv-profiler.txt"
    target.write_text("the previous export\n")
    if failure == "full":
        disk.fill()
    else:
        disk.remount("ro")
    done = skillreg(["export", SKILLS[0], "-o", str(target)], cwd=registry)
    assert done.returncode == 1
    assert done.stderr == f"Error: {target}: {FULL if failure == 'full' else READ_ONLY}\n"
    assert target.read_text() == "the previous export\n"
    assert sorted(p.name for p in disk.path.iterdir()) == sorted(["csv-profiler.txt"] + (["filler"] if failure == "full" else []))
