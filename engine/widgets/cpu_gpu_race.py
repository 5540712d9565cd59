"""docs/steps/same-prompt-on-cpus.md: the same work on dgx-1's two CPUs and on its GPUs, as a race.

A clock widget: while it plays the browser advances the hidden input ``elapsed`` (simulated
seconds) at the chosen ``speed`` (simulated seconds per real second, slow motion for a
prefill) and calls :func:`render`, which says how far each side has got.

Server against server by default: the two CPUs against all eight GPUs (or one GPU, to see a
single chip). The reader chooses the CPUs' code path: their AMX matrix units in bf16 or their
AVX-512 vector units in fp32 (:mod:`engine.numbers.code_paths`). Each side's time comes as
two numbers: the bound (paper peak, datasheet bandwidth) and the expected value, which the
race plays. On the GPUs the expected prefill is :func:`engine.numbers.expected_serving.expected_prefill_seconds`
and the expected training step runs at :func:`engine.numbers.expected_training.expected_train`'s
MFU; on the CPUs both use the measured matrix-multiply efficiency of the chosen path.

The hidden input ``race`` remembers which race is on screen. When the reader changes the
race (task, model, lengths, GPUs, code path) the engine starts it again from zero and picks
a speed at which the slower side takes about :data:`TARGET_REAL_SECONDS` of real time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.numbers import memory, quantities
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_system
from engine.numbers.catalog.efficiency import memory_fraction
from engine.numbers.code_paths import PATHS, PathId, PathTime, code_path, time_on_path
from engine.numbers.compute import training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import expected_prefill_seconds
from engine.numbers.expected_training import expected_train
from engine.numbers.formats import FormatId
from engine.numbers.serving import Prefill, prefill
from engine.render.fields import Amount, Choice, OneOf, hidden
from engine.render.html import column_heads, definition_list, esc, table_box, tag
from engine.render.options import (
    ELAPSED,
    PROMPT_TOKENS,
    catalog_model_field,
    chosen_model,
    noting_your_model,
    speed_field,
)
from engine.render.plot import Bar, bar_rows, chart_for_both, extra_caption_height, narrow_wrap
from engine.render.secondary import secondary
from engine.render.widget import Rendered, Values, Widget
from engine.words.expected import at_best_and_expected
from engine.words.format import (
    a_or_an,
    format_count,
    format_elapsed,
    format_flops,
    format_GB,
    format_percent,
    format_ratio,
    format_seconds,
    format_TFLOP_per_s,
)
from engine.words.labels import side_count, side_name
from engine.words.sharding import sharding_name

SYSTEM = "dgx-1"
WEIGHT_FORMAT: FormatId = "bf16"
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


def _path_options() -> tuple[tuple[str, str], ...]:
    cpu = get_system(SYSTEM).cpu
    return tuple((p, code_path(cpu, p).label) for p in PATHS)


def _gpu_options() -> tuple[tuple[str, str], ...]:
    n = get_system(SYSTEM).gpu_count
    return ((str(n), f"All {n} GPUs"), ("1", "One GPU"))


RACE = hidden("race", "Race on screen", "")
TASK = Choice("task", "Race", "prefill", options=TASKS)
MODEL = catalog_model_field(library=True)
GPUS = Choice("gpus", "GPU side", _gpu_options()[0][0], options=_gpu_options())
PATH = OneOf("path", "CPU code path", "matrix", options=_path_options(), ids=PATHS)
TOKENS_PER_STEP = Amount(
    "tokens_per_step",
    "Tokens per step",
    "1048576",
    unit="tokens",
    quantity=quantities.TOKENS_PER_STEP,
)
SPEED = speed_field(SPEEDS, "0.01")


def times_sooner(ratio: float) -> str:
    """'4.3×' under ten, '49×' above: how many times sooner the GPU side finishes."""
    return format_ratio(ratio, whole_from=10)


def pick_speed(slowest_seconds: float) -> str:
    """The speed option at which ``slowest_seconds`` of simulated time takes closest to
    TARGET_REAL_SECONDS of real time (closest on a log scale)."""
    return min(
        (value for value, _ in SPEEDS),
        key=lambda v: abs(math.log(slowest_seconds / float(v) / TARGET_REAL_SECONDS)),
    )


class Side:
    """One competitor: chips, how many, the code path, and its times for the task."""

    def __init__(self, chip: HardwareSpec, count: int, path: PathId, model: ModelSpec,
                 prompt_tokens: int) -> None:
        self.chip = chip
        self.count = count
        self.name = side_name(chip, count)
        self.path = code_path(chip, path)
        self.peak = self.path.peak_flops_per_s * count
        self.prefill: Prefill = prefill(
            model, chip, prompt_tokens=prompt_tokens, weight_format=WEIGHT_FORMAT,
            kv_format=WEIGHT_FORMAT, gpus=count,
        )


def _cpu_time(side: Side, flops: float, memory_seconds: float) -> PathTime:
    share = memory_fraction(side.chip, WEIGHT_FORMAT).value
    return time_on_path(side.path, side.count, flops=flops, memory_seconds=memory_seconds,
                        memory_share=share)


def _prefill_times(cpu: Side, gpu: Side, model: ModelSpec) -> tuple[PathTime, PathTime]:
    pre = gpu.prefill
    gpu_time = PathTime(gpu.path, gpu.count, pre.flops, pre.seconds,
                        expected_prefill_seconds(model, gpu.chip, pre, WEIGHT_FORMAT)[0],
                        pre.bound)
    return _cpu_time(cpu, cpu.prefill.flops, cpu.prefill.memory_seconds), gpu_time


def _train_times(cpu: Side, gpu: Side, model: ModelSpec, step_flops: float,
                 tokens_per_step: float) -> tuple[PathTime, PathTime]:
    bound = step_flops / gpu.peak
    modelled = expected_train(
        model, gpu.chip, tokens=tokens_per_step, gpus=gpu.count,
        sharding="zero3" if gpu.count > 1 else "none",
    )
    gpu_time = PathTime(gpu.path, gpu.count, step_flops, bound, bound / modelled.mfu, "compute")
    return _cpu_time(cpu, step_flops, 0.0), gpu_time


def _lane(side: Side, kind: str, time: PathTime, elapsed: float) -> str:
    seconds = time.expected_seconds
    done = elapsed >= seconds
    fraction = 1.0 if done else elapsed / seconds
    words = (
        f"finished in {format_seconds(seconds)}"
        if done
        else f"{format_percent(fraction)} done; finishes at {format_seconds(seconds)}"
    ) + f" (at best {format_seconds(time.bound_seconds)})"
    label = tag("span", esc(side.name), class_="race-name")
    # No fallback text inside <progress>: browsers draw the bar, and the words beside it
    # already say how far it has got.
    bar = tag(
        "progress",
        "",
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
        data_bound_seconds=f"{time.bound_seconds:.9g}",
    )


def _to_scale(cpu: Side, gpu: Side, t_cpu: float, t_gpu: float) -> str:
    """The two expected finishing times on one time axis, so the gap is seen as well as read."""
    top = max(t_cpu, t_gpu)

    def draw(width: int) -> tuple[str, float]:
        left, bar_h, gap = 4, 16, 26
        usable = width - 2 * left
        wrap_w = narrow_wrap(width, usable)
        # Captions name the sides only: each lane above already gives its time in words.
        bars = [
            Bar(side_count(side.chip, side.count), t, css,
                title=f"{side.name}: {format_seconds(t)}")
            for side, css, t in ((cpu, "part-2", t_cpu), (gpu, "part-0", t_gpu))
        ]
        rows = bar_rows(
            bars, x=left, first_y=14, bar_h=bar_h, pitch=bar_h + gap, units_per_value=usable / top,
            wrap_w=wrap_w,
        )
        height = 14 + 2 * (bar_h + gap) - gap + 8 + extra_caption_height(bars, wrap_w)
        return rows, height

    description = (
        f"Expected time to finish, to scale: {cpu.name} {format_seconds(t_cpu)}, {gpu.name} "
        f"{format_seconds(t_gpu)}."
    )
    return tag("p", esc("Expected finishing times, to scale"), class_="widget-subtitle") + chart_for_both(
        draw, css="race-times", name="finishing times", label=description
    )


def _both_tasks_table(
    cpu: Side,
    gpu: Side,
    times: dict[str, tuple[PathTime, PathTime]],
    prompt_tokens: int,
    tokens_per_step: float,
) -> str:
    rows = [
        (f"Prefill of {prompt_tokens:,} prompt tokens", "prefill"),
        (f"Training step of {format_count(tokens_per_step)} tokens", "train"),
    ]
    head = column_heads(("Work", "FLOPs", cpu.name, gpu.name, "GPU side finishes sooner by"))
    body = "".join(
        tag(
            "tr",
            tag("th", esc(label), scope="row")
            + "".join(
                tag("td", esc(cell))
                for cell in (
                    format_flops(times[task][1].flops),
                    at_best_and_expected(times[task][0].bound_seconds,
                                         times[task][0].expected_seconds),
                    at_best_and_expected(times[task][1].bound_seconds,
                                         times[task][1].expected_seconds),
                    times_sooner(times[task][0].expected_seconds
                                 / times[task][1].expected_seconds) + " expected",
                )
            ),
            data_task=task,
        )
        for label, task in rows
    )
    caption = "Both kinds of work, at best and expected"
    return table_box(head, body, caption=caption, extra_class="race-table")


def _notes(task: str, model: ModelSpec, cpu: Side, gpu: Side, cpu_time: PathTime,
           gpu_time: PathTime) -> list[str]:
    cpu_chip = cpu.chip.name.replace(" (one socket)", "")
    notes = [
        "At best: FLOPs at the paper peak and bytes at the datasheet bandwidth; no real system "
        "beats it without a cached prompt or speculative decoding, which the bound does not "
        "count. Expected: the race's times, at the measured efficiency of each side's "
        f"matrix multiplies ({cpu.path.label}: {format_percent(cpu.path.efficiency.value)} of peak; "
        f"{gpu.path.label}: {format_percent(gpu.path.efficiency.value)})"
        + (", with the GPUs' kernel, dispatch and communication costs" if task == "prefill"
           else f", the GPUs at the {format_percent(gpu_time.bound_seconds / gpu_time.expected_seconds)} "
           "MFU a tuned training stack is modelled to reach")
        + ". The CPUs' expected time counts only their matrix multiplies, so theirs is the "
        "kinder estimate.",
        f"{cpu_chip}'s peaks are {cpu.chip.confidence}-confidence figures the catalogue "
        "derives (Intel publishes none); the measured efficiencies and their sources are in "
        "the notes of \"A CPU and a GPU, compared\".",
    ]
    for side, time in ((cpu, cpu_time), (gpu, gpu_time)):
        if task == "prefill" and time.limit == "memory":
            notes.append(
                f"On {side.name} this prefill is limited by memory bandwidth, not maths: reading "
                f"the weights ({format_GB(side.prefill.bytes_read)}) takes longer than the "
                "FLOPs, so its time is bytes / bandwidth."
            )
    if task == "train":
        notes.append(_fit_note(model, gpu))
    return notes


def _fit_note(model: ModelSpec, gpu: Side) -> str:
    if gpu.count == 1:
        state = memory.training_bytes_per_param() * model.params
        if state > gpu.chip.memory_bytes:
            return (
                f"Only the maths is timed here. The training state of {model.name} "
                f"({format_GB(state)} with Adam in mixed precision) does not fit in one "
                f"{gpu.chip.name}'s {format_GB(gpu.chip.memory_bytes)} (the refusal in \"Break it: "
                "train it anyway\"): a real run "
                "shards it over several GPUs, as the server does."
            )
        return f"The training state of {model.name} fits one {gpu.chip.name}."
    mem = memory.training_memory(model, gpu.chip, gpus=gpu.count, sharding="zero3")
    fits = "fits" if mem.fits else "does not fit even so"
    return (
        f"The training state is sharded over the {gpu.count} GPUs ({sharding_name(mem.sharding)}, "
        "as in \"A training run you can watch\"): "
        f"{format_GB(mem.per_gpu_bytes)} on each of {format_GB(mem.capacity_bytes)}, which "
        f"{fits}."
    )


@dataclass(frozen=True)
class Race:
    """The race the inputs describe: its two sides and their times for both tasks, and the key
    that says whether it is the race on screen (hidden input ``race``)."""

    task: str
    model: ModelSpec
    prompt_tokens: int
    tokens_per_step: float
    cpu: Side
    gpu: Side
    times: dict[str, tuple[PathTime, PathTime]]
    key: str

    @property
    def expected_seconds(self) -> tuple[float, float]:
        """The CPU side's and the GPU side's expected time for the chosen task, in seconds."""
        cpu_time, gpu_time = self.times[self.task]
        return cpu_time.expected_seconds, gpu_time.expected_seconds


def race_of(values: Values) -> Race:
    task = values[TASK]
    model = chosen_model(values, MODEL)
    prompt_tokens = values[
        PROMPT_TOKENS.but(quantity=quantities.context_for(model, quantities.PROMPT_TOKENS))
    ]
    tokens_per_step = values[TOKENS_PER_STEP]
    gpus = int(values[GPUS])
    path = values[PATH]
    system = get_system(SYSTEM)
    step_flops = training_flops_per_token(model).model * tokens_per_step
    # Each side splits the model over its chips: the model must allow both splits.
    cpu = Side(system.cpu, check_tensor_parallel(model, system.cpu_count), path, model,
               prompt_tokens)
    gpu = Side(system.gpu, check_tensor_parallel(model, gpus), "matrix", model,
               prompt_tokens)  # a GPU: its tensor cores
    times = {
        "prefill": _prefill_times(cpu, gpu, model),
        "train": _train_times(cpu, gpu, model, step_flops, tokens_per_step),
    }
    t_cpu, t_gpu = (t.expected_seconds for t in times[task])
    if not (math.isfinite(t_cpu) and math.isfinite(t_gpu) and t_cpu > 0 and t_gpu > 0):
        raise EngineError("These lengths give no time to race over.", "prompt_tokens")
    length = prompt_tokens if task == "prefill" else tokens_per_step
    # The model as chosen: every config read has the id "config".
    key = f"{task};{values[MODEL]};{length:.17g};{gpus};{path}"
    return Race(task, model, prompt_tokens, tokens_per_step, cpu, gpu, times, key)


def watching_seconds(values: Values) -> float:
    """Real seconds the race plays from its start until the slower side finishes: at the
    speed chosen for it when it is a new race (as :func:`render` chooses it), else at the
    reader's speed."""
    race = race_of(values)
    slowest = max(race.expected_seconds)
    speed = float(pick_speed(slowest)) if values[RACE] != race.key else values[SPEED]
    return slowest / speed


def render(values: Values) -> Rendered:
    race = race_of(values)
    task, model, cpu, gpu, times = race.task, race.model, race.cpu, race.gpu, race.times
    prompt_tokens, tokens_per_step = race.prompt_tokens, race.tokens_per_step
    speed = values[SPEED]
    elapsed = values[ELAPSED]
    cpu_time, gpu_time = times[task]
    t_cpu, t_gpu = race.expected_seconds

    # A different race from the one on screen starts again, at a speed that suits it.
    set_inputs: dict[str, str] = {}
    if values[RACE] != race.key:
        elapsed = 0.0
        chosen = pick_speed(max(t_cpu, t_gpu))
        speed = float(chosen)
        set_inputs = {"race": race.key, "elapsed": "0", "speed": chosen}

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
            f"and {format_seconds(t_cpu)} on {cpu.name} ({cpu.path.label}), as expected of "
            f"tuned software. The GPU side finished {times_sooner(ratio)} sooner."
        )
    elif elapsed >= t_gpu:
        status_words = (
            f"{gpu.name} has finished; {cpu.name} is still working ({format_percent(elapsed / t_cpu)} done)."
        )
    elif elapsed > 0:
        status_words = f"Racing: {work} on {model.name}."
    else:
        status_words = f"Ready: {work}. Press Start."  # the Model field names the model
    status = tag(
        "p",
        esc(status_words),
        class_="widget-verdict fits" if finished else "widget-verdict",
        data_clock_done=finished or None,
    )
    lanes = tag(
        "div",
        _lane(gpu, "gpu", gpu_time, elapsed) + _lane(cpu, "cpu", cpu_time, elapsed),
        class_="race-lanes",
    )
    rule = (
        "2 × parameters (all but the input embedding) × prompt tokens, plus attention"
        if task == "prefill"
        else "6 × active parameters × tokens + attention"
    )
    # Each side's two times are in its lane; here the clock and the gap between the sides.
    figures = definition_list(
        [
            ("Simulated time", format_elapsed(min(elapsed, slowest))),
            ("The GPU side finishes sooner by",
             f"{times_sooner(ratio)} expected, "
             f"{times_sooner(cpu_time.bound_seconds / gpu_time.bound_seconds)} at best"),
        ]
    )
    worked = definition_list(
        [
            (f"Time on {gpu.name}",
             at_best_and_expected(gpu_time.bound_seconds, gpu_time.expected_seconds)),
            (f"Time on {cpu.name}",
             at_best_and_expected(cpu_time.bound_seconds, cpu_time.expected_seconds)),
            (f"Work ({rule})", format_flops(gpu_time.flops)),
            (f"Peak of {cpu.name}, {cpu.path.label}", format_TFLOP_per_s(cpu.peak)),
            (f"Peak of {gpu.name}, {gpu.path.label}", format_TFLOP_per_s(gpu.peak)),
            ("Watching time at this speed", format_seconds(slowest / speed)),
        ]
    )
    notes = _notes(task, model, cpu, gpu, cpu_time, gpu_time)
    # The training state's fit is part of the answer; how the times are worked out is kept
    # for the reader who opens it.
    fit = [n for n in notes if n.startswith(("The training state", "Only the maths"))]
    shown = tag("ul", "".join(tag("li", esc(n)) for n in fit), class_="widget-notes") if fit else ""
    rest = tag("ul", "".join(tag("li", esc(n)) for n in notes if n not in fit),
               class_="widget-notes")
    html = (
        status
        + lanes
        + figures
        + _to_scale(cpu, gpu, t_cpu, t_gpu)
        + shown
        + secondary(
            "How these times are worked out",
            worked + _both_tasks_table(cpu, gpu, times, prompt_tokens, tokens_per_step) + rest,
        )
    )
    return Rendered(html, set_inputs)


WIDGET = Widget(
    name="cpu_gpu_race",
    title="CPUs against GPUs",
    fields=(ELAPSED, RACE, TASK, MODEL, GPUS, PATH, PROMPT_TOKENS, TOKENS_PER_STEP, SPEED),
    render=noting_your_model(render, MODEL),
    clock=True,
    running_seconds=watching_seconds,
    summary="The same prefill, or a training step, on dgx-1's two Xeon CPUs (AMX matrix units "
    "or AVX-512 vector units) and on its eight H100s (or one), each time at best and "
    "expected, the expected times raced in slow motion.",
)
