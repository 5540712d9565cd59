"""Secondary material in widget output: closed until the reader opens it, text escaped."""

from __future__ import annotations

from engine.render.secondary import secondary, secondary_list


def test_secondary_material_is_a_closed_details_with_its_summary() -> None:
    html = secondary("How the points are placed", "<p>x</p>")
    assert html.startswith('<details class="widget-notes"><summary>How the points are placed')
    assert " open" not in html


def test_a_secondary_list_escapes_its_lines_and_can_be_ordered() -> None:
    html = secondary_list("The arithmetic", ["a < b", "c"], ordered=True)
    assert "<ol><li>a &lt; b</li><li>c</li></ol>" in html
    assert "<ul>" in secondary_list("Assumptions", ["a"])
