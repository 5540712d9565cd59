"""Continuous batching and the paged KV cache as they happen: one replica of dgx-1's
simulated server during one step (a :class:`~engine.numbers.load.snapshot.StepSnapshot`),
drawn from the simulation's own state.

Two pictures, 300 user units wide (whole on a 390 px phone, its text at 12 px):

- every request of the run as a square, in arrival order, twenty a row: decoding,
  prefilling a chunk of its prompt, running but given no tokens this step, queued (those
  preempted, to recompute, apart), finished, not yet arrived;
- the KV cache's blocks as two strips: the whole pool, used against free, and the used
  blocks alone across the full width, one segment per running request in the order they
  started (two shades taking turns, so neighbours stay apart), a shared prefix's first.
"""

from __future__ import annotations

from engine.numbers.load.snapshot import StepSnapshot
from engine.render.html import esc, tag
from engine.render.plot import legend
from engine.render.svg import boxes, rect, svg, text
from engine.words.format import format_percent, format_seconds, plural

WIDTH = 300
COLUMNS = 20
CELL = WIDTH / COLUMNS
SQUARE = CELL - 3
STRIP = 16
LABEL = 16  # a label's line above a strip

# Each request's state -> its class (docs/css/dgx.css) and the legend's words.
STATES = {
    "decode": ("kv-decode", "decoding"),
    "prefill": ("kv-prefill", "prefilling a chunk"),
    "paused": ("kv-paused", "running, no tokens this step"),
    "queued": ("kv-queued", "queued"),
    "preempted": ("kv-preempted", "preempted, queued to recompute"),
    "finished": ("kv-finished", "finished"),
    "later": ("kv-later", "not yet arrived"),
}


def request_states(shot: StepSnapshot, requests: tuple[int, ...]) -> dict[int, str]:
    """Each of ``requests`` (the replica's, by index) -> its state's key in :data:`STATES`."""
    arrived = len(requests) - shot.not_arrived
    states = {index: "finished" if k < arrived else "later"
              for k, index in enumerate(requests)}
    for i in shot.queued:
        states[i] = "queued"
    for i in shot.preempted:
        states[i] = "preempted"
    for r in shot.running:
        states[r.index] = r.phase
    return states


def _grid(states: dict[int, str], top: float) -> tuple[str, float]:
    by_state: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in STATES}
    for k, index in enumerate(states):
        row, col = divmod(k, COLUMNS)
        by_state[states[index]].append((col * CELL + 1.5, top + row * CELL + 1.5, SQUARE,
                                        SQUARE))
    cells = "".join(boxes(squares, class_=STATES[key][0]) for key, squares in by_state.items())
    rows = -(-len(states) // COLUMNS)
    return cells, top + rows * CELL


def _strips(shot: StepSnapshot, top: float) -> tuple[str, float]:
    total, used = shot.kv_blocks, shot.kv_blocks_used
    parts = [text(0, top + 12, f"The whole pool: {used:,} of {total:,} blocks used")]
    y = top + LABEL
    parts.append(rect(0, y, WIDTH, STRIP, class_="kv-free"))
    if total:
        parts.append(rect(0, y, WIDTH * used / total, STRIP, class_="kv-used"))
    y += STRIP + 8
    parts.append(text(0, y + 12, "The used blocks, by request"))
    y += LABEL
    parts.append(rect(0, y, WIDTH, STRIP, class_="kv-free"))
    scale = WIDTH / used if used else 0.0
    # One segment a holder, in the order they took their blocks: the shared prefix, then
    # the running requests, two shades in turn (a prefill in its own colour).
    segments: dict[str, list[tuple[float, float, float, float]]] = {
        "kv-shared": [], "kv-own-0": [], "kv-own-1": [], "kv-prefill": []}
    x = 0.0
    holders = [("kv-shared", shot.shared_blocks)] if shot.shared_blocks else []
    holders += [("kv-prefill" if r.phase == "prefill" else f"kv-own-{k % 2}", r.blocks)
                for k, r in enumerate(shot.running)]
    for css, blocks in holders:
        w = blocks * scale
        segments[css].append((x, y, w, STRIP))
        x += w
    parts.extend(boxes(shapes, class_=css) for css, shapes in segments.items())
    return "".join(parts), y + STRIP


def state_counts(states: dict[int, str]) -> dict[str, int]:
    """How many requests are in each state of :data:`STATES` (in its order)."""
    counts = dict.fromkeys(STATES, 0)
    for state in states.values():
        counts[state] += 1
    return counts


def batch_svg(shot: StepSnapshot, states: dict[int, str]) -> str:
    """The requests and the KV cache of ``shot`` (see the module's note): ``states`` the
    replica's requests, in arrival order, as :func:`request_states` gives them."""
    grid, y = _grid(states, 0.0)
    strips, y = _strips(shot, y + 6)
    counts = state_counts(states)
    label = (f"{len(states):,} requests as squares in arrival order: "
             + ", ".join(f"{counts[k]:,} {STATES[k][1]}" for k in STATES if counts[k])
             + f". KV cache: {shot.kv_blocks_used:,} of {shot.kv_blocks:,} blocks used, "
             f"{shot.free_blocks:,} free.")
    return svg(grid + strips, css="dgx-batch-svg", width=WIDTH, height=y + 2, label=label,
               data={"batch": "kv-cache"})


def batch_html(shot: StepSnapshot, requests: tuple[int, ...], block_tokens: int,
               preemptions: int, filling: str) -> str:
    """``shot`` in a closed <details> (the reader opens it on purpose): its moment, the
    pictures, their key with counts, the blocks in words, what a preemption does
    (``preemptions``: the run's) and ``filling``, a sentence on when the cache fills."""
    states = request_states(shot, requests)
    counts = state_counts(states)
    when = format_seconds(shot.time_seconds) if shot.time_seconds > 0 else "0 s"
    summary = (f"Inside the batch at the KV cache's fullest ({when} simulated): who runs, "
               "who waits, whose blocks")
    running = len(shot.running)
    most = max((r.blocks for r in shot.running), default=0)
    blocks = (f"KV cache: {shot.kv_blocks_used:,} of {shot.kv_blocks:,} blocks of "
              f"{block_tokens} tokens used ({format_percent(shot.kv_blocks_used / shot.kv_blocks)}"
              f"), held by {plural(running, 'running request')}"
              + (f" ({most:,} blocks the most one holds)" if running else "")
              + (f" and a shared prefix ({shot.shared_blocks:,})" if shot.shared_blocks else "")
              + f"; {shot.free_blocks:,} free. Each request takes a block as its tokens "
              "fill the last, and frees them all when it finishes.")
    preempt = (f"This run preempted {plural(preemptions, 'time')}: " if preemptions
               else "This run preempted nobody; when it must, ")
    preempt += ("a request whose next token needs a block when none is free makes the "
                "newest running request give all its blocks back and return to the front of "
                "the queue, to recompute its prompt and its answer so far.")
    key = legend([(STATES[k][0], f"{counts[k]:,} {STATES[k][1]}") for k in STATES
                  if counts[k] or k in ("decode", "prefill", "queued")])
    prefilling = counts["prefill"]
    figures = (f"At that step: {shot.computing:,} running ({counts['decode']:,} decoding, "
               f"{prefilling:,} prefilling a chunk"
               + (f", {counts['paused']:,} more waiting for the token budget" if counts["paused"]
                  else "")
               + f"), {len(shot.queued):,} queued"
               + (f" ({len(shot.preempted):,} of them preempted)" if shot.preempted else "")
               + f", {shot.finished:,} finished, {shot.not_arrived:,} not yet arrived.")
    body = (tag("p", esc(f"One step of the simulation, {format_seconds(shot.seconds)} long, "
                         f"starting at {when}: every request of the run, one square each, "
                         "in the order they arrived, then the KV cache's blocks. "
                         + figures))
            + tag("div", batch_svg(shot, states), class_="dgx-batch-figure")
            + key + tag("p", esc(blocks)) + tag("p", esc(preempt))
            + tag("p", esc(filling), data_batch="filling"))
    return tag("details", tag("summary", esc(summary)) + body, class_="widget-notes dgx-batch")
