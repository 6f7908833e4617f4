"""Tests for skills/json-schema-check/scripts/check_json_schema.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "json-schema-check" / "scripts" / "check_json_schema.py"

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["id", "email", "items"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "integer", "minimum": 1},
        "email": {"type": "string", "pattern": r"^[^@\s]+@[^@\s]+$"},
        "status": {"enum": ["new", "paid"]},
        "items": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"$ref": "#/$defs/item"}},
    },
    "$defs": {
        "item": {
            "type": "object",
            "required": ["sku", "qty"],
            "properties": {"sku": {"type": "string", "minLength": 3}, "qty": {"type": "integer", "maximum": 10}},
        }
    },
}


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args, stdin=stdin)


def dump(tmp_path: Path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "JSON Schema subset" in result.stdout


def test_valid_document_exits_zero(tmp_path):
    schema = dump(tmp_path, "schema.json", SCHEMA)
    doc = dump(tmp_path, "ok.json", {"id": 1.0, "email": "a@b.c", "status": "paid",
                                     "items": [{"sku": "abc", "qty": 10}]})
    result = run(schema, doc)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [f"{doc}: valid", "1 valid, 0 invalid"]


def test_invalid_document_lists_each_error_by_pointer(tmp_path):
    schema = dump(tmp_path, "schema.json", SCHEMA)
    doc = dump(tmp_path, "bad.json", {"id": 0, "email": "nope", "status": "lost", "extra": 1,
                                      "items": [{"sku": "ab", "qty": 11}, {"sku": "ab", "qty": 11}, {"sku": "xyz"}]})
    result = run(schema, doc)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{doc}: invalid (10 errors)",
        "  /email: \"nope\" does not match pattern ^[^@\\s]+@[^@\\s]+$",
        "  /extra: additional property 'extra' is not allowed",
        "  /id: 0 is less than minimum 1",
        "  /items/1: duplicate item {\"qty\": 11, \"sku\": \"ab\"} (uniqueItems)",
        "  /items/0/qty: 11 is greater than maximum 10",
        "  /items/0/sku: string is shorter than minLength 3 (2)",
        "  /items/1/qty: 11 is greater than maximum 10",
        "  /items/1/sku: string is shorter than minLength 3 (2)",
        "  /items/2: missing required property 'qty'",
        "  /status: \"lost\" is not one of [\"new\", \"paid\"]",
        "0 valid, 1 invalid",
    ]


def test_jsonl_json_output_and_type_semantics(tmp_path):
    schema = dump(tmp_path, "schema.json", {"type": "object", "properties": {
        "n": {"type": "integer"}, "flag": {"const": True}, "any": {"anyOf": [{"type": "null"}, {"type": "string"}]}}})
    data = tmp_path / "rows.jsonl"
    data.write_text('{"n": 1, "flag": true}\n\n{"n": true, "flag": 1, "any": 3}\n', encoding="utf-8")
    result = run(schema, str(data), "--jsonl", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["invalid"] == 1
    assert [d["document"] for d in report["documents"]] == [f"{data}:1", f"{data}:3"]
    assert report["documents"][1]["errors"] == [
        {"path": "/any", "message": "value does not match any schema in anyOf"},
        {"path": "/flag", "message": "1 is not equal to const true"},
        {"path": "/n", "message": "expected type integer, got boolean"},
    ]


def test_stdin_and_unsupported_keyword_warning(tmp_path):
    schema = dump(tmp_path, "schema.json", {"type": "object", "propertyNames": {"maxLength": 2}})
    result = run(schema, "-", stdin='{"long_key": 1}')
    assert result.returncode == 0
    assert "warning: keywords not checked by this tool: propertyNames" in result.stderr


def test_bad_inputs_exit_two_with_message(tmp_path):
    schema = dump(tmp_path, "schema.json", SCHEMA)
    broken = tmp_path / "broken.json"
    broken.write_text("{'id': 1}", encoding="utf-8")
    result = run(schema, str(broken))
    assert result.returncode == 2
    assert "is not valid JSON" in result.stderr and "line 1 column 2" in result.stderr

    bad_ref = dump(tmp_path, "ref.json", {"$ref": "#/$defs/missing"})
    result = run(bad_ref, dump(tmp_path, "doc.json", {}))
    assert result.returncode == 2
    assert "$ref '#/$defs/missing' does not resolve" in result.stderr

    result = run(str(tmp_path / "absent.json"), str(broken))
    assert result.returncode == 2
    assert "schema not found" in result.stderr
