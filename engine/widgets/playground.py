"""Step 21: the playground. Every input of :func:`engine.lesson.plan.plan` at once, over the whole
catalogue, with the full plan: the five answers, memory against capacity, the serving
timeline or the training time, and the cost.

Every visible input is mirrored in the page address (``url_state``), so the address bar is
a link to the exact state on screen. Inputs that apply only to the other task are still
checked, so a link never carries a value the engine would refuse later.
"""

from __future__ import annotations

from engine.lesson.plan import CHINCHILLA_TOKENS_PER_PARAM, QUESTIONS, TASKS, Plan, plan
from engine.numbers import validate
from engine.numbers.catalog import ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS
from engine.numbers.memory import CONVENTIONS, OPTIMIZERS, RECOMPUTE, SHARDINGS, ServingMemory
from engine.numbers.serving import request_timeline
from engine.render.charts import memory_bar, timeline
from engine.render.html import definition_list, esc, tag
from engine.render.options import (
    OPTIMIZER_LABELS,
    TASK_LABELS,
    format_options,
    hardware_options,
    model_controls,
    model_from,
    model_options,
)
from engine.render.widget import Control, Inputs, Widget
from engine.words.format import (
    format_bytes,
    format_count,
    format_flops,
    format_GB,
    format_seconds,
    format_TFLOP_per_s,
)
from engine.words.labels import labelled_parts

TASK_CHOICES = tuple((t, TASK_LABELS[t]) for t in TASKS)
KV_FORMATS = ("fp32", "bf16", "fp16", "fp8", "int8")
SHARDING_LABELS = {
    "none": "None (every GPU holds everything)",
    "zero1": "ZeRO-1 (optimiser states split)",
    "zero2": "ZeRO-2 (+ gradients split)",
    "zero3": "ZeRO-3 (+ weights split)",
}
CONVENTION_LABELS = {
    "mixed-16": "mixed-16: bf16 gradients",
    "mixed-18": "mixed-18: fp32 gradients",
    "mixed-20": "mixed-20: fp16 + fp32 gradients",
    "fp32": "fp32: everything in fp32",
}
RECOMPUTE_LABELS = {
    "none": "None (keep every activation)",
    "selective": "Selective (attention only)",
    "full": "Full (redo each layer's forward pass)",
}
MAX_TOKENS = 100_000_000  # the engine's limit on context and request lengths


def _select(inputs: Inputs, name: str, label: str, options: tuple[tuple[str, str], ...]) -> str:
    """A select's value; an address can carry one the list lacks (the browser then sends '')."""
    value = inputs[name]
    if value in {v for v, _ in options}:
        return value
    if value == "":
        raise EngineError(
            f"No {label.lower()} chosen (a link may have named one this page does not know): "
            "pick one from the list.",
            name,
        )
    return validate.choice(value, name, [v for v, _ in options], label=label)


def _optional_number(inputs: Inputs, name: str, label: str, maximum: float) -> float | None:
    text = inputs[name].strip()
    return None if text == "" else validate.number(text, name, label=label, maximum=maximum)


def _model(inputs: Inputs) -> ModelSpec:
    model_id = _select(inputs, "model", "Model", model_options())
    # The typed count may go unused, but it is in the address: it must still be a number.
    return model_from(inputs, model_id, check_params=True)


def run_plan(inputs: Inputs) -> Plan:
    """Check every input (those of the other task too), then ask :func:`engine.lesson.plan.plan`."""
    model = _model(inputs)
    hardware = _select(inputs, "hardware", "Hardware", hardware_options())
    task = _select(inputs, "task", "Task", TASK_CHOICES)
    gpus = validate.integer(inputs["gpus"], "gpus", label="GPU count", maximum=10_000_000)
    weight_format = _select(inputs, "format", "Number format", format_options())
    kv_format = _select(inputs, "kv_format", "KV cache format", format_options(*KV_FORMATS))
    context = validate.integer(inputs["context"], "context", label="Context", maximum=MAX_TOKENS)
    batch = validate.integer(inputs["batch"], "batch", label="Batch", maximum=10_000_000)
    prompt = validate.integer(inputs["prompt"], "prompt", label="Prompt", maximum=MAX_TOKENS)
    output = validate.integer(inputs["output"], "output", label="Answer", maximum=MAX_TOKENS)
    tokens = _optional_number(inputs, "tokens", "Training tokens", 1e16)
    mfu = validate.fraction(inputs["mfu"], "mfu", label="MFU")
    target_days = _optional_number(inputs, "target_days", "Target days", 1e6)
    sharding = _select(inputs, "sharding", "Sharding", tuple(SHARDING_LABELS.items()))
    tp = validate.integer(inputs["tp"], "tp", label="Tensor-parallel size", maximum=1024)
    optimizer = _select(inputs, "optimizer", "Optimiser", tuple(OPTIMIZER_LABELS.items()))
    convention = _select(inputs, "convention", "Convention", tuple(CONVENTION_LABELS.items()))
    recompute = _select(inputs, "recompute", "Recomputation", tuple(RECOMPUTE_LABELS.items()))
    micro_batch = validate.integer(
        inputs["micro_batch"], "micro_batch", label="Micro-batch", maximum=1_000_000
    )
    seq_len = validate.integer(
        inputs["seq_len"], "seq_len", label="Sequence length", maximum=10_000_000
    )
    price = _optional_number(inputs, "price", "Price per GPU-hour", 1e6)
    return plan(
        model=model,
        hardware=hardware,
        gpus=gpus,
        task=task,
        weight_format=weight_format,
        kv_format=kv_format,
        context_tokens=context,
        batch=batch,
        prompt_tokens=prompt,
        output_tokens=output,
        sharding=sharding,
        tp=tp,
        optimizer=optimizer,
        convention=convention,
        micro_batch=micro_batch,
        seq_len=seq_len,
        recompute=recompute,
        tokens=tokens,
        mfu=mfu,
        target_days=target_days,
        usd_per_gpu_hour=price,
    )


def _unit(p: Plan) -> str:
    unit = "GPU" if p.hardware.kind == "gpu" else "chip"
    return f"{p.gpus:,} {unit}{'s' if p.gpus > 1 else ''}"


def _serve_part(p: Plan) -> str:
    mem = p.memory
    assert isinstance(mem, ServingMemory) and p.serve is not None
    s = p.serve
    run = request_timeline(
        p.model,
        p.hardware,
        prompt_tokens=s.prompt_tokens,
        output_tokens=s.output_tokens,
        batch=mem.batch,
        weight_format=mem.weight_format,
        kv_format=mem.kv_format,
        gpus=p.gpus,
    )
    chart = timeline(
        [(ph.name, ph.kind, ph.start_seconds, ph.length_seconds) for ph in run.phases],
        label=f"One request of {s.prompt_tokens:,} tokens in, {s.output_tokens:,} out",
        marker_seconds=run.ttft_seconds,
        marker_label=f"first token {format_seconds(run.ttft_seconds)}",
    )
    figures = definition_list(
        [
            (
                "Time to first token",
                f"{format_seconds(run.ttft_seconds)} ({s.prefill.bound}-bound)",
            ),
            (
                "Time per output token",
                f"{format_seconds(s.tpot_seconds)} ({s.first_step.bound}-bound)",
            ),
            ("Tokens/s per user", f"{s.tokens_per_s_per_user:,.1f}"),
            ("Tokens/s, whole batch", f"{mem.batch * s.tokens_per_s_per_user:,.1f}"),
            ("Whole request", format_seconds(run.total_seconds)),
            ("KV cache per token", f"{format_bytes(mem.kv_cache_bytes_per_token)}"),
            (
                f"Requests of {mem.context_tokens:,} tokens that fit",
                f"{mem.max_concurrent_requests:,}",
            ),
        ]
    )
    return tag("h3", "Serving timeline", class_="s5-heading") + chart + figures


def _train_part(p: Plan) -> str:
    t = p.train
    assert t is not None
    tokens_words = (
        format_count(t.tokens)
        if t.tokens_given
        else f"{format_count(t.tokens)} ({CHINCHILLA_TOKENS_PER_PARAM} per parameter)"
    )
    rows = [
        ("Training tokens", tokens_words),
        ("Total compute", format_flops(t.total_flops)),
        (
            "Peak per GPU",
            f"{format_TFLOP_per_s(t.peak_flops_per_s)} ({t.compute_format}) × {t.mfu:.0%} MFU",
        ),
        ("Training tokens/s", f"{t.tokens_per_s:,.0f}"),
        ("Training time", format_seconds(t.seconds)),
    ]
    if t.gpus_for_target is not None and t.target_days is not None:
        rows.append((f"GPUs to finish in {t.target_days:g} days", f"{t.gpus_for_target:,}"))
    return tag("h3", "Training time", class_="s5-heading") + definition_list(rows)


def render(inputs: Inputs) -> str:
    p = run_plan(inputs)
    mem = p.memory
    what = "Serving" if p.task == "serve" else "Training"
    verdict = (
        f"{what} {p.model.name} on {_unit(p)} ({p.hardware.name}): "
        f"{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)} per "
        f"{'GPU' if p.hardware.kind == 'gpu' else 'chip'}, "
        + ("it fits." if mem.fits else "it does not fit.")
    )
    head = tag(
        "p",
        esc(verdict),
        class_="widget-verdict " + ("fits" if mem.fits else "refused"),
        data_fits="true" if mem.fits else "false",
    )
    bar = memory_bar(
        labelled_parts(mem.parts), mem.capacity_bytes, label=f"Memory of one {p.hardware.name}"
    )
    answers = p.answers()
    items = "".join(
        tag("li", tag("strong", esc(question)) + " " + esc(answers[key]), data_question=key)
        for key, question in QUESTIONS
    )
    speed = _serve_part(p) if p.task == "serve" else _train_part(p)
    notes = tag(
        "details",
        tag("summary", "Assumptions")
        + tag("ul", "".join(tag("li", esc(a)) for a in mem.assumptions)),
        class_="widget-notes",
    )
    return (
        head
        + tag("h3", "Memory per GPU", class_="s5-heading")
        + bar
        + speed
        + tag("h3", "The five answers", class_="s5-heading")
        + tag("ol", items, class_="s5-answers")
        + notes
    )


CONTROLS = (
    *model_controls(),
    Control("hardware", "Hardware", "select", "h100-sxm", options=hardware_options()),
    Control("gpus", "GPUs (or chips)", "number", "1"),
    Control("task", "Task", "select", "serve", options=TASK_CHOICES),
    Control(
        "format",
        "Weights stored as",
        "select",
        "bf16",
        options=format_options(*FORMATS),
        hint="Serving.",
    ),
    Control(
        "kv_format",
        "KV cache stored as",
        "select",
        "bf16",
        options=format_options(*KV_FORMATS),
        hint="Serving.",
    ),
    Control("context", "Context per request", "number", "8192", unit="tokens", hint="Serving."),
    Control("batch", "Concurrent requests (batch)", "number", "1", hint="Serving."),
    Control("prompt", "Prompt length", "number", "1024", unit="tokens", hint="Serving."),
    Control("output", "Answer length", "number", "256", unit="tokens", hint="Serving."),
    Control(
        "tokens",
        "Training tokens",
        "number",
        "",
        unit="tokens",
        hint=f"Training. Empty: {CHINCHILLA_TOKENS_PER_PARAM} per parameter.",
    ),
    Control("mfu", "MFU", "number", "0.4", hint="Training: share of peak achieved, e.g. 0.4."),
    Control("target_days", "Finish within", "number", "", unit="days", hint="Training. Optional."),
    Control(
        "sharding",
        "Sharding",
        "select",
        "none",
        options=tuple((s, SHARDING_LABELS[s]) for s in SHARDINGS),
        hint="Training.",
    ),
    Control(
        "tp",
        "Tensor parallel",
        "number",
        "1",
        unit="GPUs",
        hint="Training; must divide the GPU count. Serving always splits over all GPUs.",
    ),
    Control(
        "optimizer",
        "Optimiser",
        "select",
        "adam",
        options=tuple((o, OPTIMIZER_LABELS[o]) for o in OPTIMIZERS),
        hint="Training.",
    ),
    Control(
        "convention",
        "Precision convention",
        "select",
        "mixed-16",
        options=tuple((c, CONVENTION_LABELS[c]) for c in CONVENTIONS),
        hint="Training: bytes per parameter for weights and gradients.",
    ),
    Control(
        "recompute",
        "Activation recomputation",
        "select",
        "selective",
        options=tuple((r, RECOMPUTE_LABELS[r]) for r in RECOMPUTE),
        hint="Training.",
    ),
    Control("micro_batch", "Micro-batch", "number", "1", unit="sequences", hint="Training."),
    Control("seq_len", "Sequence length", "number", "4096", unit="tokens", hint="Training."),
    Control(
        "price",
        "Price per GPU-hour",
        "number",
        "",
        unit="USD",
        hint="Empty: the catalogue's cloud price for this hardware, if it has one.",
    ),
)

WIDGET = Widget(
    name="playground",
    title="Playground: the whole engine",
    controls=CONTROLS,
    render=render,
    summary="Every input of the plan at once (model, hardware, GPUs, serve or train, formats, "
    "context, batch, tokens, MFU, sharding, tensor parallel, optimiser, convention, "
    "recomputation, price): the five answers, memory against capacity, the timeline or "
    "training time, the cost. The page address holds every input.",
    url_state=tuple(c.name for c in CONTROLS if c.kind != "hidden"),
)
