"""Step 12: the same work on dgx-1's two CPUs and on one of its GPUs, as a race.

A clock widget: while it plays the browser advances the hidden input ``elapsed`` (simulated
seconds) at the chosen ``speed`` (simulated seconds per real second, slow motion for a
prefill) and calls :func:`render`, which says how far each side has got.

Each side's time is the engine's: a prefill is :func:`engine.numbers.serving.prefill` (FLOPs / peak,
or bytes / bandwidth when reading the weights takes longer); a training step is
6 x parameters x tokens FLOPs / peak (:mod:`engine.numbers.compute`). Peaks are raw dense bf16 peaks,
so both times are floors.

The hidden input ``race`` remembers which race is on screen. When the reader changes the
race (task, model, lengths) the engine starts it again from zero and picks a speed at which
the slower side takes about :data:`TARGET_REAL_SECONDS` of real time.
"""

from __future__ import annotations

import math

from engine.numbers import memory, quantities
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_model, get_system
from engine.numbers.compute import training_flops_per_token, training_seconds
from engine.numbers.errors import EngineError
from engine.numbers.serving import Prefill, prefill
from engine.render.fields import Amount, Choice, hidden
from engine.render.html import column_heads, definition_list, esc, table_box, tag
from engine.render.options import (
    ELAPSED,
    PROMPT_TOKENS,
    catalog_model_field,
    speed_field,
)
from engine.render.plot import WIDTH, Bar, bar_rows, chart
from engine.render.widget import Rendered, Values, Widget
from engine.words.format import (
    a_or_an,
    format_count,
    format_elapsed,
    format_flops,
    format_GB,
    format_seconds,
    format_TFLOP_per_s,
)
from engine.words.labels import side_name

SYSTEM = "dgx-1"
MATHS_FORMAT = "bf16"
TARGET_REAL_SECONDS = 10.0

SPEEDS = (
    ("0.001", "1/1,000 of real time"),
    ("0.01", "1/100 of real time"),
    ("0.1", "1/10 of real time"),
    ("1", "Real time"),
    ("10", "10× real time"),
    ("100", "100× real time"),
    ("1000", "1,000× real time"),
    ("10000", "10,000× real time"),
)
TASKS = (
    ("prefill", "The prefill of one prompt"),
    ("train", "One training step"),
)
RACE = hidden("race", "Race on screen", "")
TASK = Choice("task", "Race", "prefill", options=TASKS)
MODEL = catalog_model_field()
TOKENS_PER_STEP = Amount(
    "tokens_per_step",
    "Tokens per training step",
    "1048576",
    unit="tokens",
    hint="e.g. 256 sequences of 4,096 tokens",
    quantity=quantities.TOKENS_PER_STEP,
)
SPEED = speed_field(SPEEDS, "0.01").but(
    hint="Simulated time per real second; set to suit each new race"
)


def pick_speed(slowest_seconds: float) -> str:
    """The speed option at which ``slowest_seconds`` of simulated time takes closest to
    TARGET_REAL_SECONDS of real time (closest on a log scale)."""
    return min(
        (value for value, _ in SPEEDS),
        key=lambda v: abs(math.log(slowest_seconds / float(v) / TARGET_REAL_SECONDS)),
    )


class Side:
    """One competitor: chips, how many, and its times for the two tasks."""

    def __init__(
        self,
        chip: HardwareSpec,
        count: int,
        model: ModelSpec,
        prompt_tokens: int,
        step_flops: float,
    ) -> None:
        self.chip = chip
        self.count = count
        self.name = side_name(chip, count)
        self.peak = chip.compute_peak(MATHS_FORMAT)[0] * count
        self.prefill: Prefill = prefill(
            model,
            chip,
            prompt_tokens=prompt_tokens,
            weight_format=MATHS_FORMAT,
            kv_format=MATHS_FORMAT,
            gpus=count,
        )
        self.step_seconds = training_seconds(
            step_flops, count, chip.compute_peak(MATHS_FORMAT)[0], 1.0
        )

    def seconds(self, task: str) -> float:
        return self.prefill.seconds if task == "prefill" else self.step_seconds


def _lane(side: Side, kind: str, seconds: float, elapsed: float) -> str:
    done = elapsed >= seconds
    fraction = 1.0 if done else elapsed / seconds
    words = (
        f"finished in {format_seconds(seconds)}"
        if done
        else f"{fraction:.0%} done; finishes at {format_seconds(seconds)}"
    )
    label = tag("span", esc(side.name), class_="race-name")
    bar = tag(
        "progress",
        esc(f"{fraction:.0%}"),
        max="1",
        value=f"{fraction:.4f}",
        aria_label=f"Share of the work done by {side.name}",
    )
    return tag(
        "div",
        label + bar + tag("span", esc(words), class_="race-words"),
        class_=f"race-lane race-{kind}",
        data_lane=kind,
        data_finished="true" if done else None,
        data_seconds=f"{seconds:.9g}",
    )


def _to_scale(cpu: Side, gpu: Side, task: str, *, width: int = WIDTH) -> str:
    """The two finishing times on one time axis, so the gap is seen as well as read."""
    t_cpu, t_gpu = cpu.seconds(task), gpu.seconds(task)
    top = max(t_cpu, t_gpu)
    left, bar_h, gap = 4, 16, 26
    usable = width - 2 * left
    bars = [
        Bar(f"{side.name}: {format_seconds(t)}", t, css, title=f"{side.name}: {format_seconds(t)}")
        for side, css, t in ((cpu, "part-2", t_cpu), (gpu, "part-0", t_gpu))
    ]
    rows = bar_rows(
        bars, x=left, first_y=14, bar_h=bar_h, pitch=bar_h + gap, units_per_value=usable / top
    )
    height = 14 + 2 * (bar_h + gap) - gap + 8
    description = (
        f"Time to finish, to scale: {cpu.name} {format_seconds(t_cpu)}, {gpu.name} "
        f"{format_seconds(t_gpu)}."
    )
    return tag("p", esc("Finishing times, to scale"), class_="widget-subtitle") + chart(
        rows, css="race-times", name="finishing times", label=description, width=width, height=height
    )


def _both_tasks_table(
    cpu: Side,
    gpu: Side,
    prefill_flops: float,
    step_flops: float,
    prompt_tokens: int,
    tokens_per_step: float,
) -> str:
    rows = [
        (f"Prefill of {prompt_tokens:,} prompt tokens", prefill_flops, "prefill"),
        (f"Training step of {format_count(tokens_per_step)} tokens", step_flops, "train"),
    ]
    head = column_heads(("Work", "FLOPs", cpu.name, gpu.name, "GPU finishes sooner by"))
    body = "".join(
        tag(
            "tr",
            tag("th", esc(label), scope="row")
            + "".join(
                tag("td", esc(cell))
                for cell in (
                    format_flops(flops),
                    format_seconds(cpu.seconds(task)),
                    format_seconds(gpu.seconds(task)),
                    f"{cpu.seconds(task) / gpu.seconds(task):,.1f}×",
                )
            ),
            data_task=task,
        )
        for label, flops, task in rows
    )
    caption = "Both kinds of work, at peak"
    return table_box(head, body, caption=caption, extra_class="race-table")


def render(values: Values) -> Rendered:
    task = values[TASK]
    model = get_model(values[MODEL])
    prompt_tokens = values[
        PROMPT_TOKENS.but(quantity=quantities.context_for(model, quantities.PROMPT_TOKENS))
    ]
    tokens_per_step = values[TOKENS_PER_STEP]
    speed = values[SPEED]
    elapsed = values[ELAPSED]
    system = get_system(SYSTEM)
    step_flops = training_flops_per_token(model).model * tokens_per_step
    cpu = Side(system.cpu, system.cpu_count, model, prompt_tokens, step_flops)
    gpu = Side(system.gpu, 1, model, prompt_tokens, step_flops)
    t_cpu, t_gpu = cpu.seconds(task), gpu.seconds(task)
    if not (math.isfinite(t_cpu) and math.isfinite(t_gpu) and t_cpu > 0 and t_gpu > 0):
        raise EngineError("These lengths give no time to race over.", "prompt_tokens")

    # A different race from the one on screen starts again, at a speed that suits it.
    length = prompt_tokens if task == "prefill" else tokens_per_step
    race = f"{task};{model.id};{length:.17g}"
    set_inputs: dict[str, str] = {}
    if values[RACE] != race:
        elapsed = 0.0
        chosen = pick_speed(max(t_cpu, t_gpu))
        speed = float(chosen)
        set_inputs = {"race": race, "elapsed": "0", "speed": chosen}

    slowest = max(t_cpu, t_gpu)
    finished = elapsed >= slowest
    ratio = t_cpu / t_gpu
    work = (
        f"the prefill of {a_or_an(prompt_tokens)} {prompt_tokens:,}-token prompt"
        if task == "prefill"
        else f"one training step of {format_count(tokens_per_step)} tokens"
    )
    if finished:
        status_words = (
            f"Both done: {work} on {model.name} took {format_seconds(t_gpu)} on {gpu.name} "
            f"and {format_seconds(t_cpu)} on {cpu.name}. The GPU finished {ratio:,.1f}× sooner."
        )
    elif elapsed >= t_gpu:
        status_words = (
            f"{gpu.name} has finished; {cpu.name} is still working ({elapsed / t_cpu:.0%} done)."
        )
    elif elapsed > 0:
        status_words = f"Racing: {work} on {model.name}."
    else:
        status_words = f"Ready: {work} on {model.name}. Press Start."
    status = tag(
        "p",
        esc(status_words),
        class_="widget-verdict fits" if finished else "widget-verdict",
        data_clock_done=finished or None,
    )
    lanes = tag(
        "div",
        _lane(gpu, "gpu", t_gpu, elapsed) + _lane(cpu, "cpu", t_cpu, elapsed),
        class_="race-lanes",
    )
    flops = cpu.prefill.flops if task == "prefill" else step_flops
    rule = (
        "2 × parameters × prompt tokens, plus attention"
        if task == "prefill"
        else "6 × active parameters × tokens + attention"
    )
    figures = definition_list(
        [
            ("Simulated time", format_elapsed(min(elapsed, slowest))),
            (f"Work ({rule})", format_flops(flops)),
            (f"Peak of {cpu.name} (bf16)", format_TFLOP_per_s(cpu.peak)),
            (f"Peak of {gpu.name} (bf16)", format_TFLOP_per_s(gpu.peak)),
            (f"Time on {gpu.name}", format_seconds(t_gpu)),
            (f"Time on {cpu.name}", format_seconds(t_cpu)),
            ("The GPU finishes sooner by", f"{ratio:,.1f}×"),
            ("Watching time at this speed", format_seconds(slowest / speed)),
        ]
    )
    notes = [
        f"Time = FLOPs / peak FLOP/s, with both sides at their raw dense bf16 peak: "
        f"a best case for each. {cpu.chip.name.replace(' (one socket)', '')}'s peak is a "
        f"{cpu.chip.confidence}-confidence figure derived "
        + ("from its AMX matrix units" if "AMX" in cpu.chip.note else "by the catalogue")
        + "; a CPU "
        "achieves a smaller share of its peak than a GPU does, so its real time is longer "
        "still and the real gap wider."
    ]
    for side in (cpu, gpu):
        if task == "prefill" and side.prefill.bound == "memory":
            notes.append(
                f"On {side.name} this prefill is limited by memory bandwidth, not maths: reading "
                f"the weights ({format_GB(side.prefill.bytes_read)}) takes longer than the "
                "FLOPs, so its time is bytes / bandwidth."
            )
    if task == "train":
        state = memory.training_bytes_per_param() * model.params
        if state > gpu.chip.memory_bytes:
            notes.append(
                f"Only the maths is timed here. The training state of {model.name} "
                f"({format_GB(state)} with Adam in mixed precision) does not fit in one "
                f"{gpu.chip.name}'s {format_GB(gpu.chip.memory_bytes)} (step 4): a real run "
                "shards it over several GPUs."
            )
    note_list = tag("ul", "".join(tag("li", esc(n)) for n in notes), class_="widget-notes")
    html = (
        status
        + lanes
        + figures
        + _to_scale(cpu, gpu, task)
        + _both_tasks_table(cpu, gpu, cpu.prefill.flops, step_flops, prompt_tokens, tokens_per_step)
        + note_list
    )
    return Rendered(html, set_inputs)


WIDGET = Widget(
    name="cpu_gpu_race",
    title="Race: dgx-1's two CPUs against one of its GPUs",
    fields=(ELAPSED, RACE, TASK, MODEL, PROMPT_TOKENS, TOKENS_PER_STEP, SPEED),
    render=render,
    clock=True,
    summary="The same prefill, or a training step, timed on dgx-1's two Xeon CPUs and on one "
    "H100 (FLOPs / peak), as a race in slow motion.",
)
