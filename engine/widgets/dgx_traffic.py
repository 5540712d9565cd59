"""dgx-1 under load: the reader sends requests at a rate to the model deployed on it and
watches the server work in simulated time (:mod:`engine.lesson.dgx_load`). The traffic's
settings live in the dgx-1 state (store ``session:dgx-1``), so they survive a reload and
follow the deployment across pages; nothing is simulated until the reader presses Start.
"""

from __future__ import annotations

from engine.lesson import cluster, dgx_view
from engine.lesson.dgx_load import serving_job, traffic_html
from engine.numbers.quantities import Quantity
from engine.render.fields import Count
from engine.render.widget import Action, Rendered, Values, Widget

DEFAULT_NOTCH = cluster.TRAFFIC_RATES.index(8.0)
RATE = Count(
    "rate_notch",
    "Requests arriving",
    str(DEFAULT_NOTCH),
    control_kind="range",
    value_texts=tuple(f"{r:g} requests a second" for r in cluster.TRAFFIC_RATES),
    quantity=Quantity("integer", "", 0, len(cluster.TRAFFIC_RATES) - 1,
                      f"notches for {cluster.TRAFFIC_RATES[0]:g} to "
                      f"{cluster.TRAFFIC_RATES[-1]:g} requests a second"),
)


def render(values: Values) -> Rendered:
    state = dgx_view.load_state(values[dgx_view.state_field()])
    action = values.action
    chosen = cluster.TRAFFIC_RATES[values[RATE]]
    traffic = state.traffic
    sets: dict[str, str] = {}
    if action == "restore":
        # The first render of a page: the slider shows the rate the kept state holds.
        if traffic is not None:
            sets["rate_notch"] = str(cluster.TRAFFIC_RATES.index(traffic.rate_per_s))
    elif action == "start" and serving_job(state) is not None:
        state = cluster.set_traffic(state, chosen, True)
        sets["state"] = dgx_view.dump_state(state)
    elif action == "stop":
        state = cluster.set_traffic(state, traffic.rate_per_s if traffic else chosen, False)
        sets["state"] = dgx_view.dump_state(state)
    elif traffic is not None and traffic.on and traffic.rate_per_s != chosen:
        # The slider moved while traffic runs: the new rate, kept in the state.
        state = cluster.set_traffic(state, chosen, True)
        sets["state"] = dgx_view.dump_state(state)
    return Rendered(traffic_html(state, animate=action == "start"), sets)


WIDGET = Widget(
    name="dgx_traffic",
    title="dgx-1 under load",
    fields=(RATE, dgx_view.state_field()),
    actions=(
        Action("start", "Start traffic", primary=True),
        Action("stop", "Stop traffic"),
        Action("restore", "Restore", hidden=True),
    ),
    render=render,
    store=dgx_view.STORE,
    summary="Requests at a rate you set sent to the model deployed on dgx-1, simulated step "
    "by step: the queue, the running batch, the KV cache, TTFT and time per output token, "
    "tokens/s, and whether it keeps up.",
)
