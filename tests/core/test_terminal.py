"""``visible``: every character that can steer a terminal or hide text is spelled out; everything else is kept."""

from __future__ import annotations

import json

import pytest

from builder.core.terminal import visible, visible_json


@pytest.mark.parametrize("text, shown", [
    ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),  # OSC 52: write the clipboard
    ("\x1b[2K\x1b[1G", "\\x1b[2K\\x1b[1G"),  # CSI: erase the line, back to column 1
    ("a\rb\x7f\x00", "a\\x0db\\x7f\\x00"),
    ("\x9b31m\x85", "\\x9b31m\\x85"),  # C1 controls
    ("\u202e\u202a\u2066\u2069\u200e\u200f\u061c", "<U+202E><U+202A><U+2066><U+2069><U+200E><U+200F><U+061C>"),
    ("a\u200bb\u200dc\u2060d\ufeff", "a<U+200B>b<U+200D>c<U+2060>d<U+FEFF>"),
    ("line\u2028sep\u00adsoft", "line<U+2028>sep<U+00AD>soft"),
    ("café — naïve ✓ 😀 日本語", "café — naïve ✓ 😀 日本語"),
    ("two\nlines\tand tab", "two\\x0alines\\x09and tab"),
])
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_multiline_keeps_newlines_and_tabs_only() -> None:
    assert visible("+a\tb\n-c\r\n", multiline=True) == "+a\tb\n-c\\x0d\n"


def test_visible_json_is_the_same_data() -> None:
    data = {"d": "\u202eab\x85\x1b \U0001f600 é", "n": [1, "\u200b"]}
    text = visible_json(json.dumps(data, ensure_ascii=False, indent=2))
    assert json.loads(text) == data
    assert "\u202e" not in text and "\x85" not in text and "\u200b" not in text and "é" in text
