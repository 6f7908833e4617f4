"""prompts.chat multi-file codec and the export/import commands."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import REPO, write_tree

from builder.cli.app import cli
from builder.core.model import SkillFile
from builder.ops.codec import CodecError, parse, serialize

REGISTRY_YAML = "title: T\nprofile: spec\ncategories:\n  - slug: data\n    title: Data\n"
SKILL_MD = ("---\nname: demo\ndescription: Demonstrates the codec. Use when testing.\nmetadata:\n  category: data\n"
            "---\n# Demo\n\nSee [the guide](references/guide.md).\n")


def test_round_trip_is_byte_exact_including_edge_whitespace() -> None:
    files = [
        SkillFile("SKILL.md", SKILL_MD.encode()),
        SkillFile("references/guide.md", b"\n\n  leading blank lines and trailing spaces   \n\n\n"),
        SkillFile("scripts/run.sh", b"#!/usr/bin/env bash\r\necho hi\r\n", executable=True),
        SkillFile("empty.txt", b""),
        SkillFile("unicode.md", "caf\u00e9 \u2014 \u65e5\u672c\n".encode()),
    ]
    text = serialize(files)
    assert text.startswith(SKILL_MD)
    assert "\n\x1fFILE:empty.txt\x1e\n" in text
    back = parse(text)
    assert [f.path for f in back] == ["SKILL.md", "empty.txt", "references/guide.md", "scripts/run.sh", "unicode.md"]
    assert {f.path: f.data for f in back} == {f.path: f.data for f in files}
    assert serialize(back) == text


@pytest.mark.parametrize("files, message", [
    ([SkillFile("SKILL.md", b"x"), SkillFile("assets/logo.png", b"\x89PNG\0\0")],
     "assets/logo.png: binary files cannot be encoded"),
    ([SkillFile("SKILL.md", b"x"), SkillFile("a.md", b"one\x1etwo")], "a.md: holds a U+001F or U+001E separator"),
    ([SkillFile("a.md", b"x")], "there is no SKILL.md to put first"),
])
def test_serialize_refuses_what_the_format_cannot_carry(files: list[SkillFile], message: str) -> None:
    with pytest.raises(CodecError, match=re.escape(message)):
        serialize(files)


@pytest.mark.parametrize("text, message", [
    ("x\n\x1fFILE:../evil\x1e\nboom", "is absolute or contains a `..` component"),
    ("x\n\x1fFILE:/etc/passwd\x1e\nboom", "is absolute or contains a `..` component"),
    ("x\n\x1fFILE:a\x00b\x1e\nboom", "contains a control character"),
    ("x\n\x1fFILE:a.md\x1e\none\n\x1fFILE:a.md\x1e\ntwo", "file 2: 'a.md' is already file 1 ('a.md')"),
    ("x\n\x1fFILE:\x1e\nboom", "empty path"),
])
def test_parse_refuses_unsafe_paths(text: str, message: str) -> None:
    with pytest.raises(CodecError, match=re.escape(message)):
        parse(text)


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {
        "registry.yaml": REGISTRY_YAML,
        "skills/demo/SKILL.md": SKILL_MD,
        "skills/demo/references/guide.md": "# Guide\n",
    })


def run(registry: Path, *args: str, input: bytes | None = None):
    return CliRunner().invoke(cli, ["--config", str(registry / "registry.yaml"), *args], input=input)


def test_export_then_import_recreates_the_skill(registry: Path) -> None:
    exported = run(registry, "export", "demo")
    assert exported.exit_code == 0, exported.output
    text = exported.stdout_bytes
    (registry / "skills/demo").rename(registry / "moved")
    imported = run(registry, "import", "-", input=text)
    assert imported.exit_code == 0, imported.output
    assert imported.output.splitlines()[0] == f"Created {registry / 'skills/demo'}/ with 2 files"
    assert "The skill is valid." in imported.output
    for rel in ("SKILL.md", "references/guide.md"):
        assert (registry / "skills/demo" / rel).read_bytes() == (registry / "moved" / rel).read_bytes()


@pytest.mark.parametrize(("name", "message"), [
    ("My_Skill", "SK104: `name` 'My_Skill' has characters outside a-z, 0-9 and '-': 'M' 'S' '_'. "
                 "Did you mean `my-skill`?"),
    ("api", "SK603: skill name `api` is reserved for the registry's own pages"),
])
def test_import_refuses_a_name_new_would_refuse_before_writing(registry: Path, name: str, message: str) -> None:
    text = run(registry, "export", "demo").stdout_bytes
    result = run(registry, "import", "-", "--name", name, input=text)
    assert (result.exit_code, result.output) == (2, f"Error: {message}\n")
    assert sorted(p.name for p in (registry / "skills").iterdir()) == ["demo"]


def test_import_refuses_to_overwrite_and_validates(registry: Path) -> None:
    text = run(registry, "export", "demo").stdout_bytes
    again = run(registry, "import", "-", input=text)
    assert again.exit_code == 2
    assert "already exists; refusing to overwrite it" in again.output
    broken = text.replace(b"references/guide.md\x1e", b"references/other.md\x1e")
    renamed = run(registry, "import", "-", "--name", "demo-two", input=broken)
    assert renamed.exit_code == 1
    assert "SK106" not in renamed.output  # --name rewrote the `name:` line (tests/cli/test_newcomer.py)
    assert "error SK404 link target `references/guide.md` does not exist in the skill" in renamed.output


def test_export_zip_and_json_match_the_published_bundles(registry: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo.zip"
    assert run(registry, "export", "demo", "--format", "zip", "-o", str(out)).exit_code == 0
    assert zipfile.ZipFile(io.BytesIO(out.read_bytes())).namelist() == ["SKILL.md", "references/guide.md"]
    data = json.loads(run(registry, "export", "demo", "--format", "json").stdout_bytes)
    assert [f["path"] for f in data["files"]] == ["SKILL.md", "references/guide.md"]
    assert data["digest"].startswith("sha256:")


def test_export_refuses_binary_for_prompts_chat_and_invalid_skills(registry: Path) -> None:
    write_tree(registry, {"skills/demo/assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0"})
    result = run(registry, "export", "demo")
    assert result.exit_code == 2
    assert "assets/logo.png: binary files cannot be encoded in the prompts.chat text format" in result.output
    write_tree(registry, {"skills/bad/SKILL.md": "---\nname: bad\n---\n"})
    result = run(registry, "export", "bad")
    assert result.exit_code == 1
    assert "SK107 required field `description` is missing" in result.output


def test_prompt_is_byte_identical_to_skills_ref() -> None:
    from skills_ref.prompt import to_prompt as reference

    names = ["csv-profiler", "secret-scanner", "json-schema-check"]
    result = CliRunner().invoke(cli, ["--config", str(REPO / "registry.yaml"), "prompt", *names])
    assert result.exit_code == 0, result.output
    assert result.output == reference([REPO / "skills" / n for n in names]) + "\n"


def test_prompt_escapes_like_skills_ref(tmp_path: Path) -> None:
    from skills_ref.prompt import to_prompt as reference

    write_tree(tmp_path, {"registry.yaml": REGISTRY_YAML, "skills/amp/SKILL.md":
                          "---\nname: amp\ndescription: 'Compares <a> & \"b\" with ''c''. Use when asked.'\n---\nx\n"})
    result = CliRunner().invoke(cli, ["--config", str(tmp_path / "registry.yaml"), "prompt"])
    assert result.output == reference([tmp_path / "skills/amp"]) + "\n"
    assert "&lt;a&gt; &amp; &quot;b&quot; with &#x27;c&#x27;" in result.output


SKILL_TEXT = "---\nname: paths\ndescription: Checks import paths. Use when testing skillreg import.\n---\n# Paths\n\nRun it.\n"


@pytest.mark.parametrize(("paths", "message"), [
    (["./SKILL.md"], "file 1: './SKILL.md' (that is 'SKILL.md') is already the text's first part (SKILL.md)"),
    (["scripts/"], "file 1: 'scripts/' ends with `/`, so it names a folder, not a file"),
    (["a", "a/b"], "file 2: 'a/b' needs a folder 'a', but file 1 ('a') is a file of that name"),
    (["a/b", "a"], "file 2: 'a' is a file, but file 1 ('a/b') puts files in a folder of that name"),
    (["scripts/x.sh", "scripts//x.sh"], "file 2: 'scripts//x.sh' (that is 'scripts/x.sh') is already file 1 "
                                        "('scripts/x.sh')"),
    (["a/./b/c", "a//b"], "file 2: 'a//b' (that is 'a/b') is a file, but file 1 ('a/b/c') puts files in a folder "
                          "of that name"),
    (["."], "file 1: '.' names no file"),
    (["..\\..\\evil"], "file 1: path '..\\\\..\\\\evil' contains a backslash, which Windows and unzip tools "
                         "read as a folder separator"),
])
def test_import_refuses_paths_that_collide_or_name_folders(registry: Path, paths: list[str], message: str) -> None:
    """Each is one line and writes nothing: such paths once raised FileExistsError, or made a file of a folder name."""
    text = SKILL_TEXT + "".join(f"\n\x1fFILE:{p}\x1e\ncontent {i}\n" for i, p in enumerate(paths))
    result = run(registry, "import", "-", input=text.encode())
    assert (result.exit_code, result.output) == (2, f"Error: <stdin>: {message}\n")
    assert not (registry / "skills/paths").exists()
    assert sorted(p.name for p in (registry / "skills").iterdir()) == ["demo"]  # no temporary folder left


def test_import_collapses_dot_and_double_slash(registry: Path) -> None:
    text = SKILL_TEXT + "\n\x1fFILE:./scripts//run.sh\x1e\necho hi\n\n\x1fFILE:references/./a.md\x1e\n# A\n"
    result = run(registry, "import", "-", input=text.encode())
    assert result.output.splitlines()[0] == f"Created {registry / 'skills/paths'}/ with 3 files", result.output
    assert result.exit_code == 0, result.output
    made = sorted(p.relative_to(registry / "skills/paths").as_posix()
                  for p in (registry / "skills/paths").rglob("*") if p.is_file())
    assert made == ["SKILL.md", "references/a.md", "scripts/run.sh"]
    assert (registry / "skills/paths/scripts/run.sh").read_bytes() == b"echo hi\n"


@pytest.mark.parametrize(("limits", "extra", "message"), [
    ("max_files: 3", {f"references/{n}.md": "x\n" for n in range(3_000)},
     "<stdin>: the skill holds 3,001 files; the limit is 3; nothing was written"),
    ("max_file_bytes: 1000", {"references/big.md": "x" * 1001},
     "<stdin>: `references/big.md` is 1,001 bytes; the limit is 1,000; nothing was written"),
    ("max_skill_bytes: 2000", {f"references/{n}.md": "x" * 900 for n in range(3)},
     f"<stdin>: the skill holds {len(SKILL_MD) + 2_700:,} bytes; the limit is 2,000; nothing was written"),
])
def test_import_checks_every_limit_before_the_first_write(tmp_path: Path, limits: str, extra: dict[str, str],
                                                          message: str) -> None:
    registry = write_tree(tmp_path / "reg", {"registry.yaml": REGISTRY_YAML + f"limits:\n  {limits}\n",
                                             "skills/.keep": ""})
    text = SKILL_MD + "".join(f"\n\x1fFILE:{path}\x1e\n{content}" for path, content in extra.items())
    result = run(registry, "import", "-", input=text.encode())
    assert result.exit_code != 0
    assert message in result.output
    assert sorted(p.name for p in (registry / "skills").iterdir()) == [".keep"]
