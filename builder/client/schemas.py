"""Every document the client reads is checked against the shape its JSON Schema gives before any field is used,
so a wrong-typed field is a one-line refusal naming the URL and the field, never a traceback further on.

The schemas are the ones the build publishes (``builder/publish/schemas``, read as data). The client checks the
types and formats of the fields a document has; it leaves out ``required`` and ``additionalProperties``, so a
registry built by an older or newer builder (a field fewer or more) still reads; the fields the client cannot do
without are demanded where they are used. Each validator is compiled once per process, and ``jsonschema`` is
imported only when the first document is checked. The index lists every skill and is checked by hand
(``check_index``): a schema validator takes seconds over 60,000 skills, this loop milliseconds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from ..core.errors import ClientError

_LEFT_OUT = ("required", "additionalProperties", "dependentRequired", "$id")
_MAX_SHOWN = 120


def _loosened(node: Any) -> Any:
    """The schema without the keywords that would refuse a field fewer or more than this client knows."""
    if isinstance(node, dict):
        return {k: _loosened(v) for k, v in node.items() if k not in _LEFT_OUT}
    if isinstance(node, list):
        return [_loosened(v) for v in node]
    return node


def _schema(name: str) -> Any:
    text = resources.files("builder").joinpath(f"publish/schemas/{name}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _validator(name: str) -> Any:
    from jsonschema.validators import validator_for

    schema = _loosened(_schema(name))
    return validator_for(schema)(schema)


@cache
def _row_pattern(field: str) -> re.Pattern[str]:
    """A field's pattern in an index row, as index.schema.json writes it."""
    return re.compile(_schema("index")["properties"]["skills"]["items"]["properties"][field]["pattern"])


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (str, "a string"), (int, "an integer"), (float, "a number"),
                       (list, "an array"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _shown(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"


def _types(error: Any) -> list[str] | None:
    """The JSON types a field should have had, when its type is what is wrong (also across ``oneOf`` branches)."""
    if error.validator == "type":
        value = error.validator_value
        return [str(v) for v in value] if isinstance(value, list) else [str(value)]
    branches = _branches(error)
    if branches and all(any(e.validator == "type" for e in errors) for errors in branches.values()):
        return [t for errors in branches.values() for e in errors if e.validator == "type" for t in _types(e) or []]
    return None


def _branches(error: Any) -> dict[Any, list[Any]]:
    """A ``oneOf``/``anyOf`` failure's errors on the field itself, by the branch that raised them."""
    branches: dict[Any, list[Any]] = {}
    if error.validator in ("oneOf", "anyOf"):
        for sub in error.context or ():
            if not sub.path:
                branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    return branches


def _problem(error: Any) -> str:
    wanted = _types(error)
    if wanted:
        return f"is {_json_type(error.instance)}, not {' or '.join(wanted)}"
    # The branch whose type fits says what is wrong (a string that is not a digest, say).
    fitting = [errors for errors in _branches(error).values() if not any(e.validator == "type" for e in errors)]
    if fitting:
        return _problem(fitting[0][0])
    if error.validator in ("pattern", "enum", "const", "minimum", "maximum", "minLength", "maxLength", "minItems",
                           "not"):
        return f"{_shown(repr(error.instance))} does not fit the schema ({error.validator} " \
               f"{_shown(json.dumps(error.validator_value))})"
    return _shown(str(error.message))


def check_document(doc: object, schema: str, where: str) -> None:
    """Refuse ``doc`` (read from ``where``) if a field has the wrong type or format for ``<schema>.schema.json``."""
    from jsonschema.exceptions import best_match

    errors = list(_validator(schema).iter_errors(doc))
    error = best_match(errors)
    if error is not None:
        # A field of the wrong type fails its format checks too; the type is what the reader needs to hear.
        error = next((e for e in errors if e.json_path == error.json_path and _types(e)), error)
        raise ClientError(f"{where}: {error.json_path} {_problem(error)}; refusing it")


def _optional_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# The index's row fields and what each must be: the same types and formats as index.schema.json.
_ROW: dict[str, tuple[Callable[[object], bool], str]] = {
    "name": (lambda v: isinstance(v, str) and len(v) <= 64 and bool(_row_pattern("name").match(v)), "a skill name"),
    "description": (lambda v: isinstance(v, str), "a string"),
    "category": (_optional_str, "a string or null"),
    "tags": (lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v), "an array of strings"),
    "version": (_optional_str, "a string or null"),
    "digest": (lambda v: isinstance(v, str) and bool(_row_pattern("digest").match(v)), "a sha256: digest"),
    "updated": (_optional_str, "a string or null"),
    "files": (_int, "a count"),
    "size": (_int, "a count"),
}


def check_index(doc: Mapping[str, Any], where: str) -> None:
    """index.json's shape, as index.schema.json gives it, in one pass over the skills."""
    skills = doc.get("skills")
    if not isinstance(skills, list):
        raise ClientError(f"{where}: $.skills is {_json_type(skills)}, not array; refusing it")
    for key, kind in (("registry", dict), ("source", dict), ("categories", list)):
        if key in doc and not isinstance(doc[key], kind):
            raise ClientError(f"{where}: $.{key} is {_json_type(doc[key])}, not "
                              f"{'object' if kind is dict else 'array'}; refusing it")
    for number, row in enumerate(skills):
        if not isinstance(row, dict):
            raise ClientError(f"{where}: $.skills[{number}] is {_json_type(row)}, not object; refusing it")
        for key, (fits, what) in _ROW.items():
            if key in row and not fits(row[key]):
                raise ClientError(f"{where}: $.skills[{number}].{key} is not {what}; refusing it")


def check_search_manifest(doc: Mapping[str, Any], where: str) -> None:
    """The sharded search index's manifest: the fields the client reads, with the types the build writes them
    (a field that is missing is the search's own refusal: "not a sharded search index")."""
    def bad(path: str, value: object, what: str) -> ClientError:
        return ClientError(f"{where}: $.{path} is {_json_type(value)}, not {what}; refusing it")

    for key in ("version", "count", "rows_per_file"):
        if key in doc and not _int(doc[key]):
            raise bad(key, doc[key], "a count")
    if "facets" in doc and not isinstance(doc["facets"], str):
        raise bad("facets", doc["facets"], "a string")
    rows, prefixes = doc.get("rows", []), doc.get("prefixes", {})
    if not isinstance(rows, list):
        raise bad("rows", rows, "an array")
    for number, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 2 and all(isinstance(cell, str) for cell in row)):
            raise bad(f"rows[{number}]", row, "[first name, digest]")
    if not isinstance(prefixes, dict):
        raise bad("prefixes", prefixes, "an object")
    for key, value in prefixes.items():
        if not isinstance(value, str):
            raise bad(f"prefixes.{key}", value, "a string")
    # Version 3: the full sha256 of every file named above, in the same shape (rows: one per rows file).
    full = doc.get("sha256", {})
    if not isinstance(full, dict):
        raise bad("sha256", full, "an object")
    if "facets" in full and not isinstance(full["facets"], str):
        raise bad("sha256.facets", full["facets"], "a string")
    full_rows, full_prefixes = full.get("rows", []), full.get("prefixes", {})
    if not (isinstance(full_rows, list) and all(isinstance(sha256, str) for sha256 in full_rows)):
        raise bad("sha256.rows", full_rows, "an array of strings")
    if not isinstance(full_prefixes, dict):
        raise bad("sha256.prefixes", full_prefixes, "an object")
    for key, value in full_prefixes.items():
        if not isinstance(value, str):
            raise bad(f"sha256.prefixes.{key}", value, "a string")
