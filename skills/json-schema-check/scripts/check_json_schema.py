#!/usr/bin/env python3
"""Validate JSON documents against a practical subset of JSON Schema, using only the standard library.

Supported keywords: type, enum, const, required, properties, additionalProperties,
patternProperties, minProperties, maxProperties, items (single schema or tuple list),
minItems, maxItems, uniqueItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
multipleOf, minLength, maxLength, pattern, allOf, anyOf, oneOf, not, and local $ref
("#/..." pointers). Annotation keywords ($schema, $id, title, description, default,
examples, $comment, definitions, $defs, format) are accepted and ignored.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

SUPPORTED = {
    "type", "enum", "const", "required", "properties", "additionalProperties", "patternProperties",
    "minProperties", "maxProperties", "items", "minItems", "maxItems", "uniqueItems", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
    "pattern", "allOf", "anyOf", "oneOf", "not", "$ref",
}
IGNORED = {"$schema", "$id", "id", "title", "description", "default", "examples", "$comment",
           "definitions", "$defs", "format", "readOnly", "writeOnly", "deprecated"}


class SchemaError(Exception):
    """The schema itself is broken (bad $ref, wrong keyword value)."""


def die(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def type_name(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def is_type(value, expected: str) -> bool:
    actual = type_name(value)
    if expected == "number":
        return actual in ("integer", "number")
    if expected == "integer":
        return actual == "integer" or (actual == "number" and math.isfinite(value) and value.is_integer())
    return actual == expected


def pointer_escape(part) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def short(value) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def same(a, b) -> bool:
    """JSON equality: 1 == 1.0, but true != 1 and "1" != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class Validator:
    def __init__(self, root_schema: dict) -> None:
        self.root = root_schema
        self.unsupported: set[str] = set()

    def resolve(self, ref: str):
        if not ref.startswith("#"):
            raise SchemaError(f"only local $ref values starting with '#' are supported, got {ref!r}")
        node = self.root
        for raw in [p for p in ref[1:].split("/") if p != ""]:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaError(f"$ref {ref!r} does not resolve")
        return node

    def validate(self, value, schema, path: str = "", depth: int = 0) -> list[tuple[str, str]]:
        if depth > 100:
            raise SchemaError("schema nesting too deep (recursive $ref without progress?)")
        if schema is True or schema == {}:
            return []
        if schema is False:
            return [(path, "no value is allowed here (schema is false)")]
        if not isinstance(schema, dict):
            raise SchemaError(f"schema at {path or '/'} must be an object or boolean")
        errors: list[tuple[str, str]] = []
        here = path or "/"
        for key in schema:
            if key not in SUPPORTED and key not in IGNORED:
                self.unsupported.add(key)

        if "$ref" in schema:
            errors += self.validate(value, self.resolve(schema["$ref"]), path, depth + 1)

        if "type" in schema:
            expected = schema["type"]
            options = expected if isinstance(expected, list) else [expected]
            if not any(is_type(value, t) for t in options):
                errors.append((here, f"expected type {' or '.join(options)}, got {type_name(value)}"))
                return errors  # further checks would only add noise
        if "enum" in schema and not any(same(value, v) for v in schema["enum"]):
            errors.append((here, f"{short(value)} is not one of {short(schema['enum'])}"))
        if "const" in schema and not same(value, schema["const"]):
            errors.append((here, f"{short(value)} is not equal to const {short(schema['const'])}"))

        if type_name(value) in ("integer", "number"):
            if "minimum" in schema and value < schema["minimum"]:
                errors.append((here, f"{short(value)} is less than minimum {schema['minimum']}"))
            if "maximum" in schema and value > schema["maximum"]:
                errors.append((here, f"{short(value)} is greater than maximum {schema['maximum']}"))
            ex_min, ex_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
            if isinstance(ex_min, (int, float)) and not isinstance(ex_min, bool) and value <= ex_min:
                errors.append((here, f"{short(value)} must be greater than {ex_min}"))
            if isinstance(ex_max, (int, float)) and not isinstance(ex_max, bool) and value >= ex_max:
                errors.append((here, f"{short(value)} must be less than {ex_max}"))
            if "multipleOf" in schema:
                quotient = value / schema["multipleOf"]
                if not math.isclose(quotient, round(quotient), rel_tol=0, abs_tol=1e-9):
                    errors.append((here, f"{short(value)} is not a multiple of {schema['multipleOf']}"))

        if isinstance(value, str):
            if "minLength" in schema and len(value) < schema["minLength"]:
                errors.append((here, f"string is shorter than minLength {schema['minLength']} ({len(value)})"))
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                errors.append((here, f"string is longer than maxLength {schema['maxLength']} ({len(value)})"))
            if "pattern" in schema:
                try:
                    if not re.search(schema["pattern"], value):
                        errors.append((here, f"{short(value)} does not match pattern {schema['pattern']}"))
                except re.error as exc:
                    raise SchemaError(f"invalid pattern {schema['pattern']!r}: {exc}")

        if isinstance(value, list):
            if "minItems" in schema and len(value) < schema["minItems"]:
                errors.append((here, f"array has {len(value)} items, fewer than minItems {schema['minItems']}"))
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                errors.append((here, f"array has {len(value)} items, more than maxItems {schema['maxItems']}"))
            if schema.get("uniqueItems"):
                for i, item in enumerate(value):
                    if any(same(item, other) for other in value[:i]):
                        errors.append((f"{path}/{i}", f"duplicate item {short(item)} (uniqueItems)"))
            items = schema.get("items")
            if isinstance(items, list):
                for i, (item, sub) in enumerate(zip(value, items)):
                    errors += self.validate(item, sub, f"{path}/{i}", depth + 1)
            elif items is not None:
                for i, item in enumerate(value):
                    errors += self.validate(item, items, f"{path}/{i}", depth + 1)

        if isinstance(value, dict):
            for name in schema.get("required", []):
                if name not in value:
                    errors.append((here, f"missing required property {name!r}"))
            if "minProperties" in schema and len(value) < schema["minProperties"]:
                errors.append((here, f"object has fewer than minProperties {schema['minProperties']}"))
            if "maxProperties" in schema and len(value) > schema["maxProperties"]:
                errors.append((here, f"object has more than maxProperties {schema['maxProperties']}"))
            props = schema.get("properties", {})
            patterns = schema.get("patternProperties", {})
            for key in sorted(value):
                sub_path = f"{path}/{pointer_escape(key)}"
                matched = False
                if key in props:
                    matched = True
                    errors += self.validate(value[key], props[key], sub_path, depth + 1)
                for pattern, sub in patterns.items():
                    if re.search(pattern, key):
                        matched = True
                        errors += self.validate(value[key], sub, sub_path, depth + 1)
                if not matched and "additionalProperties" in schema:
                    extra = schema["additionalProperties"]
                    if extra is False:
                        errors.append((sub_path, f"additional property {key!r} is not allowed"))
                    else:
                        errors += self.validate(value[key], extra, sub_path, depth + 1)

        for sub in schema.get("allOf", []):
            errors += self.validate(value, sub, path, depth + 1)
        if "anyOf" in schema:
            if not any(not self.validate(value, sub, path, depth + 1) for sub in schema["anyOf"]):
                errors.append((here, "value does not match any schema in anyOf"))
        if "oneOf" in schema:
            matches = sum(1 for sub in schema["oneOf"] if not self.validate(value, sub, path, depth + 1))
            if matches != 1:
                errors.append((here, f"value matches {matches} schemas in oneOf, expected exactly 1"))
        if "not" in schema and not self.validate(value, schema["not"], path, depth + 1):
            errors.append((here, "value must not match the schema in 'not'"))
        return errors


def load_json(path: Path, what: str):
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        die(f"{what} not found: {path}")
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        die(f"cannot read {what} {path}: {exc}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        die(f"{what} {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def load_instances(path: Path, jsonl: bool) -> list[tuple[str, object]]:
    if not jsonl:
        return [(str(path), load_json(path, "document"))]
    try:
        lines = (sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")).splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        die(f"cannot read document {path}: {exc}")
    docs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            docs.append((f"{path}:{number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            die(f"{path}:{number} is not valid JSON: {exc.msg} at column {exc.colno}")
    return docs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Validate JSON documents against a JSON Schema subset (stdlib only). "
                    "Exit 0 when all are valid, 1 when any is invalid, 2 on bad input.")
    parser.add_argument("schema", type=Path, help="path to the JSON Schema file")
    parser.add_argument("documents", type=Path, nargs="+", help="JSON files to check ('-' reads stdin)")
    parser.add_argument("--jsonl", action="store_true", help="treat each non-empty line as a separate document")
    parser.add_argument("--max-errors", type=int, default=50, metavar="N",
                        help="stop listing after N errors per document (default 50)")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args(argv)

    schema = load_json(args.schema, "schema")
    if not isinstance(schema, (dict, bool)):
        die(f"schema {args.schema} must be a JSON object or boolean")
    validator = Validator(schema)
    results = []
    for path in args.documents:
        for label, doc in load_instances(path, args.jsonl):
            try:
                errors = validator.validate(doc, schema)
            except SchemaError as exc:
                die(f"schema {args.schema}: {exc}")
            results.append({"document": label, "valid": not errors,
                            "errors": [{"path": p, "message": m} for p, m in errors]})

    invalid = sum(1 for r in results if not r["valid"])
    if args.json:
        print(json.dumps({"schema": str(args.schema), "documents": results, "invalid": invalid,
                          "unsupported_keywords": sorted(validator.unsupported)}, indent=2, sort_keys=True))
    else:
        for r in results:
            if r["valid"]:
                print(f"{r['document']}: valid")
                continue
            print(f"{r['document']}: invalid ({len(r['errors'])} error{'s' if len(r['errors']) != 1 else ''})")
            for err in r["errors"][:args.max_errors]:
                print(f"  {err['path']}: {err['message']}")
            if len(r["errors"]) > args.max_errors:
                print(f"  ... {len(r['errors']) - args.max_errors} more")
        print(f"{len(results) - invalid} valid, {invalid} invalid")
        if validator.unsupported:
            print("warning: keywords not checked by this tool: " + ", ".join(sorted(validator.unsupported)),
                  file=sys.stderr)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
