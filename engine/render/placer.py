"""Labels that do not collide: each label tries a few positions and takes the first that
overlaps nothing already drawn (boxes of points and labels, line segments) and stays inside
the chart; a label with no free position is left off, or drawn at a fallback the caller
chooses.

Text width is estimated, not measured (the engine has no fonts): :data:`CHAR_W` px per
character of the charts' 11 px text, a little generous, so estimated boxes hold the real ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

CHAR_W = 6.4  # px per character of 11 px text, a little generous
TEXT_H = 11.0  # px, the charts' text size

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
Spot = tuple[float, float, str]  # x, y (baseline), text-anchor
Segment = tuple[tuple[float, float], tuple[float, float]]


def text_width(text: str) -> float:
    """The estimated width of ``text`` in px."""
    return len(text) * CHAR_W


def text_box(x: float, y: float, text: str, anchor: str) -> Box:
    """The box ``text`` covers when drawn at baseline (x, y) with ``anchor``."""
    w = text_width(text)
    x0 = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
    return (x0 - 1, y - TEXT_H + 2, x0 + w + 1, y + 3)


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def segment_hits(box: Box, p: tuple[float, float], q: tuple[float, float]) -> bool:
    """Whether the segment p-q passes through ``box`` (sampled every 2 px: good enough)."""
    n = max(int(math.hypot(q[0] - p[0], q[1] - p[1]) / 2), 1)
    for i in range(n + 1):
        x = p[0] + (q[0] - p[0]) * i / n
        y = p[1] + (q[1] - p[1]) * i / n
        if box[0] <= x <= box[2] and box[1] <= y <= box[3]:
            return True
    return False


class Placer:
    """Free space on a chart: the bounds labels must stay in, boxes taken, segments drawn."""

    def __init__(self, bounds: Box) -> None:
        self.bounds = bounds
        self.boxes: list[Box] = []
        self.segments: list[Segment] = []

    def take(self, box: Box) -> None:
        """Mark ``box`` as taken (a point, a label placed by hand)."""
        self.boxes.append(box)

    def free(self, box: Box) -> bool:
        b = self.bounds
        if box[0] < b[0] or box[2] > b[2] or box[1] < b[1] or box[3] > b[3]:
            return False
        if any(overlaps(box, other) for other in self.boxes):
            return False
        return not any(segment_hits(box, p, q) for p, q in self.segments)

    def place(self, text: str, candidates: Sequence[Spot]) -> Spot | None:
        """The first of ``candidates`` where ``text`` fits, now taken; None when none does."""
        for x, y, anchor in candidates:
            box = text_box(x, y, text, anchor)
            if self.free(box):
                self.take(box)
                return x, y, anchor
        return None


def around(x: float, y: float, r: float) -> list[Spot]:
    """Label spots around a point of radius ``r``: below, above, right, left, corners."""
    return [
        (x, y + r + 12, "middle"),
        (x, y - r - 4, "middle"),
        (x + r + 4, y + 4, "start"),
        (x - r - 4, y + 4, "end"),
        (x + r + 2, y + r + 11, "start"),
        (x - r - 2, y - r - 3, "end"),
        (x + r + 2, y - r - 3, "start"),
        (x - r - 2, y + r + 11, "end"),
    ]
