"""Split SKILL.md into YAML frontmatter and Markdown body, and parse the YAML safely.

The block is delimited by lines that are exactly ``---`` (trailing blanks allowed), never by a ``---``
substring. Duplicate keys, alias bombs and oversized blocks are refused with a finding, not a hang.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from .diagnostics import RULES, Diagnostic
from .model import Frontmatter

try:  # the libyaml parser is several times faster; the pure-Python one behaves the same
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

# An alias-heavy document may name a node many times; past this many nodes after expansion it is refused.
MAX_EXPANDED_NODES = 10_000
# A field's lists and mappings nested deeper than this are refused: every consumer of the published JSON (our
# client, JSON Schema validators, other registries' tools) may recurse once per level. Claude Code hooks use five.
MAX_NESTING = 20
_DELIMITER = "---"


@dataclass(frozen=True)
class ParsedSkillMd:
    frontmatter: Frontmatter | None
    body: str
    body_line: int
    diagnostics: tuple[Diagnostic, ...]


def _is_delimiter(line: str) -> bool:
    return line.rstrip(" \t\r") == _DELIMITER


def decode_utf8(data: bytes, file: str, skill: str = "") -> tuple[str | None, Diagnostic | None]:
    """Decode strictly; on failure name the byte offset and line of the first bad byte."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start:exc.start + 1].hex()
        return None, RULES["SK003"].at(
            file, line, f"SKILL.md is not valid UTF-8: byte 0x{bad} at byte offset {exc.start}", skill=skill)


def parse_skill_md(data: bytes, file: str, *, max_frontmatter_bytes: int, skill: str = "") -> ParsedSkillMd:
    def fail(diag: Diagnostic) -> ParsedSkillMd:
        return ParsedSkillMd(None, "", 1, (diag,))

    if not data.strip():
        return fail(RULES["SK011"].at(file, 1, skill=skill))
    text, error = decode_utf8(data, file, skill)
    if text is None:
        assert error is not None
        return fail(error)
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    first_end = text.find("\n")
    first = text if first_end == -1 else text[:first_end]
    if not _is_delimiter(first):
        return fail(RULES["SK004"].at(file, 1, f"SKILL.md must start with a `---` line, found {first[:40]!r}",
                                      skill=skill))
    closing = _closing_delimiter(text, first_end)
    if closing is None:
        return fail(RULES["SK005"].at(file, 1, "the frontmatter opened on line 1 is never closed by a `---` line",
                                      skill=skill))
    start, end = closing  # the closing line spans text[start:end]; text[end] is its line break, if any
    close = text.count("\n", 0, start)  # 0-based line index of the closing delimiter
    # Each YAML line keeps its line break, as in the file: a block scalar that is the last key ends with "\n".
    yaml_lines = text[first_end + 1:start]
    if "\r" in yaml_lines:
        yaml_lines = "".join(line.rstrip("\r") + "\n" for line in yaml_lines[:-1].split("\n"))
    yaml_text = yaml_lines
    size = len(yaml_text.encode("utf-8"))
    if size > max_frontmatter_bytes:
        return fail(RULES["SK006"].at(
            file, 2, f"the frontmatter is {size:,} bytes; the limit is {max_frontmatter_bytes:,}", skill=skill))
    rest = text[end + 1:] if end < len(text) else ""
    body = "\n".join(line.rstrip("\r") for line in rest.split("\n")) if "\r" in rest else rest
    body_line = close + 2

    diagnostics: list[Diagnostic] = []
    if not yaml_text.isascii() or "\r" in yaml_text:
        diagnostics.extend(_ambiguous_breaks(yaml_text, file, skill))
        if diagnostics:  # a block two YAML readers read as different text is not read at all
            return ParsedSkillMd(None, body, body_line, tuple(diagnostics))
    data_obj, lines_of, sources, key_sources = _load_yaml(yaml_text, file, skill, diagnostics)
    if diagnostics and data_obj is None:
        return ParsedSkillMd(None, body, body_line, tuple(diagnostics))
    frontmatter = Frontmatter(data=data_obj or {}, lines=lines_of, start_line=1, end_line=close + 1,
                              non_strict=_non_strict_features(yaml_text), bom=bom, sources=sources,
                              key_sources=key_sources)
    return ParsedSkillMd(frontmatter, body, body_line, tuple(diagnostics))


# Characters PyYAML (YAML 1.1) takes for a line break where YAML 1.2 readers, and most agents' readers, see an
# ordinary character (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR); and a carriage return left alone (the CR of
# each CRLF is already gone), a line break to every YAML reader but not to line-by-line readers.
_AMBIGUOUS_BREAKS = re.compile("[\x85\u2028\u2029\r]")
_BREAK_NAMES = {"\x85": "NEXT LINE", "\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR",
                "\r": "CARRIAGE RETURN"}


def _ambiguous_breaks(yaml_text: str, file: str, skill: str) -> Iterator[Diagnostic]:
    """SK016 for each character that YAML readers disagree on as a line break: text after one can be a comment
    or another key to PyYAML (so to the site, index and search) and part of the value to an agent."""
    for line_no, line in enumerate(yaml_text.split("\n"), start=2):
        for match in _AMBIGUOUS_BREAKS.finditer(line):
            char = match.group(0)
            alone = " not followed by a line feed" if char == "\r" else ""
            yield RULES["SK016"].at(
                file, line_no, f"the frontmatter holds <U+{ord(char):04X}> ({_BREAK_NAMES[char]}){alone}, which "
                f"some YAML readers take for a line break and others do not, so they read different text",
                column=match.start() + 1, skill=skill)


def _closing_delimiter(text: str, first_end: int) -> tuple[int, int] | None:
    """(start, end) of the first line after line 1 that is exactly ``---`` (trailing blanks allowed)."""
    if first_end == -1:
        return None
    search = first_end
    while True:
        found = text.find("\n---", search)
        if found == -1:
            return None
        start = found + 1
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        if _is_delimiter(text[start:end]):
            return start, end
        search = start


_Loaded = tuple[dict[str, Any] | None, dict[str, int], dict[str, str], dict[str, str]]
_STR = "tag:yaml.org,2002:str"


def _load_yaml(text: str, file: str, skill: str, out: list[Diagnostic]) -> _Loaded:
    """Compose, check the node graph, then construct: (fields, line of each key, text as written of each value
    that is not a string, of each nested key that is not a string). Lines are file lines (YAML starts on line 2)."""
    offset = 2
    loader = None
    failed: _Loaded = (None, {}, {}, {})
    try:
        loader = _Loader(text)  # the pure-Python reader refuses control characters already here
        node = loader.get_single_node()
        if node is None:
            return {}, {}, {}, {}
        if not isinstance(node, yaml.MappingNode):
            out.append(RULES["SK010"].at(file, node.start_mark.line + offset,
                                         f"the frontmatter is a YAML {_kind(node)}, not a mapping of fields",
                                         skill=skill))
            return failed
        measured = _measure_tree(node) if "*" not in text else _measure_graph(node)  # no "*", no alias
        if measured is None:
            out.append(RULES["SK009"].at(file, offset, "a YAML alias refers to a node that contains it "
                                                       "(recursive structure)", skill=skill))
            return failed
        nodes, depths = measured
        if nodes > MAX_EXPANDED_NODES:
            out.append(RULES["SK009"].at(file, offset, f"YAML aliases expand to more than {MAX_EXPANDED_NODES:,} "
                                                       "nodes (an alias bomb?)", skill=skill))
            return failed
        for (key_node, _), depth in zip(node.value, depths):
            if depth > MAX_NESTING:
                field = f"`{key_node.value}`" if isinstance(key_node, yaml.ScalarNode) else "a field"
                out.append(RULES["SK015"].at(file, key_node.start_mark.line + offset,
                                             f"{field} nests {depth} levels deep; the limit is {MAX_NESTING}",
                                             skill=skill))
                return failed
        # A key twice is reported, and checking goes on with its last value (what PyYAML and other readers that
        # accept the file keep), so the file's other findings show at once, not one edit later.
        out.extend(_duplicate_keys(node, file, skill, offset))
        value = _construct_strings(node) if "*" not in text else None  # no "*", no alias
        if value is None:
            value = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        out.append(_marked_error(exc, text, file, skill, offset))
        return failed
    except yaml.reader.ReaderError as exc:
        out.append(_reader_error(exc, text, file, skill, offset))
        return failed
    except yaml.YAMLError as exc:
        out.append(RULES["SK007"].at(file, offset, f"invalid YAML: {exc}", skill=skill))
        return failed
    except RecursionError:
        out.append(RULES["SK007"].at(file, offset, "invalid YAML: nesting is too deep", skill=skill))
        return failed
    finally:
        if loader is not None:
            loader.dispose()

    located = _locate_keys(node, text, file, skill, offset, out)
    if located is None:
        return failed
    return (value, *located)


def _marked_error(exc: yaml.MarkedYAMLError, text: str, file: str, skill: str, offset: int) -> Diagnostic:
    """A YAML error with a place: its line and column, and a hint where the usual mistake is recognised."""
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + offset if mark else offset
    column = mark.column + 1 if mark else 0
    what = exc.problem or exc.context or "invalid YAML"
    source_lines = text.split("\n")
    source = source_lines[mark.line] if mark and mark.line < len(source_lines) else ""
    tab_indent = "\t" in source[:len(source) - len(source.lstrip(" \t"))]  # libyaml's messages don't say so
    hint = "Indent with spaces; YAML does not allow tabs." if tab_indent else None
    block = _text_after_block_indicator(exc, source_lines)
    if block is not None:
        what, hint = block
    quote = _unclosed_quote(exc, source_lines) or _text_after_closing_quote(exc, source_lines)
    if quote is not None:
        what, hint, at_line, column = quote
        line = at_line + offset
    return RULES["SK007"].at(file, line, f"invalid YAML: {what}", column=column, skill=skill, hint=hint)


def _reader_error(exc: yaml.reader.ReaderError, text: str, file: str, skill: str, offset: int) -> Diagnostic:
    """A character YAML does not allow: no mark, and libyaml gives a byte offset, so find the character itself."""
    code = exc.character if isinstance(exc.character, int) else 0
    index = text.find(chr(code)) if code else -1
    line = text.count("\n", 0, index) + offset if index >= 0 else offset
    column = index - text.rfind("\n", 0, index) if index >= 0 else 0
    hint = f"Delete it, or write it as the escape \\u{code:04x} inside double quotes."
    return RULES["SK007"].at(file, line, f"invalid YAML: character U+{code:04X} is not allowed", column=column,
                             skill=skill, hint=hint)


def _locate_keys(node: yaml.MappingNode, text: str, file: str, skill: str, offset: int,
                 out: list[Diagnostic]) -> tuple[dict[str, int], dict[str, str], dict[str, str]] | None:
    """The line of each key, the text as written of each value that is not a string and of each nested key that
    is not a string; None (with a finding) when a key is not a string field name."""
    lines: dict[str, int] = {}
    sources: dict[str, str] = {}
    key_sources: dict[str, str] = {}
    bad_keys = False
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(key, str) or key_node.tag != _STR:
            out.append(RULES["SK012"].at(file, key_node.start_mark.line + offset,
                                         f"frontmatter key {key_node.value!r} is not a string field name",
                                         skill=skill))
            bad_keys = True
            continue
        lines[key] = key_node.start_mark.line + offset
        _record_source(text, key, value_node, sources)
        if isinstance(value_node, yaml.MappingNode):
            for sub_key, sub_value in value_node.value:
                if not isinstance(sub_key, yaml.ScalarNode):
                    continue
                path = f"{key}.{sub_key.value}"
                if sub_key.tag != _STR:  # checks name the key as Python shows the parsed one: 1.10 becomes 1.1
                    path = f"{key}.{yaml.constructor.SafeConstructor().construct_object(sub_key)}"
                    key_sources.setdefault(path, _written(text, sub_key))
                lines.setdefault(path, sub_key.start_mark.line + offset)
                _record_source(text, path, sub_value, sources)
    return None if bad_keys else (lines, sources, key_sources)


_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


def _construct_strings(node: yaml.Node) -> Any:
    """What the safe constructor makes of a tree of strings, lists and mappings with string keys (the usual
    frontmatter), built directly from the nodes; None for any other tag (numbers, dates, merges), which the
    constructor itself must read. Only for a tree without aliases, checked for duplicate keys and depth."""
    if isinstance(node, yaml.ScalarNode):
        return node.value if node.tag == _STR else None
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            return None
        items = [_construct_strings(item) for item in node.value]
        return None if any(item is None for item in items) else items
    if not isinstance(node, yaml.MappingNode) or node.tag != _MAP:
        return None
    mapping = {}
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag != _STR:
            return None
        built = _construct_strings(value)
        if built is None:
            return None
        mapping[key.value] = built
    return mapping


def _written(text: str, node: yaml.Node) -> str:
    """The node's text exactly as it stands in the YAML (marks count characters)."""
    return text[node.start_mark.index:node.end_mark.index]


def _record_source(text: str, path: str, node: yaml.Node, sources: dict[str, str]) -> None:
    """Keep the written text of a scalar that YAML does not read as a string, and of each item of a list."""
    if isinstance(node, yaml.ScalarNode):
        if node.tag != _STR:
            sources[path] = _written(text, node)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            sources[f"{path}[{i}]"] = _written(text, item)


_BLOCK_HEADER = re.compile(r"[|>](?:[1-9][+-]?|[+-][1-9]?)?")


def _text_after_block_indicator(exc: yaml.MarkedYAMLError, lines: list[str]) -> tuple[str, str] | None:
    """(message, hint) for text on the line of a block scalar indicator (`description: | Use when...`), the
    commonest YAML mistake in real skills: the hint shows the two lines it should be, built from the file's own."""
    mark, start = exc.problem_mark, exc.context_mark
    if exc.context != "while scanning a block scalar" or mark is None or start is None or \
            start.line != mark.line or mark.line >= len(lines):
        return None
    source = lines[mark.line]
    header = _BLOCK_HEADER.match(source, start.column)
    written = source[mark.column:].strip()
    if header is None or not written or written.startswith("#"):
        return None
    explicit = next((int(c) for c in header.group(0) if c.isdigit()), 2)
    indent = " " * (len(source) - len(source.lstrip(" ")) + explicit)
    first = source[:header.end()].rstrip()
    message = f"text follows the block scalar indicator `{header.group(0)}` on the same line"
    return message, (f"Move the text to the next line, indented under the key: `{first}` then "
                     f"`{indent}{written}`.")


_QUOTE_NAMES = {"'": "single", '"': "double"}
_ESCAPED = {"'": "''", '"': '\\"'}  # how each quoted style writes its own quote inside


def _unclosed_quote(exc: yaml.MarkedYAMLError, lines: list[str]) -> tuple[str, str, int, int] | None:
    """(message, hint, line index, column) for a quoted value that is never closed: YAML reads on to the end of
    the frontmatter, so the finding points at the opening quote instead, and the hint closes it on its line."""
    start = exc.context_mark
    if exc.context != "while scanning a quoted scalar" or start is None or start.line >= len(lines):
        return None
    source = lines[start.line]
    quote = source[start.column:start.column + 1]
    if quote not in _QUOTE_NAMES:
        return None
    message = f"the {_QUOTE_NAMES[quote]} quote `{quote}` that starts this value is never closed"
    hint = (f"End the value with a closing `{quote}` (`{source.rstrip()}{quote}`); a `{quote}` inside it is "
            f"written `{_ESCAPED[quote]}`.")
    return message, hint, start.line, start.column + 1


def _text_after_closing_quote(exc: yaml.MarkedYAMLError, lines: list[str]) -> tuple[str, str, int, int] | None:
    """(message, hint, line index, column) for text right after a quoted value's closing quote, as when the value
    holds its own quote unescaped (`description: 'It's here'`): the hint writes the inner quotes escaped."""
    mark = exc.problem_mark
    if mark is None or mark.line >= len(lines) or mark.column < 1:
        return None
    source = lines[mark.line]
    value = re.match(r"\s*(?:-\s+)?[^\s'\"#][^:]*:\s+(['\"])", source)
    before = source[:mark.column].rstrip()
    if value is None or not before.endswith(value.group(1)) or len(before) - 1 <= value.start(1):
        return None
    quote = value.group(1)
    message = f"text follows the closing `{quote}` of a quoted value"
    hint = f"A `{quote}` inside a {_QUOTE_NAMES[quote]}-quoted value is written `{_ESCAPED[quote]}`"
    written = source.rstrip()
    if len(written) - 1 > value.start(1) and written.endswith(quote):
        inner = written[value.start(1) + 1:-1].replace(_ESCAPED[quote], quote).replace(quote, _ESCAPED[quote])
        hint += f": `{written[:value.start(1)]}{quote}{inner}{quote}`"
    return message, hint + ".", mark.line, mark.column + 1


_STRICT_REFUSES = {yaml.FlowSequenceStartToken: "a flow-style list `[...]`",
                   yaml.FlowMappingStartToken: "a flow-style mapping `{...}`",
                   yaml.AnchorToken: "an anchor `&`", yaml.AliasToken: "an alias `*`", yaml.TagToken: "a tag `!`"}


# A token ``_STRICT_REFUSES`` names starts with one of these, first in its line or after an indicator (`-`, `:`,
# `?`, `,`, `[`, `{`), blanks between; every such token of a document is one, or follows one that is (an anchor's
# tag). A text without one (most descriptions, whatever `!` or `[` they hold) is not scanned.
_STRICT_MARKERS = re.compile(r"[\[{&*!]")


def _non_strict_features(text: str) -> tuple[tuple[str, int, int], ...]:
    """Uses of YAML features that strict YAML readers refuse; scanned only where such a token can start."""
    if not any(_may_start_token(text, marker.start()) for marker in _STRICT_MARKERS.finditer(text)):
        return ()
    found = []
    loader = _Loader(text)
    try:
        while True:
            token = loader.get_token()
            if token is None or isinstance(token, yaml.StreamEndToken):
                break
            what = _STRICT_REFUSES.get(type(token))
            if what:
                found.append((what, token.start_mark.line + 2, token.start_mark.column + 1))
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return tuple(found)


def _may_start_token(text: str, at: int) -> bool:
    """Whether a token can start at ``at``: only blanks between it and the line's start or an indicator. Linear
    over all markers: each looks back over the blanks right before it only."""
    before = at - 1
    while before >= 0 and text[before] in " \t":
        before -= 1
    return before < 0 or text[before] in "\n-:?,[{"


def _kind(node: yaml.Node) -> str:
    return {yaml.ScalarNode: "scalar", yaml.SequenceNode: "list"}.get(type(node), "value")


def _measure_tree(root: yaml.MappingNode) -> tuple[int, list[int]]:
    """(nodes, lists and mappings each top-level field nests) of a document without aliases, where every node
    has one parent: one pass, level by level, without recursion."""
    nodes, depths = 1, []
    for pair in root.value:
        if type(pair[0]) is yaml.ScalarNode and type(pair[1]) is yaml.ScalarNode:  # most fields: no walk
            nodes += 2
            depths.append(0)
            continue
        depth, level = 0, list(pair)
        while level:
            nodes += len(level)
            below: list[yaml.Node] = []
            for node in level:
                if isinstance(node, yaml.MappingNode):
                    below.extend(part for item in node.value for part in item)
                elif isinstance(node, yaml.SequenceNode):
                    below.extend(node.value)
            if below or any(not isinstance(node, yaml.ScalarNode) for node in level):
                depth += 1
            level = below
        depths.append(depth)
    return nodes, depths


def _measure_graph(root: yaml.MappingNode) -> tuple[int, list[int]] | None:
    """``_measure_tree`` for a document with aliases: nodes are counted as if aliases were copied out (capped
    just past MAX_EXPANDED_NODES); None when an alias refers to a node that contains it."""
    measures = _measure(root)
    if measures is None:
        return None
    return measures[id(root)][0], [max(measures[id(key)][1], measures[id(value)][1]) for key, value in root.value]


def _measure(root: yaml.Node) -> dict[int, tuple[int, int]] | None:
    """For every node below ``root``, by ``id``: (nodes it stands for once aliases are copied out, capped just
    past MAX_EXPANDED_NODES; lists and mappings it nests, 0 for a scalar). None when an alias refers to a node
    that contains it. Linear in the composed graph and without recursion, so no depth can exhaust the stack."""
    measures: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()  # nodes whose children are still being measured: the current path
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            size = min(1 + sum(measures[id(child)][0] for child in children), MAX_EXPANDED_NODES + 1)
            height = 0 if isinstance(node, yaml.ScalarNode) else \
                1 + max((measures[id(child)][1] for child in children), default=0)
            measures[key] = (size, height)
            continue
        if key in measures:
            continue
        if key in open_nodes:
            return None
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in measures)
    return measures


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _duplicate_keys(node: yaml.Node, file: str, skill: str, offset: int,
                    seen_nodes: set[int] | None = None) -> Iterator[Diagnostic]:
    seen_nodes = set() if seen_nodes is None else seen_nodes
    if id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                line = key.start_mark.line + offset
                if key.value in first:
                    yield RULES["SK008"].at(
                        file, line, f"duplicate key `{key.value}` (first defined on line {first[key.value]})",
                        skill=skill)
                else:
                    first[key.value] = line
            if not isinstance(value, yaml.ScalarNode):  # a scalar holds no key
                yield from _duplicate_keys(value, file, skill, offset, seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for child in node.value:
            if not isinstance(child, yaml.ScalarNode):
                yield from _duplicate_keys(child, file, skill, offset, seen_nodes)


_NAME_LINE = re.compile(r"^name:[ \t]+(?P<value>'[^'\n]*'|\"[^\"\\\n]*\"|[^\s'\"#|>&*!%@`{\[][^\n#]*?)"
                        r"(?P<rest>[ \t]*(?:#[^\n]*)?)$")


def renamed_skill_md(data: bytes, new_name: str, *, max_frontmatter_bytes: int) -> bytes:
    """SKILL.md with the value of its top-level ``name:`` line replaced by ``new_name``, every other byte kept.

    Refuses (UsageError) unless the name is a one-line scalar the rewrite can replace exactly: the result is
    parsed again and must differ from the original only in ``name``."""
    from .errors import UsageError

    def refuse(why: str) -> UsageError:
        return UsageError(f"SKILL.md: {why}; cannot rename the skill to {new_name!r} safely. Edit the `name:` "
                          f"line to {new_name} first, or import without --name")

    before = parse_skill_md(data, "SKILL.md", max_frontmatter_bytes=max_frontmatter_bytes)
    if before.frontmatter is None or before.diagnostics:
        raise refuse("its frontmatter does not parse cleanly")
    line_no = before.frontmatter.lines.get("name")
    if line_no is None or not isinstance(before.frontmatter.data.get("name"), str):
        raise refuse("its frontmatter has no `name:` line")
    lines = data.split(b"\n")
    raw = lines[line_no - 1]
    ending = b"\r" if raw.endswith(b"\r") else b""
    match = _NAME_LINE.match(raw[: len(raw) - len(ending)].decode("utf-8"))
    if match is None:
        raise refuse(f"line {line_no} is not a one-line `name: value`")
    text = match.string
    lines[line_no - 1] = (text[: match.start("value")] + new_name + text[match.end("value"):]).encode() + ending
    result = b"\n".join(lines)
    after = parse_skill_md(result, "SKILL.md", max_frontmatter_bytes=max_frontmatter_bytes)
    expected = {**before.frontmatter.data, "name": new_name}
    if after.frontmatter is None or after.diagnostics or after.frontmatter.data != expected or \
            after.body != before.body:
        raise refuse(f"the `name` on line {line_no} continues past that line")
    return result
