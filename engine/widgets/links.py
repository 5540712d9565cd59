"""Going further: the link between chips as a fourth number. Each hop a byte can take from
a GPU (its memory, the links inside the server, PCIe, the network between servers) drawn
on one scale for two chips, with how many times slower than memory each hop is.
"""

from __future__ import annotations

from engine.numbers.catalog import get_hardware
from engine.numbers.hops import Hop, hops
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.options import hardware_field
from engine.render.plot import Bar, bar_rows, chart_for_both, extra_caption_height, narrow_wrap
from engine.render.svg import text
from engine.render.widget import Values, Widget
from engine.words.format import format_bandwidth

FIRST = hardware_field("First chip")
SECOND = hardware_field("Second chip").but(name="other", default="l40s")
HOP_CSS = {"memory": "part-0", "scale_up": "part-1", "pcie": "part-2", "scale_out": "part-4"}
HOP_WORDS = {"memory": "its own memory", "scale_up": "inside the server",
             "pcie": "over PCIe", "scale_out": "to other servers"}


def times_slower(hop: Hop) -> str:
    """'7.4 × slower than memory', or 'the reference' for memory itself."""
    if hop.kind == "memory":
        return "the reference"
    n = hop.times_slower
    return f"{n:.1f} × slower than memory" if n < 10 else f"{n:,.0f} × slower than memory"


def render(values: Values) -> str:
    chips = [get_hardware(values[FIRST]), get_hardware(values[SECOND])]
    found = [(hw, hops(hw)) for hw in chips]
    top = max(h.bytes_per_s for _, hs in found for h in hs)
    left, bar_h, gap, heading = 4, 16, 24, 22

    def draw(width: int) -> tuple[str, float]:
        usable = width - 2 * left
        wrap_w = narrow_wrap(width, usable)
        parts = []
        y = 16.0
        for hw, hs in found:
            parts.append(text(left, y, hw.name, font_weight="700"))
            bars = [Bar(f"{h.name}: {format_bandwidth(h.bytes_per_s)}, {times_slower(h)}",
                        h.bytes_per_s, HOP_CSS[h.kind],
                        title=f"{HOP_WORDS[h.kind]}: {format_bandwidth(h.bytes_per_s)}",
                        fill={"data_hop": h.kind}) for h in hs]
            parts.append(bar_rows(bars, x=left, first_y=y + heading, bar_h=bar_h,
                                  pitch=bar_h + gap, units_per_value=usable / top,
                                  track_w=usable, wrap_w=wrap_w))
            y += heading + len(hs) * (bar_h + gap) + 10
            y += extra_caption_height(bars, wrap_w)
        return "".join(parts), y

    description = "Bandwidth per GPU of each hop, one scale: " + "; ".join(
        f"{hw.name}: " + ", ".join(f"{HOP_WORDS[h.kind]} {format_bandwidth(h.bytes_per_s)}"
                                    f" ({times_slower(h)})" for h in hs)
        for hw, hs in found) + "."
    picture = chart_for_both(draw, css="link-bars", name="bandwidth of each hop",
                             label=description)
    head = column_heads(("Hop", *(hw.name for hw in chips)))
    body = "".join(
        tag("tr", tag("th", esc(HOP_WORDS[kind]), scope="row") + "".join(
            tag("td", esc(next((f"{format_bandwidth(h.bytes_per_s)} ({times_slower(h)})"
                                for h in hs if h.kind == kind), "none")))
            for _, hs in found), data_hop=kind)
        for kind in HOP_WORDS if any(h.kind == kind for _, hs in found for h in hs))
    figures = table_box(head, body, caption="Bandwidth per GPU, each way for links")
    note = tag("p", esc(
        "Memory bandwidth is the datasheet's (reads and writes together); links are each way "
        "per GPU, as collectives use them. A byte that leaves the GPU moves that many times "
        "slower than one it reads from its own memory."), class_="widget-notes")
    return picture + figures + note


WIDGET = Widget(
    name="links",
    title="The fourth number: the links between chips",
    fields=(FIRST, SECOND),
    render=render,
    summary="Bandwidth per GPU of each hop (memory, inside the server, PCIe, between servers) "
    "for two chips on one scale, and how many times slower than memory each is.",
)
