"""docs/steps/serve-the-model.md: deploy a model onto one GPU of the simulated dgx-1.

The deployment goes to :func:`engine.lesson.cluster.deploy`, which admits it if it fits the memory
still free on that GPU (other deployments may share it; a training job holds its GPUs to
itself). The result shows the weights, the KV cache, the activations and runtime overhead, and how many tokens
of context (so how many concurrent requests) the rest of the GPU holds. The widget shares
the store ``session:dgx-1`` with the dgx-1 panel, so deployments stay on the panel across
pages in the same tab.
"""

from __future__ import annotations

from engine.lesson import cluster, dgx_view
from engine.numbers import memory, quantities
from engine.numbers.catalog import get_system
from engine.numbers.errors import EngineError
from engine.render.charts import memory_bar
from engine.render.fields import Choice
from engine.render.html import definition_list, esc, tag
from engine.render.options import (
    BATCH,
    CONTEXT,
    catalog_model_field,
    noting_your_model,
    weight_format_field,
)
from engine.render.secondary import secondary
from engine.render.widget import Action, Rendered, Values, Widget
from engine.words.format import format_GB
from engine.words.memory_explained import KV_ROOM_RULE

ENGINE_FIELDS = {
    "model_id": "model",
    "gpus": "gpu",
    "weight_format": "format",
    "context_tokens": "context",
    "batch": "batch",
    "job_id": "action",
}


def _gpu_options() -> tuple[tuple[str, str], ...]:
    return tuple((str(g), f"GPU {g}") for g in range(get_system(dgx_view.SYSTEM).gpu_count))


MODEL = catalog_model_field(library=True)
GPU = Choice("gpu", "GPU", "0", options=_gpu_options())
FORMAT = weight_format_field()


def _last_running(state: cluster.ClusterState) -> cluster.Job:
    running = state.running_jobs()
    if not running:
        raise EngineError(
            f"No job is running on {state.system_id}, so there is none to stop.", "action"
        )
    return max(running, key=lambda j: int(j.id.removeprefix("job-")))


def _figures(state: cluster.ClusterState, gpu: int, mem: memory.ServingMemory, context: int,
             arithmetic: tuple[str, ...] = ()) -> str:
    """This deployment's memory on ``gpu`` of ``state`` (the state it is deployed into); an
    accepted deployment's ``arithmetic`` joins the worked-out figures behind the details."""
    held = state.used_bytes()[gpu]
    free = state.free_bytes()[gpu]
    working = mem.parts["activations"] + mem.parts["runtime_overhead"]
    blocks, block_tokens = cluster.serve_kv_blocks(mem.model, state.gpu_as_found((gpu,)),
                                                   mem.weight_format, mem.gpus)
    tokens = blocks * block_tokens
    parts = {"weights": mem.parts["weights"], "kv_cache": mem.parts["kv_cache"],
             "working_space": working}
    if held > 0:
        parts["other_jobs"] = held
    # The legend names each part with its GB: no "used" total over the bar.
    bar = memory_bar(parts, mem.capacity_bytes, label=f"Memory of GPU {gpu}", used_label=False)
    kv_total = (
        f"{format_GB(mem.parts['kv_cache'])} ({mem.batch:,} × {context:,} tokens × "
        f"{mem.kv_cache_bytes_per_token:,.0f} bytes)"
    )
    worked = definition_list(
        [
            ("Weights", f"{format_GB(mem.parts['weights'])} ({mem.weight_format})"),
            ("KV cache", kv_total),
            (
                "Activations + runtime overhead",
                f"{format_GB(working)} ({format_GB(mem.parts['activations'])} + "
                f"{format_GB(mem.parts['runtime_overhead'])})",
            ),
            ("This deployment in all", format_GB(mem.per_gpu_bytes)),
            (f"Free on GPU {gpu} before it", format_GB(free)),
        ]
    )
    figures = definition_list(
        [
            (f"Context the rest of GPU {gpu} holds", f"{tokens:,} tokens: {KV_ROOM_RULE}"),
            (f"Concurrent requests at {context:,} tokens each", f"{tokens // context:,}"),
        ]
    )
    return bar + figures + secondary("This deployment's memory, worked out",
                                     worked + _arithmetic(arithmetic))


def _arithmetic(lines: tuple[str, ...]) -> str:
    if not lines:
        return ""
    return tag("ol", "".join(tag("li", esc(line)) for line in lines), class_="deploy-arithmetic")


def _result(result: cluster.ActionResult) -> str:
    if result.accepted:
        verdict = tag("p", esc("Deployed."), class_="widget-verdict fits")
    else:
        verdict = tag("p", esc("Refused before it loads."), class_="widget-verdict refused")
    out = verdict + tag("p", esc(result.message), class_="deploy-message")
    # A refusal's sums are its reason and show; an accepted one's go behind the details.
    if not result.accepted:
        out += _arithmetic(result.arithmetic)
    if result.ways_out:
        items = "".join(
            tag("li", tag("strong", esc(w.label + ".")) + " " + esc(w.text))
            for w in result.ways_out
        )
        out += tag("p", esc("What would work instead:")) + tag("ul", items, class_="deploy-ways")
    return out


def render(values: Values) -> Rendered:
    state = dgx_view.load_state(values[dgx_view.state_field()])
    model_id = values[MODEL]
    model = cluster.model_named(model_id)
    gpu = int(values[GPU])
    weight_format = values[FORMAT]
    # The same ranges the simulation checks: this model's context, its batch limit.
    context = values[CONTEXT.but(quantity=quantities.context_for(model))]
    batch = values[BATCH.but(quantity=cluster.SERVE_BATCH)]
    mem = memory.serving_memory(
        model, state.system.gpu, weight_format=weight_format, context_tokens=context, batch=batch
    )
    action = values.action
    try:
        if action == "deploy":
            result = cluster.deploy(state, model_id, (gpu,), weight_format, context, batch)
            arithmetic = result.arithmetic if result.accepted else ()
            html = _result(result) + _figures(state, gpu, mem, context, arithmetic)
            return Rendered(html, {"state": dgx_view.dump_state(result.state)})
        if action == "stop":
            result = cluster.stop(state, _last_running(state).id)
            note = tag("p", esc(result.message), class_="deploy-message")
            html = note + _figures(result.state, gpu, mem, context)
            return Rendered(html, {"state": dgx_view.dump_state(result.state)})
    except EngineError as error:
        raise dgx_view.with_field(error, ENGINE_FIELDS) from None
    # What is free before it shows in its details ("Free on GPU n before it").
    return Rendered(tag("p", esc("Not deployed yet."), class_="deploy-ready")
                    + _figures(state, gpu, mem, context))


WIDGET = Widget(
    name="deploy_model",
    title="Deploy a model onto a dgx-1 GPU",
    fields=(MODEL, GPU, FORMAT, CONTEXT, BATCH, dgx_view.state_field()),
    actions=(Action("deploy", "Deploy", primary=True), Action("stop", "Stop last job")),
    render=noting_your_model(render, MODEL),
    store=dgx_view.STORE,
    summary="Deploy a model onto one GPU of the simulated dgx-1: weights, KV cache, working "
    "space, and the context and concurrency the rest of the GPU holds.",
)
