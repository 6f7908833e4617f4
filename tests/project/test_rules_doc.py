"""docs/rules.md is generated from the rule table; it fails here when the two drift apart."""

from __future__ import annotations

from click.testing import CliRunner
from helpers import REPO

from builder.cli.app import cli
from builder.core.diagnostics import RULES, SAFETY_RULES, ratcheted, severity_under
from builder.validate.rulesdoc import RULES_DOC_PATH, rules_markdown


def test_docs_rules_md_is_the_generated_text() -> None:
    committed = (REPO / RULES_DOC_PATH).read_text(encoding="utf-8")
    assert committed == rules_markdown(), \
        f"{RULES_DOC_PATH} is out of date: run `skillreg rules --markdown > {RULES_DOC_PATH}`"


def test_every_rule_has_a_row_with_its_severities_baseline_source_and_title() -> None:
    text = rules_markdown()
    for rule in RULES.values():
        source = f"{rule.source} (`{rule.policy}`)" if rule.policy else rule.source
        agents = severity_under(rule, "agents").value
        baseline = "never" if rule.code in SAFETY_RULES | {"SK605", "SK606"} else \
            "ratchet" if ratcheted(rule.code) else "held"
        assert (f"| {rule.code} | {rule.severity.value} | {agents} | {baseline} | {source} | "
                f"{rule.title.replace('|', chr(92) + '|')} |") in text


def test_the_agents_column_and_the_safety_rules_say_what_the_issue_asks() -> None:
    """Under `agents` the departures agents accept warn; what one of them refuses, and safety, stay errors."""
    text = rules_markdown()
    for code in ("SK013", "SK104", "SK106", "SK113", "SK120", "SK404", "SK405"):
        assert f"| {code} | error | warning |" in text or f"| {code} | warning | warning |" in text, code
    for code in ("SK101", "SK103", "SK107", "SK109", "SK112", "SK122", "SK505"):
        assert f"| {code} | error | error |" in text, code
    assert "| SK517 | warning | warning | never |" in text  # kept to archives, never baselined
    assert {"SK505", "SK501", "SK517", "SK508", "SK016"} <= SAFETY_RULES and "SK509" not in SAFETY_RULES


def test_cli_prints_the_list_and_the_markdown() -> None:
    result = CliRunner().invoke(cli, ["rules"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == len(RULES)
    assert lines[0] == f"SK001  error    {RULES['SK001'].title}"
    result = CliRunner().invoke(cli, ["rules", "--markdown"])
    assert (result.exit_code, result.output) == (0, rules_markdown())
