"""dgx-1 under load: the reader sends requests at a rate to the model deployed on it and
watches the server work in simulated time (:mod:`engine.lesson.dgx_load`); once traffic
runs, one more button draws the latency-throughput curve with a second set-up beside it
(:mod:`engine.lesson.dgx_curve`). The traffic's settings, the curve's among them, live in
the dgx-1 state (store ``session:dgx-1``), so they survive a reload and follow the
deployment across pages; nothing is simulated until the reader presses Start.
"""

from __future__ import annotations

from engine.lesson import cluster, dgx_view
from engine.lesson.dgx_curve import BESIDE_LABELS, curve_html
from engine.lesson.dgx_load import job_gpu, serving_job, traffic_html
from engine.numbers.quantities import Quantity
from engine.render.fields import Choice, Count
from engine.render.html import esc, tag
from engine.render.widget import Action, Rendered, Values, Widget

DEFAULT_NOTCH = cluster.TRAFFIC_RATES.index(8.0)
RATE = Count(
    "rate_notch",
    "Requests arriving",
    str(DEFAULT_NOTCH),
    control_kind="range",
    value_texts=tuple(f"{r:g} request{'' if r == 1 else 's'} a second" for r in cluster.TRAFFIC_RATES),
    shows_value=True,  # the result says the rate only once traffic runs
    quantity=Quantity("integer", "", 0, len(cluster.TRAFFIC_RATES) - 1,
                      f"notches for {cluster.TRAFFIC_RATES[0]:g} to "
                      f"{cluster.TRAFFIC_RATES[-1]:g} requests a second"),
)

# Shown with the curve's offer (docs/css/dgx.css): before traffic runs it would mean nothing.
BESIDE = Choice("curve_beside", "Drawn beside its curve", "fp8",
                options=tuple((key, BESIDE_LABELS[key]) for key in cluster.CURVE_BESIDE),
                starts_hidden=True)
CURVE_OFFER = ("Latency against throughput, one button away: what a bigger batch gives "
               "each GPU and costs each user.")


def _result(state: cluster.ClusterState, animate: bool) -> str:
    """The traffic's result, then the curve once asked for (or the offer of it)."""
    html = traffic_html(state, animate)
    traffic, job = state.traffic, serving_job(state)
    if job is None or traffic is None or not traffic.on:
        return html
    if not traffic.curve_beside:
        return html + tag("p", esc(CURVE_OFFER), class_="dgx-curve-offer",
                          data_curve_offer="true")
    return html + curve_html(job, job_gpu(state, job), traffic.rate_per_s, traffic.curve_beside,
                             state.system.gpu_count)


def render(values: Values) -> Rendered:
    state = dgx_view.load_state(values[dgx_view.state_field()])
    action = values.action
    chosen = cluster.TRAFFIC_RATES[values[RATE]]
    beside = values[BESIDE]
    traffic = state.traffic
    sets: dict[str, str] = {}
    if action == "restore":
        # The first render of a page: the controls show what the kept state holds.
        if traffic is not None:
            sets["rate_notch"] = str(cluster.TRAFFIC_RATES.index(traffic.rate_per_s))
            if traffic.curve_beside:
                sets["curve_beside"] = traffic.curve_beside
    elif action == "curve" and traffic is not None and traffic.on:
        state = cluster.set_traffic(state, chosen, True, beside)
        sets["state"] = dgx_view.dump_state(state)
    elif action == "start" and serving_job(state) is not None:
        state = cluster.set_traffic(state, chosen, True)
        sets["state"] = dgx_view.dump_state(state)
    elif action == "stop":
        state = cluster.set_traffic(state, traffic.rate_per_s if traffic else chosen, False)
        sets["state"] = dgx_view.dump_state(state)
    elif traffic is not None and traffic.on and (
            traffic.rate_per_s != chosen
            or (traffic.curve_beside and traffic.curve_beside != beside)):
        # A control moved while traffic runs: the new rate or set-up, kept in the state.
        state = cluster.set_traffic(state, chosen, True,
                                    beside if traffic.curve_beside else None)
        sets["state"] = dgx_view.dump_state(state)
    return Rendered(_result(state, animate=action == "start"), sets)


WIDGET = Widget(
    name="dgx_traffic",
    title="dgx-1 under load",
    fields=(RATE, BESIDE, dgx_view.state_field()),
    actions=(
        Action("start", "Start traffic", primary=True),
        Action("stop", "Stop traffic"),
        # Shown once traffic runs (docs/css/dgx.css): the curve costs a dozen simulations.
        Action("curve", "Latency against throughput", hidden=True),
        Action("restore", "Restore", hidden=True),
    ),
    render=render,
    store=dgx_view.STORE,
    summary="Requests at a rate you set sent to the model deployed on dgx-1, simulated step "
    "by step: the queue, the running batch, the KV cache, TTFT and time per output token, "
    "tokens/s, whether it keeps up, and its latency-throughput curve beside a second set-up.",
)
