"""docs/rules.md is generated from the rule table; it fails here when the two drift apart."""

from __future__ import annotations

from click.testing import CliRunner
from helpers import REPO

from builder.cli.app import cli
from builder.core.diagnostics import RULES
from builder.validate.rulesdoc import RULES_DOC_PATH, rules_markdown


def test_docs_rules_md_is_the_generated_text() -> None:
    committed = (REPO / RULES_DOC_PATH).read_text(encoding="utf-8")
    assert committed == rules_markdown(), \
        f"{RULES_DOC_PATH} is out of date: run `skillreg rules --markdown > {RULES_DOC_PATH}`"


def test_every_rule_has_a_row_with_its_severity_source_and_title() -> None:
    text = rules_markdown()
    for rule in RULES.values():
        source = f"{rule.source} (`{rule.policy}`)" if rule.policy else rule.source
        assert f"| {rule.code} | {rule.severity.value} | {source} | {rule.title.replace('|', chr(92) + '|')} |" in text


def test_cli_prints_the_list_and_the_markdown() -> None:
    result = CliRunner().invoke(cli, ["rules"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == len(RULES)
    assert lines[0] == f"SK001  error    {RULES['SK001'].title}"
    result = CliRunner().invoke(cli, ["rules", "--markdown"])
    assert (result.exit_code, result.output) == (0, rules_markdown())
