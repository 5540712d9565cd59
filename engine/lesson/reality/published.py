"""The engine's arithmetic beside published figures: FLOP counts, MFU and datasheet peaks.

Each :class:`Comparison` names a published figure (with its source: paper, report or
benchmark, year, table or section), the inputs the engine is given, and a function that asks
the engine for its prediction. :func:`compare` runs one; :func:`table` renders them for the
page ``reality-check.md`` (``{{ table("reality", topic="compute") }}``). Measured times and
speeds of real systems, with the engine's bound and expected value, are in
:mod:`engine.lesson.reality.measured`.

Inputs are published facts (parameter counts, token counts, GPU counts, measured TFLOP/s per
GPU); everything in the "engine" column is computed by the engine's own functions
(:mod:`engine.numbers.compute`, :mod:`engine.numbers.serving`, the hardware catalogue). The difference is
``(engine - published) / published``, in per cent. ``tests/engine/test_reality.py`` holds a
tolerance per row, so a change to the engine that moves a prediction away from reality fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from engine.numbers.catalog import ModelSpec, get_hardware, get_model
from engine.numbers.compute import (
    causal_attention_training_flops_per_token,
    mfu_from_throughput,
    training_flops,
    training_flops_per_token,
    training_seconds,
)
from engine.numbers.energy import plan_energy
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.training_runs import LLAMA_3_1_405B_PRETRAINING_TOKENS, LLAMA_3_1_405B_SEQ_LEN
from engine.numbers.units import SECONDS_PER_DAY
from engine.render.html import column_heads, esc, table_box, tag
from engine.words.format import format_count, format_flops, format_percent, format_TFLOP_per_s

TOPICS: dict[str, str] = {
    "compute": "Counting the work",
    "chips": "One chip: the datasheet peak against the best measured matrix multiply",
    "energy": "Energy: a training run's electricity",
}

UNITS = ("flops", "percent", "days", "gpu_hours", "flops_per_s", "tokens_per_s", "mwh")


@dataclass(frozen=True, slots=True)
class Prediction:
    """The engine's answer and the inputs it was given, in words."""

    value: float
    inputs: str


@dataclass(frozen=True, slots=True)
class Comparison:
    """One published figure and how to ask the engine for the same quantity.

    ``published`` is the number used for the difference; ``published_text`` says it the way
    the source does. ``reading`` explains, in a sentence or two, why the two differ.
    """

    id: str
    topic: str
    title: str
    unit: str
    published: float
    published_text: str
    source: str
    reading: str
    predict: Callable[[], Prediction]

    def __post_init__(self) -> None:
        if self.topic not in TOPICS:
            raise EngineError(f"Comparison {self.id!r}: unknown topic {self.topic!r}.", "topic")
        if self.unit not in UNITS:
            raise EngineError(f"Comparison {self.id!r}: unknown unit {self.unit!r}.", "unit")
        if not (math.isfinite(self.published) and self.published > 0):
            raise EngineError(f"Comparison {self.id!r}: published figure must be > 0.", "published")


@dataclass(frozen=True, slots=True)
class Result:
    """A comparison run: the engine's value beside the published one."""

    comparison: Comparison
    engine: float
    inputs: str

    @property
    def difference_percent(self) -> float:
        """(engine - published) / published x 100."""
        return (self.engine - self.comparison.published) / self.comparison.published * 100.0

    def to_dict(self) -> dict[str, object]:
        c = self.comparison
        return {
            "id": c.id,
            "topic": c.topic,
            "title": c.title,
            "unit": c.unit,
            "engine": self.engine,
            "engine_text": format_value(self.engine, c.unit),
            "inputs": self.inputs,
            "published": c.published,
            "published_text": c.published_text,
            "difference_percent": self.difference_percent,
            "source": c.source,
            "reading": c.reading,
        }


# ---------------------------------------------------------------- models not in the catalogue


def llama2_7b() -> ModelSpec:
    """Llama 2 7B, from the catalogue (kept there for these comparisons)."""
    return get_model("llama-2-7b")


def llama2_70b() -> ModelSpec:
    """Llama 2 70B, from the catalogue (kept there for these comparisons)."""
    return get_model("llama-2-70b")


# ---------------------------------------------------------------- small helpers


def _peak(hardware_id: str, format_id: str = "bf16") -> float:
    return get_hardware(hardware_id).compute_peak(format_id)[0]


def _tflops(flops_per_s: float) -> str:
    return f"{flops_per_s / 1e12:,.4g} TFLOP/s"


def _flops_rule(params: float, tokens: float, *, full: bool = False) -> tuple[float, str]:
    flops = training_flops(params, tokens, recompute="full" if full else "none")
    factor = 8 if full else 6
    return flops, (
        f"{factor} × {format_count(params)} parameters × {format_count(tokens)} "
        f"tokens = {format_flops(flops)}"
    )


def _llama3_405b_flops_reading() -> str:
    """Why this row's 6 N D and the lesson's own count of the same run (training-at-scale
    step: 6 N D plus causal attention over the run's 8,192-token sequences) are two figures."""
    model = get_model("llama-3.1-405b")
    rule, _ = _flops_rule(model.params, LLAMA_3_1_405B_PRETRAINING_TOKENS)
    with_attention = (training_flops_per_token(model, LLAMA_3_1_405B_SEQ_LEN).model
                      * LLAMA_3_1_405B_PRETRAINING_TOKENS)
    return (
        "Meta states the total to two figures; 6 N D on the released parameter count and the "
        "15.6 trillion tokens lands on it. The lesson's steps count attention too: "
        f"{format_flops(with_attention)}, {format_percent(with_attention / rule - 1.0)} more."
    )


def _days_at(
    params: float, tokens: float, gpus: int, hardware_id: str, flops_per_s: float
) -> Prediction:
    """Days of 8 N D FLOPs (full recomputation) on ``gpus`` GPUs at ``flops_per_s`` each."""
    peak = _peak(hardware_id)
    flops, words = _flops_rule(params, tokens, full=True)
    days = training_seconds(flops, gpus, peak, flops_per_s / peak) / SECONDS_PER_DAY
    return Prediction(
        days, f"{words} (full recomputation), on {gpus:,} GPUs at {_tflops(flops_per_s)} each"
    )


def _mfu_of(hardware_id: str, flops_per_s: float) -> Prediction:
    peak = _peak(hardware_id)
    name = get_hardware(hardware_id).name
    return Prediction(
        flops_per_s / peak * 100.0,
        f"{_tflops(flops_per_s)} per GPU ÷ {_tflops(peak)} ({name}, BF16 dense)",
    )


def _peak_of(hardware_id: str) -> Prediction:
    hw = get_hardware(hardware_id)
    return Prediction(
        _peak(hardware_id), f"{hw.name}: BF16 dense peak from the catalogue (datasheet)"
    )


def _palm_mfu() -> Prediction:
    # PaLM 540B: L = 118 layers, H = 48 heads, Q = 256 head size, T = 2048 tokens of
    # sequence. Its appendix B counts attention as 12 x L x H x Q x T per token; the engine's
    # causal count is half that (plus the diagonal), so it reads the same throughput lower.
    # TPU v4 is not in the catalogue; the paper's own peak, 275 TFLOP/s (bf16) per chip.
    attention = causal_attention_training_flops_per_token(118, 48, 256, 2048)
    peak = 275e12
    mfu = mfu_from_throughput(238.3e3, 540.35e9, 6144, peak, extra_flops_per_token=attention)
    return Prediction(
        mfu * 100.0,
        "(6 × 540.35 billion + causal attention) FLOPs per token × "
        f"238,300 tokens/s ÷ (6,144 chips × {_tflops(peak)})",
    )


def _bloom_energy() -> Prediction:
    # BLOOM's final run as published (arXiv 2211.05100, sections 3.4-3.5): 176.247 billion
    # parameters, 366 billion tokens of 2,048, 384 A100 80GB in TP 4 x PP 12 x DP 8, ZeRO-1,
    # a global batch of 2,048 sequences. The engine's plan at its default MFU, and the energy
    # of that time at rated power times the catalogue's PUE.
    p = plan(params=176.247e9, hardware="a100-80gb", gpus=384, task="train", tokens=366e9,
             seq_len=2048, tp=4, pp=12, sharding="zero1", global_batch_tokens=2048 * 2048)
    energy = plan_energy(p)
    assert energy is not None and energy.megawatt_hours is not None and p.train is not None
    pw = energy.power
    return Prediction(
        energy.megawatt_hours,
        f"{p.gpus:,} GPUs × {pw.power_W_per_gpu:,.0f} W (rated) × PUE {pw.pue:g} × "
        f"{p.train.seconds / SECONDS_PER_DAY:,.1f} days at {format_percent(p.train.mfu)} MFU",
    )


# ---------------------------------------------------------------- the comparisons

MAMF = (
    "stas00/ml-engineering (Bekman), 'Maximum Achievable Matmul FLOPS' table in "
    "compute/accelerator/README.md, measured with mamf-finder.py, 2025 (torch 2.7)"
)

COMPARISONS: tuple[Comparison, ...] = (
    Comparison(
        "gpt3-flops",
        "compute",
        "GPT-3 175B: total training compute",
        "flops",
        3.14e23,
        "3.14 × 10^23 FLOPs",
        "Brown et al. 2020, 'Language Models are Few-Shot Learners', Table D.1",
        "The paper counts 6 N D too, so the two agree to the rounding of the published figure.",
        lambda: Prediction(*_flops_rule(get_model("gpt-3-175b").params, 300e9)),
    ),
    Comparison(
        "chinchilla-flops",
        "compute",
        "Chinchilla 70B: total training compute",
        "flops",
        5.76e23,
        "5.76 × 10^23 FLOPs (Gopher's budget)",
        "Hoffmann et al. 2022, 'Training Compute-Optimal Large Language Models', abstract "
        "(same compute as Gopher) and Table 3",
        "Close, not exact: the paper matched Gopher's budget only roughly, and 6 N D here uses "
        "the rounded 70 billion parameters and 1.4 trillion tokens.",
        lambda: Prediction(*_flops_rule(70e9, 1.4e12)),
    ),
    Comparison(
        "llama3-405b-flops",
        "compute",
        "Llama 3 405B: total pre-training compute",
        "flops",
        3.8e25,
        "3.8 × 10^25 FLOPs",
        "Meta, 'The Llama 3 Herd of Models' 2024, sections 1 and 3.2.1",
        _llama3_405b_flops_reading(),
        lambda: Prediction(*_flops_rule(get_model("llama-3.1-405b").params,
                                         LLAMA_3_1_405B_PRETRAINING_TOKENS)),
    ),
    Comparison(
        "palm-mfu",
        "compute",
        "PaLM 540B: model FLOPs utilisation",
        "percent",
        46.2,
        "46.2 %",
        "Chowdhery et al. 2022, 'PaLM: Scaling Language Modeling with Pathways', Table 3 and "
        "appendix B (238.3K tokens/s on 6,144 TPU v4 chips)",
        "Same inputs; PaLM counts attention against the whole sequence, the engine only "
        "against the tokens before each (what a causal kernel computes), so it reads a little "
        "lower. This row checks the arithmetic and the TPU v4 peak, not the hardware.",
        _palm_mfu,
    ),
    Comparison(
        "llama3-405b-mfu",
        "compute",
        "Llama 3 405B on 16,384 H100s: MFU",
        "percent",
        41.0,
        "41 % (400 TFLOP/s per GPU)",
        "Meta, 'The Llama 3 Herd of Models' 2024, Table 4 (8K-context configuration)",
        "Meta divides its measured 400 TFLOP/s by the same H100 peak; the gap is the rounding "
        "of the published percentage.",
        lambda: _mfu_of("h100-sxm", 400e12),
    ),
    Comparison(
        "megatron-1t-mfu",
        "compute",
        "Megatron-LM 1T (1,008B) model on 3,072 A100s: share of peak",
        "percent",
        52.0,
        "52 % (163 TFLOP/s per GPU)",
        "Narayanan et al. 2021, 'Efficient Large-Scale Language Model Training on GPU Clusters "
        "Using Megatron-LM', Table 1",
        "Megatron counts the FLOPs of recomputed activations too, so this is hardware FLOPs "
        "utilisation; the division is the same.",
        lambda: _mfu_of("a100-80gb", 163e12),
    ),
    Comparison(
        "megatron-175b-1536",
        "compute",
        "GPT-3 175B on 1,536 A100s: days for 300B tokens",
        "days",
        23.0,
        "23 days (141 TFLOP/s per GPU)",
        "Narayanan et al. 2021 (Megatron-LM), Table 2, PTD parallelism",
        "The paper estimates time as 8 T P / (n X) from its measured throughput, the engine's "
        "own formula; the rest is rounding to whole days.",
        lambda: _days_at(174.6e9, 300e9, 1536, "a100-80gb", 141e12),
    ),
    Comparison(
        "megatron-175b-384",
        "compute",
        "GPT-3 175B on 384 A100s: days for 300B tokens",
        "days",
        84.0,
        "84 days (153 TFLOP/s per GPU)",
        "Narayanan et al. 2021 (Megatron-LM), Table 2, PTD parallelism",
        "As above: a time computed from measured throughput, so it carries no failures or "
        "restarts; a real run would take longer.",
        lambda: _days_at(174.6e9, 300e9, 384, "a100-80gb", 153e12),
    ),
    Comparison(
        "h100-mamf",
        "chips",
        "H100 SXM: largest BF16 matmul rate",
        "flops_per_s",
        794.5e12,
        "794.5 TFLOP/s measured",
        MAMF,
        "The datasheet peak assumes every tensor core busy at the top clock; a real chip "
        "under full load slows its clock to stay within power, and tiles never fit perfectly.",
        lambda: _peak_of("h100-sxm"),
    ),
    Comparison(
        "a100-mamf",
        "chips",
        "A100 SXM: largest BF16 matmul rate",
        "flops_per_s",
        271.2e12,
        "271.2 TFLOP/s measured",
        MAMF,
        "The older, slower chip comes closer to its datasheet figure, yet part of the peak "
        "stays out of reach even for the best-shaped multiply.",
        lambda: _peak_of("a100-80gb"),
    ),
    Comparison(
        "mi300x-mamf",
        "chips",
        "MI300X: largest BF16 matmul rate",
        "flops_per_s",
        668.4e12,
        "668.4 TFLOP/s measured",
        MAMF,
        "About half the datasheet: power and clock limits, and matmul libraries less mature "
        "than NVIDIA's at the time of measurement, leave much of the peak unused.",
        lambda: _peak_of("mi300x"),
    ),
    Comparison(
        "h200-matmul",
        "chips",
        "H200 SXM: BF16 matmul rate, 8192 × 8192 × 8192",
        "flops_per_s",
        767.7e12,
        "767.7 TFLOP/s measured",
        "This project, bench/measured/h200-2026-11-30.json (matmul.bf16_8192x8192x8192), "
        "measured 2026-11-30 on one NVIDIA H200 with python3 bench/gpu_measure.py (torch "
        "2.11, CUDA 13.0)",
        "One shape, not a sweep of shapes like the rows above; the H200 has the H100's "
        "compute, so its datasheet peak is as far out of reach.",
        lambda: _peak_of("h200"),
    ),
    Comparison(
        "bloom-energy",
        "energy",
        "BLOOM 176B: electricity of the final training run",
        "mwh",
        433.196,
        "433 MWh (1,082,990 GPU-hours × 400 W)",
        "Luccioni, Viguier and Ligozat, 'Estimating the Carbon Footprint of BLOOM, a 176B "
        "Parameter Language Model' (JMLR 24, 2023; arXiv 2211.02001), section 4: dynamic "
        "consumption 433,196 kWh, the GPU-hours times the A100's 400 W TDP",
        "The published figure counts the GPUs alone at their rated power; the engine also "
        "multiplies by the industry-average PUE (1.58) for cooling and power delivery, which "
        "pushes it up, while its 40 % MFU makes the run shorter than BLOOM's 1.08 million "
        "GPU-hours, which pulls it down. The paper adds 257 MWh of idle servers besides.",
        _bloom_energy,
    ),
)


# ---------------------------------------------------------------- running and rendering


def comparison_ids() -> tuple[str, ...]:
    return tuple(c.id for c in COMPARISONS)


def get_comparison(comparison_id: object) -> Comparison:
    for c in COMPARISONS:
        if c.id == comparison_id:
            return c
    raise EngineError(f"Unknown comparison {str(comparison_id)[:40]!r}.", "comparison")


def compare(comparison: Comparison | str) -> Result:
    """Ask the engine for one comparison's prediction."""
    c = comparison if isinstance(comparison, Comparison) else get_comparison(comparison)
    p = c.predict()
    if not (math.isfinite(p.value) and p.value > 0):
        raise EngineError(f"Comparison {c.id!r}: the engine gave {p.value!r}.", c.id)
    return Result(c, p.value, p.inputs)


def results(topic: object = "") -> tuple[Result, ...]:
    """Every comparison (or those of one topic), run."""
    if topic not in ("", None) and topic not in TOPICS:
        raise EngineError(
            f"Unknown topic {str(topic)[:40]!r}; choose one of: {', '.join(TOPICS)}.", "topic"
        )
    return tuple(compare(c) for c in COMPARISONS if not topic or c.topic == topic)


def _sig(value: float, digits: int = 3) -> str:
    """``value`` to about ``digits`` significant figures, without an exponent."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:,.{decimals}f}"


def format_value(value: float, unit: str) -> str:
    """An engine value in the unit of its comparison, about 3 significant figures."""
    if unit == "flops":
        return format_flops(value)
    if unit == "percent":
        return format_percent(value / 100.0)
    if unit == "days":
        return f"{value:,.1f} days"
    if unit == "gpu_hours":
        if value >= 1e6:
            return f"{_sig(value / 1e6)}M GPU-hours"
        return f"{float(f'{value:.3g}'):,.0f} GPU-hours"
    if unit == "flops_per_s":
        return format_TFLOP_per_s(value)
    if unit == "tokens_per_s":
        return f"{_sig(value)} tokens/s"
    if unit == "mwh":
        return f"{_sig(value)} MWh"
    raise EngineError(f"Unknown unit {unit!r}.", "unit")


def format_difference(percent: float) -> str:
    """'+24.5 %', '−15.7 %' (a true minus sign), '0.0 %'."""
    text = f"{percent:+.1f} %"
    if text in ("+0.0 %", "-0.0 %"):
        return "0.0 %"
    return text.replace("-", "\u2212")


def table(topic: str = "") -> str:
    """The comparisons of ``topic`` (all when empty) as an HTML table, every cell escaped."""
    rows = results(topic)
    caption = TOPICS[topic] if topic else "The engine beside published figures"
    head = column_heads(("What", "Engine", "Published", "Difference", "Source"))
    body = []
    for r in rows:
        c = r.comparison
        what = esc(c.title) + tag("span", esc(r.inputs), class_="reality-inputs")
        diff = r.difference_percent
        cells = (
            tag("th", what, scope="row"),
            tag("td", esc(format_value(r.engine, c.unit)), class_="reality-engine"),
            tag("td", esc(c.published_text), class_="reality-published"),
            tag(
                "td",
                esc(format_difference(diff)),
                class_="reality-diff",
                data_percent=f"{diff:.2f}",
            ),
            tag(
                "td",
                esc(c.source) + tag("span", esc(c.reading), class_="reality-reading"),
                class_="reality-source",
            ),
        )
        body.append(tag("tr", "".join(cells), data_comparison=c.id, data_topic=c.topic))
    return table_box(head, "".join(body), caption=caption, extra_class="reality")
