"""The open standard's rules (agentskills.io) under the `spec` profile, cross-checked against its reference validator.

Each case is one skill folder written to ``tmp_path``. We check our findings exactly, then run
``skills_ref.validator.validate`` on the same folder:

- `STANDARD` cases are the standard's own rules: skills-ref and we must agree on accept/reject.
- `STRICTER` cases are where we deliberately reject what skills-ref accepts (the safe direction): names must be
  ASCII a-z (skills-ref allows any Unicode letter, e.g. `café`), `compatibility` must not be empty (the standard
  says 1-500 characters), values must have the type the standard says (skills-ref reads every value as a string).
- Across both tables: where skills-ref rejects, we reject; where we accept, skills-ref accepts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_tree
from skills_ref.validator import validate as skills_ref_validate

from builder.core.config import RegistryConfig
from builder.validate.run import validate_paths

DESCRIPTION = "Fills PDF forms. Use when a PDF form arrives."
BODY = "# PDF tools\n\nFollow these steps.\n"


def frontmatter(name: str | None = "pdf-tools", description: str | None = DESCRIPTION, extra: str = "") -> str:
    lines = ([f"name: {name}"] if name is not None else []) + \
            ([f"description: {description}"] if description is not None else [])
    return "\n".join(lines) + "\n" + extra


# (id, folder name, frontmatter YAML, expected (code, severity) findings)
STANDARD = [
    ("valid", "pdf-tools", frontmatter(), []),
    ("name-one-char", "a", frontmatter("a"), []),
    ("name-digits", "7zip", frontmatter("7zip"), []),
    ("name-64-chars", "a" * 64, frontmatter("a" * 64), []),
    ("name-65-chars", "a" * 65, frontmatter("a" * 65), [("SK103", "error")]),
    ("name-uppercase", "Pdf-tools", frontmatter("Pdf-tools"), [("SK104", "error")]),
    ("name-underscore", "pdf_tools", frontmatter("pdf_tools"), [("SK104", "error")]),
    ("name-space", "pdf tools", frontmatter("pdf tools"), [("SK104", "error")]),
    ("name-dot", "pdf.tools", frontmatter("pdf.tools"), [("SK104", "error")]),
    ("name-leading-hyphen", "-pdf", frontmatter("-pdf"), [("SK105", "error")]),
    ("name-trailing-hyphen", "pdf-", frontmatter("pdf-"), [("SK105", "error")]),
    ("name-double-hyphen", "pdf--tools", frontmatter("pdf--tools"), [("SK105", "error")]),
    ("name-not-folder", "pdf-tools", frontmatter("pdf-tool"), [("SK106", "error")]),
    ("name-missing", "pdf-tools", frontmatter(None), [("SK101", "error")]),
    ("name-empty", "pdf-tools", frontmatter('""'), [("SK102", "error")]),
    ("description-missing", "pdf-tools", frontmatter(description=None), [("SK107", "error")]),
    ("description-empty", "pdf-tools", frontmatter(description='""'), [("SK108", "error")]),
    ("description-blank", "pdf-tools", frontmatter(description='"   "'), [("SK108", "error")]),
    ("description-1024", "pdf-tools", frontmatter(description="d" * 1024), []),
    ("description-1025", "pdf-tools", frontmatter(description="d" * 1025), [("SK109", "error")]),
    ("compatibility-500", "pdf-tools", frontmatter(extra=f"compatibility: {'c' * 500}\n"), []),
    ("compatibility-501", "pdf-tools", frontmatter(extra=f"compatibility: {'c' * 501}\n"), [("SK111", "error")]),
    ("optional-fields", "pdf-tools", frontmatter(extra=(
        "license: Apache-2.0\ncompatibility: Needs poppler.\nallowed-tools: Read Bash(pdftk:*)\n"
        "metadata:\n  author: ann\n  version: \"1.0.0\"\n")), []),
    ("unknown-field", "pdf-tools", frontmatter(extra="homepage: https://example.com\n"), [("SK120", "error")]),
    ("claude-code-field", "pdf-tools", frontmatter(extra="model: opus\n"), [("SK120", "error")]),
    ("duplicate-key", "pdf-tools", frontmatter(extra="name: pdf-tools\n"), [("SK008", "error")]),
]
STRICTER = [
    ("name-unicode-letter", "café", frontmatter("café"), [("SK104", "error")]),
    ("name-trailing-newline", "pdf-tools", frontmatter("|\n  pdf-tools"), [("SK104", "error"), ("SK106", "error")]),
    ("compatibility-empty", "pdf-tools", frontmatter(extra='compatibility: ""\n'), [("SK110", "error")]),
    ("license-list", "pdf-tools", frontmatter(extra="license:\n  - MIT\n"), [("SK114", "error")]),
    ("metadata-number", "pdf-tools", frontmatter(extra="metadata:\n  version: 1.0\n"), [("SK113", "error")]),
    ("allowed-tools-mapping", "pdf-tools", frontmatter(extra="allowed-tools:\n  Read: yes\n"), [("SK116", "error")]),
]


def our_findings(folder: Path) -> list[tuple[str, str]]:
    config = RegistryConfig(root=folder.parent, path=None)  # no categories: only the standard's rules apply
    return sorted((d.code, d.severity.value) for d in validate_paths([folder], config, "spec").diagnostics)


def make_skill(tmp_path: Path, folder: str, yaml_text: str, file: str = "SKILL.md") -> Path:
    return write_tree(tmp_path / folder, {file: f"---\n{yaml_text}---\n{BODY}"})


@pytest.mark.parametrize(("folder", "yaml_text", "expected"), [c[1:] for c in STANDARD + STRICTER],
                         ids=[c[0] for c in STANDARD + STRICTER])
def test_open_standard_rules(tmp_path: Path, folder: str, yaml_text: str, expected: list[tuple[str, str]]) -> None:
    assert our_findings(make_skill(tmp_path, folder, yaml_text)) == expected


@pytest.mark.parametrize(("folder", "yaml_text", "expected"), [c[1:] for c in STANDARD], ids=[c[0] for c in STANDARD])
def test_skills_ref_agrees_on_the_standard_rules(tmp_path: Path, folder: str, yaml_text: str,
                                                 expected: list[tuple[str, str]]) -> None:
    skill = make_skill(tmp_path, folder, yaml_text)
    we_reject = any(severity == "error" for _, severity in our_findings(skill))
    assert bool(skills_ref_validate(skill)) == we_reject


@pytest.mark.parametrize(("folder", "yaml_text", "expected"), [c[1:] for c in STRICTER], ids=[c[0] for c in STRICTER])
def test_where_we_are_stricter_than_skills_ref(tmp_path: Path, folder: str, yaml_text: str,
                                               expected: list[tuple[str, str]]) -> None:
    skill = make_skill(tmp_path, folder, yaml_text)
    assert any(severity == "error" for _, severity in our_findings(skill))
    assert skills_ref_validate(skill) == []


def test_skill_md_fallback_is_accepted_with_a_warning(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "pdf-tools", frontmatter(), file="skill.md")
    assert our_findings(skill) == [("SK002", "warning")]
    assert skills_ref_validate(skill) == []


def test_a_folder_without_skill_md_is_rejected_by_both(tmp_path: Path) -> None:
    skill = write_tree(tmp_path / "pdf-tools", {"README.md": "# PDF tools\n"})
    assert our_findings(skill) == [("SK001", "error")]
    assert skills_ref_validate(skill) == ["Missing required file: SKILL.md"]


def skills_ref_rejects(folder: Path) -> bool:
    try:
        return bool(skills_ref_validate(folder))
    except (UnicodeDecodeError, AttributeError):  # skills-ref crashes on invalid UTF-8 and on YAML control characters
        return True


def test_where_skills_ref_rejects_a_fixture_we_reject_it_too() -> None:
    """Every committed fixture folder that skills-ref rejects, we reject too (the safe direction, at scale)."""
    from builder.core.config import load_config
    from builder.core.loader import find_skill_folders

    fixtures = Path(__file__).resolve().parent / "fixtures"
    config = load_config(fixtures / "registry.yaml")
    checked, disagreements = 0, []
    for case in sorted(p.parent for p in fixtures.glob("*/expected.yaml")):
        if case.name == "bom":
            continue  # the known difference below
        for folder in find_skill_folders(case):
            if not ((folder / "SKILL.md").is_file() or (folder / "skill.md").is_file()):
                continue
            checked += 1
            ours = [d for d in validate_paths([folder], config, "spec").diagnostics if d.severity.value == "error"]
            if skills_ref_rejects(folder) and not ours:
                disagreements.append(f"{case.name}/{folder.name}")
    assert checked >= 60
    assert disagreements == []


# YAML that skills-ref (strictyaml) cannot read. DESIGN.md promises that anything we publish passes skills-ref,
# so `spec` refuses these (SK013, SK014) although PyYAML reads them; other profiles only warn.
SKILLS_REF_ONLY = [
    ("flow-mapping", "metadata: {author: ann}\n"),
    ("flow-sequence", "allowed-tools: [Read, Bash]\n"),
    ("anchor-and-alias", "metadata:\n  author: &who ann\n  owner: *who\n"),
    ("explicit-tag", "license: !!str MIT\n"),
]


@pytest.mark.parametrize("extra", [c[1] for c in SKILLS_REF_ONLY], ids=[c[0] for c in SKILLS_REF_ONLY])
def test_yaml_that_skills_ref_cannot_read_is_rejected(tmp_path: Path, extra: str) -> None:
    skill = make_skill(tmp_path, "pdf-tools", frontmatter(extra=extra))
    assert skills_ref_validate(skill) != []
    assert ("SK013", "error") in our_findings(skill)


def test_a_bom_that_skills_ref_cannot_read_is_rejected(tmp_path: Path) -> None:
    skill = write_tree(tmp_path / "pdf-tools", {"SKILL.md": b"\xef\xbb\xbf" + f"---\n{frontmatter()}---\n{BODY}".encode()})
    assert skills_ref_validate(skill) == ["SKILL.md must start with YAML frontmatter (---)"]
    assert our_findings(skill) == [("SK014", "error")]


def test_a_dashes_substring_does_not_end_our_frontmatter_but_ends_skills_refs(tmp_path: Path) -> None:
    """skills-ref splits on the first `---` substring, so it silently reads a truncated description."""
    from skills_ref.parser import read_properties

    skill = make_skill(tmp_path, "pdf-tools", frontmatter(description="Fills forms --- fast. Use when a PDF arrives."))
    assert our_findings(skill) == []
    config = RegistryConfig(root=tmp_path, path=None)
    (ours,) = validate_paths([skill], config, "spec").skills
    assert ours.description == "Fills forms --- fast. Use when a PDF arrives."
    assert read_properties(skill).description == "Fills forms"
