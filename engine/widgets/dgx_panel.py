"""The operator's view of the simulated dgx-1, with two buttons: advance the clock one hour,
reset the server. The view itself and the state's round trip are :mod:`engine.lesson.dgx_view`.
"""

from __future__ import annotations

from engine.lesson import cluster
from engine.lesson.dgx_view import (
    ADVANCE_SECONDS,
    STORE,
    clock_text,
    dump_state,
    load_state,
    panel_html,
    state_field,
)
from engine.render.widget import Action, Rendered, Values, Widget


def render(values: Values) -> Rendered:
    state = load_state(values[state_field()])
    action = values.action
    note = ""
    if action == "reset":
        state = cluster.reset(state)
        note = f"Reset: {state.system_id} is fresh, every job gone, the clock back at 0:00."
    elif action == "advance":
        state = cluster.advance(state, ADVANCE_SECONDS)
        note = f"Advanced the simulated clock by one hour, to {clock_text(state.clock_seconds)}."
    html = panel_html(state, note)
    return Rendered(html, {"state": dump_state(state)} if action else {})


WIDGET = Widget(
    name="dgx_panel",
    title="dgx-1, as its operator sees it",
    fields=(state_field(),),
    actions=(
        Action("advance", "Advance 1 hour", primary=True),
        Action("reset", "Reset dgx-1"),
    ),
    render=render,
    store=STORE,
    summary="The simulated dgx-1: memory and utilisation of its 8 GPUs, the jobs running on "
    "them and the job log; shared by every widget that acts on it, in this tab.",
)
