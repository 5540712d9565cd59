"""docs/steps/follow-one-request.md: one request, followed from its prefill through every decode step."""

from __future__ import annotations

from engine.numbers import serving
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware
from engine.numbers.expected_serving import expected_serve
from engine.numbers.serving import RequestTimeline
from engine.render.charts import timeline
from engine.render.html import definition_list, esc, table, tag
from engine.render.options import (
    CONFIG,
    OUTPUT_TOKENS,
    PROMPT_TOKENS,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
)
from engine.render.secondary import secondary
from engine.render.widget import Values, Widget
from engine.words.expected import BOUND_WORDS, EXPECTED_SERVING_WORDS, at_best_and_expected
from engine.words.format import format_bandwidth, format_GB, format_percent, format_seconds

# The comparison: a long question with a short answer against the reverse.
LONG_TOKENS = 4000
SHORT_TOKENS = 100
MODEL = catalog_model_field(your_model=True)
HARDWARE = hardware_field()


def _phases(t: RequestTimeline) -> list[tuple[str, str, float, float]]:
    return [(p.name, p.kind, p.start_seconds, p.length_seconds) for p in t.phases]


def _share(part: float, whole: float) -> str:
    return format_percent(part / whole) if whole > 0 else format_percent(0.0)


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    prompt = values[PROMPT_TOKENS]
    answer = values[OUTPUT_TOKENS]
    run = serving.request_timeline(model, gpu, prompt_tokens=prompt, output_tokens=answer)
    decode_phases = [p for p in run.phases if p.kind == "decode"]
    grouped = any(p.tokens > 1 for p in decode_phases)
    steps = answer - 1
    chart = timeline(
        _phases(run),
        label=f"One request to {model.name} on one {gpu.name}, {prompt:,} tokens in and "
        f"{answer:,} out",
        marker_seconds=run.ttft_seconds,
        marker_label=f"first token {format_seconds(run.ttft_seconds)}",
    )
    expected = expected_serve(model, gpu, prompt_tokens=prompt, output_tokens=answer)
    legend = tag(
        "ul",
        tag(
            "li",
            tag("span", "", class_="swatch part-2", aria_hidden="true")
            + esc(f"Prefill, {run.prefill.bound}-bound"),
        )
        + tag(
            "li",
            tag("span", "", class_="swatch part-0", aria_hidden="true")
            + tag("span", "", class_="swatch part-1", aria_hidden="true")
            + esc(f"Decode: {steps:,} steps, {run.last_step.bound}-bound"),
        ),
        class_="legend",
    )
    # Every time as its two numbers: the bound, and what a tuned server is expected to take.
    figures = definition_list(
        [
            ("Time to first token", at_best_and_expected(run.ttft_seconds, expected.ttft_seconds)),
            (
                "Time per output token",
                at_best_and_expected(run.tpot_seconds, expected.decode_seconds_per_token)
                if steps else "no decode step: a one-token answer",
            ),
        ]
    )
    more = definition_list(
        [
            ("Total time", at_best_and_expected(run.total_seconds, expected.total_seconds)),
            ("Decoding, at best",
             f"{format_seconds(run.decode_seconds)}, "
             f"{_share(run.decode_seconds, run.total_seconds)} of the total"),
        ]
        + (
            [("Tokens per second for this reader, at best", f"{run.tokens_per_s_per_user:,.0f}")]
            if steps
            else []
        )
    )
    notes = [BOUND_WORDS, EXPECTED_SERVING_WORDS]
    if steps:
        notes.append(_decode_arithmetic(run, gpu))
    if grouped:
        notes.append(f"The {steps:,} decode steps are drawn in {len(decode_phases):,} groups, "
                     "so each stays wide enough to see.")
    return chart + legend + figures + _comparison(model, gpu, more, notes)


def _decode_arithmetic(run: RequestTimeline, gpu: HardwareSpec) -> str:
    """How the time per output token at best comes about: each step's bytes at the chip's
    bandwidth, the first and the last step, and their mean."""
    first, last = run.first_step, run.last_step
    over = format_bandwidth(gpu.bandwidth_bytes_per_s * run.gpus)
    gpus = f" ({run.gpus} GPUs together)" if run.gpus > 1 else ""
    return (f"At best each decode step reads the weights (of the token table, one row) and the "
            f"KV cache so far: {format_GB(first.bytes_read)} at the first step, "
            f"{format_GB(last.bytes_read)} at the last, at {over}{gpus}: "
            f"{format_seconds(first.seconds)} to {format_seconds(last.seconds)}, "
            f"{format_seconds(run.tpot_seconds)} on average.")


def _comparison(model: ModelSpec, gpu: HardwareSpec, more: str, notes: list[str]) -> str:
    """A long question with a short answer against the reverse, at best: two timelines on
    one scale as the page opens; their table joins ``more`` and ``notes`` in the details."""
    cases = (
        ("A long question, a short answer", LONG_TOKENS, SHORT_TOKENS),
        ("A short question, a long answer", SHORT_TOKENS, LONG_TOKENS),
    )
    runs = [
        (name, serving.request_timeline(model, gpu, prompt_tokens=p, output_tokens=o), p, o)
        for name, p, o in cases
    ]
    scale = max(r.total_seconds for _, r, _, _ in runs)
    rows = []
    charts = []
    for name, r, p, o in runs:
        rows.append(
            (
                name,
                f"{p:,} → {o:,}",
                format_seconds(r.ttft_seconds),
                format_seconds(r.total_seconds),
                _share(r.decode_seconds, r.total_seconds),
            )
        )
        charts.append(
            # The timeline's axis ends at its total time.
            tag("p", esc(f"{p:,} in, {o:,} out"),
                class_="widget-subtitle")
            + timeline(_phases(r), label=name, scale_seconds=scale)
        )
    table_html = table(
        ("Request", "Tokens in → out", "First token, at best", "Total, at best", "Decoding"),
        rows,
        caption="The two requests",
    )
    caption = tag(
        "p",
        esc(f"The same {LONG_TOKENS + SHORT_TOKENS:,} tokens, swapped, at best:"),
        class_="widget-subtitle",
    )
    details = secondary(
        "More figures and assumptions",
        more + table_html + tag("ul", "".join(tag("li", esc(n)) for n in notes)),
    )
    return caption + tag("div", "".join(charts), class_="widget-compare") + details


WIDGET = Widget(
    name="request_timeline",
    title="Follow one request",
    fields=(MODEL, CONFIG, HARDWARE, PROMPT_TOKENS, OUTPUT_TOKENS),
    render=noting_your_model(render, MODEL),
    summary="The timeline of one request: prefill, decode steps, time to first token, time per "
    "output token and total time; a long question against a long answer.",
)
