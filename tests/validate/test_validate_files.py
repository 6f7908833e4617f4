"""File rules (SK5xx) for what git cannot hold or must not be committed: made in ``tmp_path`` by each test.

Symbolic links, FIFOs, junk such as ``__pycache__/``, control characters and invalid UTF-8 in names, paths over
200 characters and two paths equal but for case. ``..``, absolute paths and NUL cannot exist as names on disk,
so they are checked through ``path_problems``, which import and install share with the loader.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import write_tree

from builder.core.config import RegistryConfig, load_config
from builder.core.loader import load_skill, path_problems
from builder.validate.run import validate_paths

SKILL_MD = """\
---
name: demo
description: Demonstrates one file rule. Use when testing skillreg validate.
---
# Demo

Follow these steps.
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RegistryConfig:
    """A registry in tmp_path holding skills/demo/SKILL.md; the tests run from its root."""
    write_tree(tmp_path, {"registry.yaml": "title: Test registry\n", "skills/demo/SKILL.md": SKILL_MD})
    monkeypatch.chdir(tmp_path)
    return load_config(tmp_path / "registry.yaml")


def findings(config: RegistryConfig, path: str = "skills") -> list[tuple[str, str, str]]:
    report = validate_paths([Path(path)], config, "spec")
    return [(d.code, d.file, d.message) for d in report.diagnostics]


def test_the_demo_skill_is_clean(registry: RegistryConfig) -> None:
    assert findings(registry) == []


def test_symlink_pointing_outside_the_repository(registry: RegistryConfig) -> None:
    os.symlink("/etc/passwd", "skills/demo/passwd")
    assert findings(registry) == [
        ("SK501", "skills/demo/passwd", "`passwd` is a symbolic link to '/etc/passwd' outside the repository"),
    ]


def test_symlink_inside_the_skill_is_still_an_error_but_not_called_outside(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"references/guide.md": "# Guide\n"})
    os.symlink("../references/guide.md", "skills/demo/references/link.md")
    assert findings(registry) == [
        ("SK501", "skills/demo/references/link.md", "`references/link.md` is a symbolic link to '../references/guide.md'"),
    ]


def test_symlink_reached_through_a_symlinked_folder_is_judged_by_where_it_really_is(
        registry: RegistryConfig, tmp_path: Path) -> None:
    """The repository root is resolved; so must the link's folder be, or every link looks 'outside'."""
    os.symlink("SKILL.md", "skills/demo/alias.md")
    os.symlink(tmp_path, tmp_path.parent / (tmp_path.name + "-alias"))
    via_alias = tmp_path.parent / (tmp_path.name + "-alias") / "skills" / "demo"
    report = validate_paths([via_alias], registry, "spec")
    assert [(d.code, d.message) for d in report.diagnostics] == [
        ("SK501", "`alias.md` is a symbolic link to 'SKILL.md'"),
    ]


def test_a_symlinked_skill_folder_inside_the_repository_counts_by_its_real_folder(
        registry: RegistryConfig, tmp_path: Path) -> None:
    write_tree(tmp_path / "elsewhere", {"SKILL.md": SKILL_MD.replace("name: demo", "name: elsewhere")})
    os.symlink(tmp_path / "elsewhere", "skills/linked")
    os.symlink("demo", "skills/demo-again")
    report = validate_paths([Path("skills")], registry, "spec")
    assert report.diagnostics == ()
    assert sorted(s.folder.name for s in report.skills) == ["demo", "elsewhere"]


def test_a_symlinked_skill_folder_outside_the_repository_is_refused_in_one_line(
        registry: RegistryConfig, tmp_path: Path) -> None:
    outside = write_tree(tmp_path.parent / f"{tmp_path.name}-outside",
                         {"SKILL.md": SKILL_MD.replace("name: demo", "name: linked")})
    os.symlink(outside, "skills/linked")
    assert findings(registry) == [
        ("SK608", "skills/linked", f"a symbolic link to {str(outside)!r}, outside the repository; links are never "
                                   "followed out of it; left out"),
    ]


def test_fifo_is_a_special_file(registry: RegistryConfig) -> None:
    os.mkfifo("skills/demo/pipe")
    assert findings(registry) == [("SK502", "skills/demo/pipe", "`pipe` is not a regular file")]


def test_junk_files_and_folders(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {
        ".DS_Store": b"\x00\x00\x00\x01Bud1",
        "scripts/__pycache__/tool.cpython-312.pyc": b"\x00pyc",
        "scripts/tool.py": "print('ok')\n",
        "scripts/old.pyc": b"\x00pyc",
        "node_modules/left-pad/index.js": "module.exports = 1\n",
        "references/notes.md~": "backup\n",
        "Thumbs.db": b"\x00",
    })
    assert findings(registry) == [
        ("SK510", "skills/demo/.DS_Store", "`.DS_Store` is a generated or editor file that must not be committed"),
        ("SK510", "skills/demo/Thumbs.db", "`Thumbs.db` is a generated or editor file that must not be committed"),
        ("SK510", "skills/demo/node_modules", "`node_modules/` is a generated folder that must not be committed"),
        ("SK510", "skills/demo/references/notes.md~",
         "`references/notes.md~` is a generated or editor file that must not be committed"),
        ("SK510", "skills/demo/scripts/__pycache__", "`scripts/__pycache__/` is a generated folder that must not be committed"),
        ("SK510", "skills/demo/scripts/old.pyc", "`scripts/old.pyc` is a generated or editor file that must not be committed"),
    ]


def test_junk_is_left_out_of_the_skill_files(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {".DS_Store": b"\x00", "scripts/__pycache__/t.pyc": b"\x00", "scripts/t.py": "1\n"})
    skill = load_skill(Path("skills/demo"), registry).skill
    assert [f.path for f in skill.files] == ["SKILL.md", "scripts/t.py"]


def test_newline_in_a_file_name(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"references/a\nb.md": "text\n"})
    assert findings(registry) == [
        ("SK504", "skills/demo/references/a\\nb.md", "path 'references/a\\nb.md' contains a control character"),
    ]


def test_tab_and_escape_in_file_names(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"a\tb.txt": "x\n", "c\x1bd.txt": "y\n"})
    assert findings(registry) == [
        ("SK504", "skills/demo/a\\tb.txt", "path 'a\\tb.txt' contains a control character"),
        ("SK504", "skills/demo/c\\x1bd.txt", "path 'c\\x1bd.txt' contains a control character"),
    ]


def test_file_name_that_is_not_utf8(registry: RegistryConfig) -> None:
    with open(os.path.join(b"skills", b"demo", b"caf\xe9.txt"), "wb") as fh:
        fh.write(b"latin-1 name\n")
    assert findings(registry) == [("SK513", "skills/demo/caf?.txt", "file name is not valid UTF-8")]


def test_path_over_200_characters(registry: RegistryConfig) -> None:
    rel = "d" * 150 + "/" + "f" * 60
    write_tree(Path("skills/demo"), {rel: "x\n"})
    assert findings(registry) == [
        ("SK505", f"skills/demo/{rel}", f"path is 211 characters long; the limit is 200: {rel[:60]}…"),
    ]


def test_path_of_exactly_200_characters_is_fine(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"d" * 150 + "/" + "f" * 49: "x\n"})
    assert findings(registry) == []


def test_paths_that_differ_only_in_case(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"references/Guide.md": "A\n", "references/guide.md": "a\n"})
    assert findings(registry) == [
        ("SK506", "skills/demo/references/guide.md", "`references/guide.md` and `references/Guide.md` differ only in case"),
    ]


def test_skill_md_next_to_skill_md_lowercase_collides(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"skill.md": SKILL_MD})
    assert findings(registry) == [("SK506", "skills/demo/skill.md", "`skill.md` and `SKILL.md` differ only in case")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a file whatever its mode")
def test_unreadable_file(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"secret.txt": "x\n"})
    os.chmod("skills/demo/secret.txt", 0)
    assert findings(registry) == [("SK512", "skills/demo/secret.txt", "cannot read `secret.txt`: Permission denied")]


@pytest.mark.parametrize(("path", "expected"), [
    ("scripts/run.py", []),
    ("..notes/x.md", []),
    ("a/./b.md", []),
    ("a\x00b", [("SK504", "path 'a\\x00b' contains a control character")]),
    ("a\nb", [("SK504", "path 'a\\nb' contains a control character")]),
    ("a\x7fb", [("SK504", "path 'a\\x7fb' contains a control character")]),
    ("../x.md", [("SK503", "path '../x.md' is absolute or contains a `..` component")]),
    ("a/../../x.md", [("SK503", "path 'a/../../x.md' is absolute or contains a `..` component")]),
    ("/etc/passwd", [("SK503", "path '/etc/passwd' is absolute or contains a `..` component")]),
    ("C:/Windows/x", [("SK503", "path 'C:/Windows/x' is absolute or contains a `..` component")]),
    ("..\\..\\evil", [("SK514", "path '..\\\\..\\\\evil' contains a backslash, which Windows and unzip tools "
                                 "read as a folder separator")]),
    ("x" * 200, []),
    ("x" * 201, [("SK505", f"path is 201 characters long; the limit is 200: {'x' * 60}…")]),
    ("../\x00" + "y" * 200, [
        ("SK504", f"path {'../' + chr(0) + 'y' * 200!r} contains a control character"),
        ("SK503", f"path {'../' + chr(0) + 'y' * 200!r} is absolute or contains a `..` component"),
        ("SK505", f"path is 204 characters long; the limit is 200: {('../' + chr(0) + 'y' * 200)[:60]}…"),
    ]),
])
def test_path_problems(path: str, expected: list[tuple[str, str]]) -> None:
    assert path_problems(path) == expected


def test_file_size_caps_come_from_registry_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {
        "registry.yaml": "limits:\n  max_file_bytes: 100\n  max_skill_bytes: 250\n",
        "skills/demo/SKILL.md": SKILL_MD,
        "skills/demo/assets/ok.txt": "o" * 100,
        "skills/demo/assets/big.txt": "b" * 101,
    })
    monkeypatch.chdir(tmp_path)
    config = load_config(tmp_path / "registry.yaml")
    size = len(SKILL_MD.encode()) + 100 + 101
    assert findings(config) == [
        ("SK508", "skills/demo", f"the skill holds {size} bytes; the limit is 250"),
        ("SK507", "skills/demo/SKILL.md", f"`SKILL.md` is {len(SKILL_MD.encode())} bytes; the limit is 100"),
        ("SK507", "skills/demo/assets/big.txt", "`assets/big.txt` is 101 bytes; the limit is 100"),
    ]


def test_a_symlinked_skill_md_is_reported_once_not_also_as_missing(registry: RegistryConfig, tmp_path: Path) -> None:
    # out of the repository (a link to another skill's SKILL.md inside it is that skill: tests/core/test_discovery)
    real = write_tree(tmp_path.parent / f"{tmp_path.name}-elsewhere", {"SKILL.md": SKILL_MD})
    os.remove("skills/demo/SKILL.md")
    os.symlink(real / "SKILL.md", "skills/demo/SKILL.md")
    assert findings(registry) == [
        ("SK501", "skills/demo/SKILL.md",
         f"`SKILL.md` is a symbolic link to {str(real / 'SKILL.md')!r} outside the repository"),
    ]


def test_a_folder_without_skill_md_is_still_reported(registry: RegistryConfig) -> None:
    write_tree(Path("skills/empty"), {"README.md": "x\n"})
    assert findings(registry) == [("SK001", "skills/empty", "no SKILL.md in skills/empty/")]


# Names that are unsafe on another system: each is refused where it is made.

def test_a_backslash_name_that_climbs_out_on_windows(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"..\\..\\evil": "x\n", "assets\\logo.txt": "y\n"})
    assert findings(registry) == [
        ("SK514", "skills/demo/..\\..\\evil",
         "path '..\\\\..\\\\evil' contains a backslash, which Windows and unzip tools read as a folder separator"),
        ("SK514", "skills/demo/assets\\logo.txt",
         "path 'assets\\\\logo.txt' contains a backslash, which Windows and unzip tools read as a folder separator"),
    ]


def test_one_name_in_two_unicode_normalisation_forms(registry: RegistryConfig) -> None:
    nfc, nfd = "references/caf\u00e9.md", "references/cafe\u0301.md"
    write_tree(Path("skills/demo"), {nfc: "NFC\n", nfd: "NFD\n"})
    assert findings(registry) == [
        ("SK515", f"skills/demo/{nfc}", f"`{nfc}` and `{nfd}` are one name in two Unicode normalisation forms "
                                        "('references/caf\\xe9.md' and 'references/cafe\\u0301.md')"),
    ]


def test_folders_that_differ_in_normalisation_or_case_are_reported_once(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"Docs/a.md": "a\n", "docs/b.md": "b\n", "docs/c.md": "c\n",
                                     "r\u00e9f/x.md": "x\n", "re\u0301f/x.md": "x\n"})
    assert findings(registry) == [
        ("SK506", "skills/demo/docs", "`docs` and `Docs` differ only in case"),
        ("SK515", "skills/demo/r\u00e9f", "`r\u00e9f` and `re\u0301f` are one name in two Unicode normalisation "
                                           "forms ('r\\xe9f' and 're\\u0301f')"),
    ]


@pytest.mark.parametrize(("name", "message"), [
    ("CON", "`CON` is a device name on Windows"),
    ("aux.txt", "`aux.txt` is a device name on Windows"),
    ("lpt1.tar.gz", "`lpt1.tar.gz` is a device name on Windows"),
    ("COM\u00b9", "`COM\u00b9` is a device name on Windows"),
    ("notes.", "`notes.` ends with a dot, which Windows drops"),
    ("notes ", "`notes ` ends with a space, which Windows drops"),
    ("a:b.md", "`a:b.md` contains `:`, which Windows does not allow in a name"),
    ("why?.md", "`why?.md` contains `?`, which Windows does not allow in a name"),
    ('say "hi".md', '`say "hi".md` contains `"`, which Windows does not allow in a name'),
    ("a|b", "`a|b` contains `|`, which Windows does not allow in a name"),
])
def test_names_windows_cannot_create(registry: RegistryConfig, name: str, message: str) -> None:
    write_tree(Path("skills/demo/references"), {name: "x\n"})
    assert findings(registry) == [("SK516", f"skills/demo/references/{name}", message)]


@pytest.mark.parametrize("name", ["console.md", "CONFIG", "com10", "nul-results.md", "a.b.c", ".hidden", "x..y"])
def test_names_that_only_look_like_windows_devices_are_fine(registry: RegistryConfig, name: str) -> None:
    write_tree(Path("skills/demo/references"), {name: "x\n"})
    assert findings(registry) == []


def test_a_windows_folder_name_is_reported_at_the_folder(registry: RegistryConfig) -> None:
    write_tree(Path("skills/demo"), {"nul/x.md": "x\n"})
    assert findings(registry) == [("SK516", "skills/demo/nul", "`nul` is a device name on Windows")]


def test_unsafe_names_stop_the_build_and_are_not_published(registry: RegistryConfig) -> None:
    """`..\\..\\evil` and two `café.md` are neither in the zip nor under .well-known: the build stops."""
    from click.testing import CliRunner

    from builder.cli.app import cli

    write_tree(Path("skills/demo"), {"..\\..\\evil": "x\n", "caf\u00e9.md": "NFC\n", "cafe\u0301.md": "NFD\n"})
    result = CliRunner().invoke(cli, ["build", "--out", "site", "--no-site"])
    assert result.exit_code == 1
    assert [line.split()[2] for line in result.output.splitlines() if " error " in line] == ["SK514", "SK515"]
    assert not Path("site").exists()
    result = CliRunner().invoke(cli, ["build", "--out", "site", "--no-site", "--keep-going"])
    assert result.exit_code == 0 and "Left out 1 invalid skill: skills/demo" in result.output
    assert not list(Path("site").rglob("*evil*")) and not list(Path("site").rglob("caf*"))


def test_a_file_read_after_it_grew_is_read_whole_up_to_the_limit(tmp_path: Path) -> None:
    # The loader asks for the size stat gave plus one byte; a file that grew since is read on, never past limit + 1.
    from builder.core.loader import _read_bounded

    grown = tmp_path / "grown.md"
    grown.write_bytes(b"x" * 100)
    assert _read_bounded(str(grown), 10, 1000) == b"x" * 100
    assert _read_bounded(str(grown), 10, 50) == b"x" * 51
    assert _read_bounded(str(grown), 100, 1000) == b"x" * 100
    assert _read_bounded(str(grown), 100, 99) == b"x" * 100  # past the limit: limit + 1 bytes, reported as too large
    grown.write_bytes(b"")
    assert _read_bounded(str(grown), 0, 1000) == b""
    shrunk = tmp_path / "shrunk.md"
    shrunk.write_bytes(b"y" * 5)
    assert _read_bounded(str(shrunk), 100, 1000) == b"y" * 5
    # A link put where stat saw a file is not followed.
    (tmp_path / "swapped.md").symlink_to(grown)
    with pytest.raises(OSError):
        _read_bounded(str(tmp_path / "swapped.md"), 100, 1000)
