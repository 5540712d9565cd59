"""engine/render/html.py: the escaping every widget relies on."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from engine.render.html import esc


@given(st.text())
def test_esc_matches_the_standard_library(text: str) -> None:
    assert esc(text) == html.escape(text, quote=True)


def test_esc_makes_markup_inert() -> None:
    hostile = """<img src=x onerror="alert('1')">&amp;"""
    assert esc(hostile) == ("&lt;img src=x onerror=&quot;alert(&#x27;1&#x27;)&quot;&gt;&amp;amp;")


def test_esc_takes_any_value() -> None:
    assert esc(3.5) == "3.5"
    assert esc(None) == "None"
