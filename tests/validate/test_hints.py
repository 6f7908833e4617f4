"""Hints and messages quote the value as the file writes it, never as YAML parsed it.

`version: 1.10` parses to 1.1, `0xBB2B` to 47915, `yes` to True, `2024-01-01` to a date and `~` to None;
a hint that wrote the parsed value back would change what the author meant.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import write_tree

from builder.core.config import load_config
from builder.core.frontmatter import parse_skill_md
from builder.validate.run import validate_paths

DESCRIPTION = "Checks one thing when the user asks for it."


def skill_md(frontmatter: str) -> str:
    return f"---\n{frontmatter}---\n# Title\n\nDo it.\n"


def findings(tmp_path: Path, text: str, folder: str = "demo", profile: str = "spec") -> list[tuple[str, str, str]]:
    write_tree(tmp_path / "skills", {f"{folder}/SKILL.md": text})
    config = load_config(start=tmp_path)
    return [(d.code, d.message, d.hint) for d in validate_paths([tmp_path / "skills"], config, profile).diagnostics]


@pytest.mark.parametrize(("written", "message", "hint"), [
    ("1.10", "a number (1.10)", 'Quote it: `version: "1.10"`.'),
    ("0xBB2B", "a number (0xBB2B)", 'Quote it: `version: "0xBB2B"`.'),
    ("017", "a number (017)", 'Quote it: `version: "017"`.'),
    ("1_000", "a number (1_000)", 'Quote it: `version: "1_000"`.'),
    ("1.5e+3", "a number (1.5e+3)", 'Quote it: `version: "1.5e+3"`.'),
    ("190:20:30", "a number (190:20:30)", 'Quote it: `version: "190:20:30"`.'),
    (".inf", "a number (.inf)", 'Quote it: `version: ".inf"`.'),
    ("+12", "a number (+12)", 'Quote it: `version: "+12"`.'),
    ("yes", "a boolean (yes)", 'Quote it: `version: "yes"`.'),
    ("Off", "a boolean (Off)", 'Quote it: `version: "Off"`.'),
    ("2024-01-01", "a date (2024-01-01)", 'Quote it: `version: "2024-01-01"`.'),
    ("2024-1-1 10:00:00", "a date (2024-1-1 10:00:00)", 'Quote it: `version: "2024-1-1 10:00:00"`.'),
    ("~", "nothing (~)", 'Quote it if you mean the text: `version: "~"`; YAML reads `~` as no value.'),
    ("null", "nothing (null)", 'Quote it if you mean the text: `version: "null"`; YAML reads `null` as no value.'),
    ("", "nothing", "Write a value after `version:` as a quoted string, or delete the line."),
    ("!!int 7", "a number (!!int 7)", "Write the value of `version` on one line, as a quoted string."),
    ("\n    - 1.10\n    - yes", "a list", 'Write one comma-separated string: `version: "1.10, yes"`.'),
    ("\n    - 'a, b'\n    - \"x\\ty\"", "a list", "Write the items of `version` as one quoted, comma-separated string."),
    ("\n    owner: ann", "a mapping", "Values here must be strings, not a mapping: write `version` as one quoted "
                                      "string, or give each of its entries a key of its own."),
])
def test_metadata_value_hint_quotes_the_text_as_written(tmp_path: Path, written: str, message: str,
                                                        hint: str) -> None:
    text = skill_md(f"name: demo\ndescription: {DESCRIPTION}\nmetadata:\n  version: {written}\n")
    got = [f for f in findings(tmp_path, text) if f[0] == "SK113"]
    assert got == [("SK113", f"`metadata.version` must be a string, got {message}", hint)]


def test_a_metadata_key_that_is_not_a_string_is_quoted_as_written(tmp_path: Path) -> None:
    text = skill_md(f"name: demo\ndescription: {DESCRIPTION}\nmetadata:\n  1.10: x\n  yes: y\n")
    got = [f for f in findings(tmp_path, text) if f[0] == "SK112"]
    assert got == [("SK112", "`metadata` key 1.10 is not a string", 'Quote it: `"1.10"`.'),
                   ("SK112", "`metadata` key yes is not a string", 'Quote it: `"yes"`.')]


@pytest.mark.parametrize(("folder", "written", "message", "hint"), [
    ("933133", "933133", "a number (933133)", 'Quote it: `name: "933133"`.'),
    ("demo", "933133", "a number (933133)",
     'Quote it: `name: "933133"` (and make it match the folder name `demo`).'),
    ("demo", "1.10", "a number (1.10)",  # "1.10" is no valid name: '.' is not allowed
     "Write the skill's name, lowercase letters, digits and hyphens, as the folder's: `name: demo`."),
    ("yes", "yes", "a boolean (yes)", 'Quote it: `name: "yes"`.'),
    ("demo", "2024-01-01 10:00:00", "a date (2024-01-01 10:00:00)",
     "Write the skill's name, lowercase letters, digits and hyphens, as the folder's: `name: demo`."),
    ("demo", "", "nothing",
     "Write the skill's name, lowercase letters, digits and hyphens, as the folder's: `name: demo`."),
])
def test_a_name_yaml_reads_as_a_number_gets_a_hint(tmp_path: Path, folder: str, written: str, message: str,
                                                   hint: str) -> None:
    text = skill_md(f"name: {written}\ndescription: {DESCRIPTION}\n")
    got = [f for f in findings(tmp_path, text, folder) if f[0] == "SK102"]
    assert got == [("SK102", f"`name` must be a non-empty string, got {message}", hint)]


def test_a_quoted_numeric_name_is_valid_under_the_standard(tmp_path: Path) -> None:
    """The standard allows lowercase letters, digits and hyphens: `"933133"` as a string is a fine name."""
    assert findings(tmp_path, skill_md(f'name: "933133"\ndescription: {DESCRIPTION}\n'), "933133") == []


@pytest.mark.parametrize("field", ["description", "license", "compatibility"])
def test_other_string_fields_quote_the_text_as_written(tmp_path: Path, field: str) -> None:
    extra = f"{field}: 1.10\n" if field != "description" else ""
    description = "1.10" if field == "description" else DESCRIPTION
    text = skill_md(f"name: demo\ndescription: {description}\n{extra}")
    (got,) = [f for f in findings(tmp_path, text) if f[0] in ("SK108", "SK110", "SK114")]
    assert "a number (1.10)" in got[1] and got[2] == f'Quote it: `{field}: "1.10"`.'


def test_a_claude_code_string_field_quotes_the_text_as_written(tmp_path: Path) -> None:
    text = skill_md(f"name: demo\ndescription: {DESCRIPTION}\nmodel: 4.10\n")
    got = [f for f in findings(tmp_path, text, profile="claude-code") if f[0] == "SK122"]
    assert got == [("SK122", "`model` must be a model name string, got a number (4.10)",
                    'Quote it: `model: "4.10"`.')]


# Every scalar form YAML 1.1 reads as something other than a string, in every place a hint can quote it.
SCALARS = ["1.10", "0xBB2B", "0o17", "017", "1_000", "1.5e+3", "-.5", "190:20:30", ".inf", "-.Inf", ".NaN",
           "+12", "yes", "No", "ON", "off", "true", "False", "2024-01-01", "2024-1-1 10:00:00", "2001-12-14t21:59:43.10-05:00",
           "~", "null", "Null", ""]
PLACES = ["name: {v}\ndescription: " + DESCRIPTION + "\n",
          "name: demo\ndescription: {v}\n",
          "name: demo\ndescription: " + DESCRIPTION + "\nlicense: {v}\ncompatibility: {v}\n",
          "name: demo\ndescription: " + DESCRIPTION + "\nmetadata:\n  version: {v}\n  {v}: x\n",
          "name: demo\ndescription: " + DESCRIPTION + "\nmetadata:\n  tags:\n    - {v}\n    - {v}\n",
          "name: demo\ndescription: " + DESCRIPTION + "\nallowed-tools: {v}\nmodel: {v}\nagent: {v}\n"]
QUOTED = re.compile(r'`[^`]*?"([^"`]*)"[^`]*`')  # the text inside double quotes inside a code span
SHOWN = re.compile(r", got (?:a number|a boolean|a date|nothing) \((.*)\)$")


@pytest.mark.parametrize("place", range(len(PLACES)))
def test_no_hint_or_message_quotes_a_value_the_file_does_not_hold(tmp_path: Path, place: int) -> None:
    checked = 0
    for i, value in enumerate(SCALARS):
        text = skill_md(PLACES[place].replace("{v}", value))
        frontmatter = text.split("---\n")[1]
        root = tmp_path / str(i)
        for code, message, hint in findings(root, text, profile="claude-code"):
            for quoted in QUOTED.findall(hint):
                parts = quoted.split(", ") if hint.startswith("Write one comma-separated string") else [quoted]
                assert all(part in frontmatter for part in parts), (value, code, hint)
                checked += 1
            shown = SHOWN.search(message)
            if shown:
                assert shown.group(1) in frontmatter, (value, code, message)
                checked += 1
    assert checked >= len(SCALARS) // 2  # the table really exercised quoting hints


@pytest.mark.parametrize(("line", "indent", "header", "written"), [
    ("description: | Use when the user asks: do it", "  ", "|", "Use when the user asks: do it"),
    ("description: > Use when…", "  ", ">", "Use when…"),
    ("description: |- Use when", "  ", "|-", "Use when"),
    ("description: >+ Use when", "  ", ">+", "Use when"),
    ("description: |4 Use when", "    ", "|4", "Use when"),
    ("description: |Use when", "  ", "|", "Use when"),
])
def test_text_after_a_block_scalar_indicator_gets_the_two_lines_it_should_be(line: str, indent: str, header: str,
                                                                             written: str) -> None:
    text = f"---\nname: s\n{line}\nlicense: MIT\n---\nBody.\n"
    parsed = parse_skill_md(text.encode(), "s/SKILL.md", max_frontmatter_bytes=65536, skill="s")
    (diag,) = parsed.diagnostics
    assert (diag.code, diag.line) == ("SK007", 3)
    assert diag.message == f"invalid YAML: text follows the block scalar indicator `{header}` on the same line"
    key = line[:line.index(header) + len(header)]
    assert diag.hint == f"Move the text to the next line, indented under the key: `{key}` then `{indent}{written}`."
    fixed = text.replace(line, f"{key}\n{indent}{written}")
    assert parse_skill_md(fixed.encode(), "s/SKILL.md", max_frontmatter_bytes=65536).diagnostics == ()


def test_a_nested_block_scalar_is_indented_below_its_own_key() -> None:
    text = "---\nname: s\nmetadata:\n  notes: >- Kept short\n---\nBody.\n"
    (diag,) = parse_skill_md(text.encode(), "s/SKILL.md", max_frontmatter_bytes=65536).diagnostics
    assert diag.hint == "Move the text to the next line, indented under the key: `  notes: >-` then `    Kept short`."


def test_a_comment_after_the_indicator_is_valid_yaml() -> None:
    text = "---\nname: s\ndescription: | # the trigger\n  Use when asked.\n---\nBody.\n"
    assert parse_skill_md(text.encode(), "s/SKILL.md", max_frontmatter_bytes=65536).diagnostics == ()


@pytest.mark.parametrize(("items", "hint"), [
    ("\n  - Read\n  - 'Bash(git:*)'", "Write `allowed-tools: Read Bash(git:*)`."),
    ("\n  - Read\n  - \"Bash(git:\\x2a)\"", "Write the tools on one line, separated by spaces."),
])
def test_the_allowed_tools_list_hint_joins_the_items_as_written(tmp_path: Path, items: str, hint: str) -> None:
    text = skill_md(f"name: demo\ndescription: {DESCRIPTION}\nallowed-tools:{items}\n")
    assert [f[2] for f in findings(tmp_path, text) if f[0] == "SK115"] == [hint]


def test_an_unclosed_quote_is_reported_where_it_opens_with_a_hint_that_closes_it(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch
                                                                                 ) -> None:
    from click.testing import CliRunner

    from builder.cli.app import cli

    write_tree(tmp_path, {"demo/SKILL.md": (
        '---\nname: demo\ndescription: "Reads demo files. Use when asked what a demo file holds.\n'
        "metadata:\n  author: someone\n---\n# Demo\n")})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["validate", "demo"])
    assert (result.exit_code, result.output) == (1, (
        "demo/SKILL.md:3:14: error SK007 invalid YAML: the double quote `\"` that starts this value is never "
        "closed\n"
        "    hint: End the value with a closing `\"` (`description: \"Reads demo files. Use when asked what a demo "
        "file holds.\"`); a `\"` inside it is written `\\\"`.\n"
        "1 error, 0 warnings in 1 of 1 skill\n"))


@pytest.mark.parametrize("loader", ["libyaml", "pure-python"])
@pytest.mark.parametrize(("line", "fixed", "meant"), [
    ("description: 'Reads demo files", "description: 'Reads demo files'", "Reads demo files"),
    ('description: "Reads demo files', 'description: "Reads demo files"', "Reads demo files"),
])
def test_the_hint_for_an_unclosed_quote_is_a_line_that_parses(monkeypatch: pytest.MonkeyPatch, loader: str,
                                                              line: str, fixed: str, meant: str) -> None:
    import yaml

    from builder.core import frontmatter

    monkeypatch.setattr(frontmatter, "_Loader", yaml.CSafeLoader if loader == "libyaml" else yaml.SafeLoader)
    text = f"---\nname: s\n{line}\nlicense: MIT\n---\nBody.\n"
    (diag,) = parse_skill_md(text.encode(), "s/SKILL.md", max_frontmatter_bytes=65536, skill="s").diagnostics
    assert (diag.code, diag.line, diag.column) == ("SK007", 3, 14)
    assert f"(`{fixed}`)" in diag.hint
    parsed = parse_skill_md(text.replace(line, fixed).encode(), "s/SKILL.md", max_frontmatter_bytes=65536)
    assert parsed.diagnostics == () and parsed.frontmatter is not None
    assert parsed.frontmatter.data["description"] == meant


@pytest.mark.parametrize("loader", ["libyaml", "pure-python"])
@pytest.mark.parametrize(("line", "column", "example", "meant"), [
    ("description: 'It's how data is read'", 18, "description: 'It''s how data is read'", "It's how data is read"),
    ('description: "Say "hi" first"', 20, 'description: "Say \\"hi\\" first"', 'Say "hi" first'),
    ("  author: 'O'Brien'", 14, "  author: 'O''Brien'", "O'Brien"),
])
def test_a_quote_inside_a_quoted_value_gets_the_value_written_escaped(monkeypatch: pytest.MonkeyPatch, loader: str,
                                                                      line: str, column: int, example: str,
                                                                      meant: str) -> None:
    import yaml

    from builder.core import frontmatter

    monkeypatch.setattr(frontmatter, "_Loader", yaml.CSafeLoader if loader == "libyaml" else yaml.SafeLoader)
    head = "metadata:\n" if line.startswith(" ") else ""
    text = f"---\nname: s\n{head}{line}\n---\nBody.\n"
    (diag,) = parse_skill_md(text.encode(), "s/SKILL.md", max_frontmatter_bytes=65536, skill="s").diagnostics
    quote = line.strip().split(": ", 1)[1][0]
    assert (diag.code, diag.line, diag.column, diag.message) == (
        "SK007", 3 + bool(head), column, f"invalid YAML: text follows the closing `{quote}` of a quoted value")
    assert diag.hint.endswith(f": `{example}`.")
    parsed = parse_skill_md(text.replace(line, example).encode(), "s/SKILL.md", max_frontmatter_bytes=65536)
    assert parsed.diagnostics == () and parsed.frontmatter is not None
    data = parsed.frontmatter.data
    assert (data["metadata"]["author"] if head else data["description"]) == meant
