"""Every committed broken skill under tests/validate/fixtures/ produces exactly the findings its expected.yaml lists.

The layout is described in tests/validate/fixtures/README.md. Each case is validated from inside its own folder, so the
file paths in findings and messages are short and do not depend on where pytest was started.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from builder.core.config import load_config
from builder.core.diagnostics import RULES
from builder.validate.run import validate_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expected.yaml").is_file())
FIELDS = ("file", "line", "column", "code", "severity", "message")


def load_case(case: str) -> dict:
    return yaml.safe_load((FIXTURES / case / "expected.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES)
def test_fixture_reports_exactly_its_findings(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = load_case(case)
    config = load_config(FIXTURES / expected.get("config", "registry.yaml"))
    monkeypatch.chdir(FIXTURES / case)
    paths = [Path(p) for p in expected.get("paths", ["."])]

    report = validate_paths(paths, config, expected.get("profile", "spec"))

    got = sorted(tuple(d.to_dict()[k] for k in FIELDS) for d in report.diagnostics)
    want = sorted(tuple(item.get(k, 0) for k in FIELDS) for item in expected["findings"])
    assert got == want
    hints = {tuple(d.to_dict()[k] for k in FIELDS): d.hint for d in report.diagnostics}
    for item in expected["findings"]:
        if "hint" in item:
            assert hints[tuple(item.get(k, 0) for k in FIELDS)] == item["hint"]


def test_every_fixture_folder_is_a_case_with_findings_of_known_rules() -> None:
    folders = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_"))
    assert folders == CASES and len(CASES) >= 45  # a folder without expected.yaml would be skipped silently
    for case in CASES:
        expected = load_case(case)
        assert isinstance(expected["findings"], list), f"{case}: expected.yaml needs a findings list"
        assert {item["code"] for item in expected["findings"]} <= set(RULES), case


def test_every_rule_that_fits_in_a_committed_file_has_a_fixture() -> None:
    """Rules about things git cannot hold are covered by tests/validate/test_validate_files.py instead."""
    made_in_tmp_path = {"SK501", "SK502", "SK503", "SK504", "SK505", "SK506", "SK510", "SK512", "SK513",
                        "SK514", "SK515", "SK516",  # names that would break a checkout on Windows or macOS
                        "SK306",  # needs git history: tests/validate/test_policy.py
                        "SK605", "SK606", "SK608"}  # a baseline (tests/validate/test_baseline.py); a link out
                        # of the repository (tests/validate/test_validate_files.py)
    covered = {item["code"] for case in CASES for item in load_case(case)["findings"]}
    assert set(RULES) - made_in_tmp_path - covered == set()


@pytest.mark.parametrize("case", ["bom", "crlf", "folded-description-dashes"])
def test_valid_encodings_parse_to_the_same_fields(case: str) -> None:
    """The BOM, CRLF and folded-`---` cases are not only silent: their frontmatter really parsed."""
    config = load_config(FIXTURES / "registry.yaml")
    report = validate_paths([FIXTURES / case], config, "spec")
    (skill,) = report.skills
    assert skill.field("name") == case
    assert skill.category == "data"
    assert skill.body == "# Fixture\n\nFollow these steps.\n"


def test_folded_description_keeps_the_dashes_as_text() -> None:
    config = load_config(FIXTURES / "registry.yaml")
    (skill,) = validate_paths([FIXTURES / "folded-description-dashes"], config, "spec").skills
    assert skill.description == ("Splits documents on lines such as --- and reports each part. "
                                 "Use when a file holds several YAML documents.")
