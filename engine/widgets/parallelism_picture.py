"""Going further: parallelism in one picture. What each strategy splits (the batch, the
layers, each layer's matrices, the experts), what it sends over which link, and how much per
training step: every figure from the engine's expected training step.
"""

from __future__ import annotations

from typing import Any

from engine.lesson.plans.fields import plan_commands
from engine.numbers.catalog import get_model, get_system
from engine.numbers.memory import TrainingMemory
from engine.numbers.plan import plan
from engine.render.cluster_fields import PP, SEQ_LEN, SHARDING, SYSTEM, TP
from engine.render.cluster_fields import SERVERS as POD_SERVERS
from engine.render.fields import Choice
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.plot import Bar, bar_rows, chart_for_both, extra_caption_height, narrow_wrap
from engine.render.widget import Command, Values, Widget
from engine.words.format import format_bytes, format_seconds, plural

MODELS = ("llama-3.1-70b", "llama-3.1-405b", "deepseek-v3")
# strategy -> (its name, what it splits, what it sends, bar colour)
STRATEGIES = {
    "data": ("Data parallel", "the batch: each copy of the model trains on other sequences",
             "gradients, summed over the copies once per step", "part-0"),
    "tensor": ("Tensor parallel", "each layer's matrices, column and row blocks",
               "activations, summed by two all-reduces per layer forward and two backward",
               "part-1"),
    "pipeline": ("Pipeline parallel", "the layers, into stages one after another",
                 "activations to the next stage, their gradients back", "part-2"),
    "expert": ("Expert parallel", "the experts of each mixture-of-experts layer",
               "each token to its experts and back (all-to-all)", "part-4"),
}

MODEL = Choice("model", "Model", "llama-3.1-70b",
               options=tuple((m, get_model(m).name) for m in MODELS))
SERVERS = POD_SERVERS.but(default="64")
# The run's length: it sets no figure shown here (the traffic and the step are per step).
TOKENS = 1e12


def job(values: Values) -> dict[str, Any]:
    """plan()'s keywords for the job (the model aside)."""
    return {"hardware": get_system(SYSTEM).gpu.id, "task": "train", "nodes": values[SERVERS],
            "tp": values[TP], "pp": values[PP], "seq_len": SEQ_LEN, "sharding": SHARDING,
            "tokens": TOKENS}


def command(values: Values) -> Command:
    return plan_commands(values, MODEL, job(values))


def render(values: Values) -> str:
    system = get_system(SYSTEM)
    model = get_model(values[MODEL])
    servers = values[SERVERS]
    p = plan(model=model, **job(values))
    t = p.train
    assert t is not None
    e = t.expected
    used = {x.strategy: x for x in e.traffic}
    mem = p.memory
    assert isinstance(mem, TrainingMemory)
    sizes = {"data": mem.dp, "tensor": mem.tp, "pipeline": mem.pp,
             "expert": min(model.experts, mem.dp) if model.routed_params else 1}
    links = system.gpu.link_spec()
    head = column_heads(("Strategy", "Ways", "Splits", "Sends", "Over", "Per GPU per step",
                         "Time per step"))
    rows = []
    for key, (name, splits, sends, _) in STRATEGIES.items():
        x = used.get(key)
        cells = ((f"{sizes[key]:,}", splits, sends, x.link, format_bytes(x.bytes_per_step),
                  format_seconds(x.seconds_per_step)) if x is not None else
                 (f"{sizes[key]:,}", splits, "nothing: not used", "", "", ""))
        rows.append(tag("tr", tag("th", esc(name), scope="row")
                        + "".join(tag("td", esc(c)) for c in cells), data_strategy=key))
    figures = table_box(head, "".join(rows), caption=(
        f"{model.name} on {plural(p.gpus, 'GPU')} ({plural(servers, 'server')}), one step of "
        f"{e.tokens_per_step:,} tokens"))
    top = max((x.bytes_per_step for x in e.traffic), default=0.0)
    if top > 0:
        left, bar_h, gap = 4, 16, 24
        bars = [Bar(f"{STRATEGIES[x.strategy][0]}: {format_bytes(x.bytes_per_step)} per GPU, "
                    f"{format_seconds(x.seconds_per_step)}", x.bytes_per_step,
                    STRATEGIES[x.strategy][3], title=x.link,
                    fill={"data_strategy": x.strategy}) for x in e.traffic]

        def draw(width: int) -> tuple[str, float]:
            usable = width - 2 * left
            wrap_w = narrow_wrap(width, usable)
            height = 16 + len(bars) * (bar_h + gap) + extra_caption_height(bars, wrap_w)
            return bar_rows(bars, x=left, first_y=16, bar_h=bar_h, pitch=bar_h + gap,
                            units_per_value=usable / top, track_w=usable, wrap_w=wrap_w), height

        picture = chart_for_both(
            draw, css="traffic-bars", name="bytes each strategy sends per step",
            label="Bytes each GPU sends per training step: " + "; ".join(
                f"{STRATEGIES[x.strategy][0]} {format_bytes(x.bytes_per_step)} over "
                f"{x.link}, {format_seconds(x.seconds_per_step)}"
                for x in e.traffic) + ".")
    else:
        picture = tag("p", esc("One GPU: nothing travels between GPUs."))
    step = e.step
    bubble = (f", {format_seconds(step.bubble_seconds)} pipeline bubble"
              if step.bubble_seconds > 0 else ", no pipeline bubble")
    verdict = tag("p", esc(
        f"One step takes {format_seconds(step.seconds)}: "
        f"{format_seconds(step.compute_seconds)} compute, "
        f"{format_seconds(step.exposed_communication_seconds)} communication that compute "
        f"cannot hide{bubble}."), class_="widget-verdict")
    note = tag("p", esc(
        "Bytes are the buffers each GPU hands to its collectives in one step (an all-reduce "
        "moves about twice its buffer over the link); times include what overlaps with "
        f"compute. Tensor parallelism stays inside a server, where {links.scale_up} gives each "
        f"GPU {links.scale_up_bytes_per_s / links.scale_out_bytes_per_s:.0f} times the "
        "bandwidth of the network between servers."), class_="widget-notes")
    return verdict + picture + figures + note


WIDGET = Widget(
    name="parallelism_picture",
    title="Parallelism in one picture",
    fields=(MODEL, SERVERS, TP, PP),
    render=render,
    summary="What data, tensor, pipeline and expert parallelism split, what each sends over "
    "which link, and how many bytes and seconds per training step.",
    command=command,
)
