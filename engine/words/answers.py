"""The five questions answered in words: one or two sentences with numbers each, written from
an engine.numbers.plan.Plan (which holds the numbers and nothing else).
"""

from __future__ import annotations

from engine.numbers import cost
from engine.numbers.energy import plan_energy
from engine.numbers.interruptions import run_interruptions
from engine.numbers.memory import ServingMemory, TrainingMemory
from engine.numbers.plan import CHINCHILLA_TOKENS_PER_PARAM, Plan, TrainFigures
from engine.words.expected import together_words, ttft_basis_words
from engine.words.format import (
    a_or_an,
    format_bandwidth,
    format_GB,
    format_percent,
    format_seconds,
    format_TFLOP_per_s,
)
from engine.words.labels import part_words
from engine.words.offload_explained import offload_fits_words, offload_speed_words
from engine.words.sharding import parallel_layout
from engine.words.training import train_warnings_words

# The five questions, in the order a plan answers them: key of `answers()` -> title.
QUESTIONS: tuple[tuple[str, str], ...] = (
    ("fits", "Does it fit?"),
    ("limit", "What limits its speed?"),
    ("gpus", "How many GPUs?"),
    ("failure", "Why would it fail?"),
    ("cost", "What does it cost?"),
)

SERVE_NOTE = ("Best-case times: raw dense peak and full datasheet bandwidth. A batch is that "
              "many requests kept running: ttft_at_batch_seconds and expected.ttft_seconds "
              "are a request joining the others, its prompt beside their decode step; "
              "ttft_seconds and expected.ttft_idle_seconds one request on an idle server; "
              "prefill_seconds the batch's prompts all arriving together, and "
              "total_seconds that prefill and every decode step.")


def answers(p: Plan) -> dict[str, str]:
    """The five questions, each answered in one or two sentences with numbers."""
    return {
        "fits": _fits_words(p) + offload_fits_words(p),
        "limit": _limit_words(p) + offload_speed_words(p),
        "gpus": _gpus_words(p),
        "failure": _failure_words(p),
        "cost": _cost_words(p),
    }


def price_note(p: Plan) -> str:
    """Where the price per GPU-hour comes from ('AWS p5 on-demand, 2025-03-17'), or why
    there is none."""
    if p.price_offer is not None:
        o = p.price_offer
        return f"{o.provider} {o.offer}, {o.date}"
    if p.usd_per_gpu_hour is not None:
        return "price given"
    return (f"No cloud price in the catalogue for {p.hardware.name}; give one "
            "(usd_per_gpu_hour) to get a cost.")


def tokens_source(t: TrainFigures) -> str:
    """Where a training run's token count comes from."""
    if t.tokens_given:
        return "given"
    return (f"not given: {CHINCHILLA_TOKENS_PER_PARAM} tokens per parameter "
            "(Chinchilla-optimal, Hoffmann et al. 2022)")


def _parts_words(p: Plan) -> str:
    return " + ".join(f"{part_words(k)} {format_GB(v)}" for k, v in p.memory.parts.items())


def _fits_words(p: Plan) -> str:
    mem = p.memory
    unit = "GPU" if p.hardware.kind == "gpu" else "chip"
    per = f"per {unit}" if p.gpus > 1 else f"on one {unit}"
    if mem.fits:
        return (f"Yes: {format_GB(mem.per_gpu_bytes)} of "
                f"{format_GB(mem.capacity_bytes)} {per} ({_parts_words(p)}), "
                f"{format_GB(mem.headroom_bytes)} to spare.")
    return (f"No: it needs {format_GB(mem.per_gpu_bytes)} {per} ({_parts_words(p)}), "
            f"{format_GB(-mem.headroom_bytes)} more than the "
            f"{format_GB(mem.capacity_bytes)} of one {p.hardware.name}.")


def _limit_words(p: Plan) -> str:
    hw = p.hardware
    if p.serve is not None:
        s = p.serve
        d = s.first_step
        if d.bound == "memory":
            spread = f" across {p.gpus:,} chips" if p.gpus > 1 else ""
            head = (f"Decoding is memory-bandwidth-bound: its first step reads "
                    f"{format_GB(d.bytes_read)}{spread} at "
                    f"{format_bandwidth(hw.bandwidth_bytes_per_s)}{' each' if spread else ''}")
        else:
            head = (f"Decoding is compute-bound at batch {d.batch}: {d.flops:.3g} FLOPs per "
                    f"step at {format_TFLOP_per_s(hw.compute_peak(p.weight_format)[0])}")
        e = s.expected
        # The time is the mean over the answer, whose KV cache grows: say so beside the first
        # step's bytes or FLOPs.
        return (f"{head}: {format_seconds(d.seconds)}; on average about "
                f"{format_seconds(s.tpot_seconds)} per token, "
                f"{s.tokens_per_s_per_user:,.0f} tokens/s per user at best over the "
                f"{s.output_tokens:,}-token answer. The prefill of "
                f"{s.prompt_tokens:,} tokens is {s.joining.bound}-bound: "
                f"{format_seconds(s.ttft_at_batch_seconds)} to the first token at best for "
                f"{ttft_basis_words(d.batch)}"
                + (f" ({format_seconds(s.ttft_seconds)} on an idle server; "
                   f"{format_seconds(s.prefill.seconds)} for {together_words(d.batch)})"
                   if d.batch > 1 else "")
                + ". A well-tuned "
                f"server is expected to take about {format_seconds(e.decode_seconds_per_token)} "
                f"per token and {format_seconds(e.ttft_seconds)} to the first token.")
    t = p.train
    assert t is not None
    return (f"Compute: {t.model_flops:.3g} FLOPs ({t.per_token.model:.3g} per token × "
            f"{t.tokens:.3g} tokens) on {p.gpus:,} "
            f"GPU{'s' if p.gpus > 1 else ''} at {format_TFLOP_per_s(t.peak_flops_per_s)} "
            f"({t.compute_format}) × {format_percent(t.mfu)} MFU takes {format_seconds(t.seconds)}."
            + _expected_training_words(t))


def _expected_training_words(t: TrainFigures) -> str:
    e = t.expected
    warned = "".join(f" {w}" for w in train_warnings_words(e.warnings))
    if e.mfu_given:
        return warned
    return (f" A well-tuned training stack is expected to reach about {format_percent(e.mfu)} MFU on this "
            f"set-up: {format_seconds(e.seconds)}." + warned)


def _gpus_words(p: Plan) -> str:
    mem = p.memory
    if isinstance(mem, ServingMemory):
        if p.min_gpus is None:
            return ("No number of GPUs helps: the parts that are not split (activations "
                    "and overhead) alone exceed one GPU.")
        return (f"{p.min_gpus:,} GPU{'s' if p.min_gpus > 1 else ''} to hold the weights and "
                f"{a_or_an(mem.context_tokens)} {mem.context_tokens:,}-token KV cache for "
                f"{mem.batch} request{'s' if mem.batch > 1 else ''}"
                + (" (tensor parallel)." if p.min_gpus > 1 else "."))
    t = p.train
    assert t is not None
    target = ""
    if t.gpus_for_target is not None and t.target_days is not None:
        target = (f" To finish in {t.target_days:g} days at {format_percent(t.mfu)} MFU: "
                  f"{t.gpus_for_target:,} GPUs.")
    if p.min_gpus is None and isinstance(mem, TrainingMemory) and mem.adapter is not None:
        return ("No GPU count fits: each GPU holds the whole frozen base, the adapters and "
                "their activations; try QLoRA, full recomputation or a shorter sequence."
                + target)
    if p.min_gpus is None:
        return (f"With {parallel_layout(mem.sharding, mem.tp)} no GPU count "
                f"fits: the unsharded parts alone exceed one GPU.{_zero3_words(p)}" + target)
    return (f"Memory: at least {p.min_gpus:,} GPU{'s' if p.min_gpus > 1 else ''} "
            f"with {parallel_layout(mem.sharding, mem.tp)}.{target}")


def _zero3_words(p: Plan) -> str:
    fallback = p.zero3_fallback()
    if fallback is None:
        return (f" Even {parallel_layout('zero3', 8)} does not fit: use full "
                "recomputation.")
    tp, n = fallback
    return f" What would fit: {parallel_layout('zero3', tp)} on at least {n:,} GPUs."


def _failure_words(p: Plan) -> str:
    mem = p.memory
    if not mem.fits:
        extra = ""
        if isinstance(mem, TrainingMemory) and mem.adapter is None:
            extra = (f" The training state alone is {format_GB(mem.state_bytes)} per GPU "
                     f"({mem.bytes_per_param_total:g} bytes × {p.model.params:,} "
                     f"parameters{' / sharding' if mem.sharding != 'none' else ''}).")
        return ("Out of memory, decided by arithmetic before it starts: "
                f"{format_GB(mem.per_gpu_bytes)} needed, "
                f"{format_GB(mem.capacity_bytes)} available per GPU.{extra} Retrying "
                "cannot help; more GPUs with sharded state, a smaller model or format, or a "
                "bigger GPU can.")
    if isinstance(mem, ServingMemory):
        return (f"It fits. It would run out of KV cache beyond "
                f"{mem.max_context_tokens_that_fit:,} tokens of context in total "
                f"({mem.max_concurrent_requests:,} concurrent requests of "
                f"{mem.context_tokens:,} tokens); past that, requests queue or are refused.")
    fits = (f"It fits with {format_GB(mem.headroom_bytes)} to spare; a longer sequence "
            "or a bigger micro-batch grows the activations and could push it out of memory.")
    return fits + (interruption_words(p.gpus, p.train.expected.seconds) if p.train else "")


def interruption_words(gpus: int, seconds: float) -> str:
    """What the hardware's failures do to a run of ``gpus`` GPUs lasting ``seconds``, at the
    rate Meta observed training Llama 3 405B (engine.numbers.interruptions)."""
    i = run_interruptions(gpus, seconds)
    run = f"{gpus:,} GPU{'' if gpus == 1 else 's'} for {format_seconds(seconds)}"
    if i.expected >= 1:
        meets = (f"should meet about {i.expected:,.0f} (one every "
                 f"{format_seconds(i.hours_between * 3600)}), each a restart from the last "
                 "checkpoint")
    else:
        meets = f"would meet at least one with a chance of {format_percent(i.chance_of_any)}"
    o = i.observed
    return (" Then hardware failures: at the rate Meta met training Llama 3 405B "
            f"({o.interruptions:,} unexpected interruptions in {o.days:g} days on "
            f"{o.gpus:,} H100s), {run} {meets}.")


def _cost_words(p: Plan) -> str:
    energy = energy_words(p)
    money = _money_words(p)
    return f"{money} {energy}" if energy else money


def _money_words(p: Plan) -> str:
    note = price_note(p)
    if p.usd_per_gpu_hour is None:
        return note
    price = p.usd_per_gpu_hour
    if p.serve is not None:
        tps = p.serve.decode_tokens_per_s
        batch = p.serve.first_step.batch
        c = cost.cost_per_million_tokens(tokens_per_s=tps, usd_per_gpu_hour=price, gpus=p.gpus)
        return (f"{p.gpus:,} GPU{'s' if p.gpus > 1 else ''} at ${price:,.2f} per "
                f"GPU-hour ({note}) = ${c.usd_per_hour:,.2f} per hour; at "
                f"{tps:,.0f} tokens/s ({batch:,} request{'s' if batch > 1 else ''} at a time), "
                f"${c.usd_per_million_tokens:,.2f} per million output tokens if kept busy; "
                "serving more requests at once cuts it.")
    t = p.train
    assert t is not None
    tc = cost.training_run_cost(gpus=p.gpus, seconds=t.seconds, usd_per_gpu_hour=price)
    return (f"{p.gpus:,} GPU{'s' if p.gpus > 1 else ''} × {format_seconds(t.seconds)} = "
            f"{tc.gpu_hours:,.0f} GPU-hours x ${price:,.2f} ({note}) = ${tc.usd:,.0f}.")


def energy_words(p: Plan) -> str:
    """The energy beside the cost: joules per output token and watt-hours per answer when
    serving, megawatt-hours for a training run; '' when the chip's power is not known."""
    e = plan_energy(p)
    if e is None:
        return ""
    w = e.power
    draw = (f"{p.gpus:,} × {w.power_W_per_gpu:,.0f} W (rated board power, datasheet) × "
            f"{w.pue:g} PUE = {_watts(w.watts)}")
    pue = f"PUE: {w.pue_source}."
    if e.joules_per_output_token is not None and e.watt_hours_per_answer is not None:
        assert p.serve is not None
        return (f"Energy at rated power: {draw}; {_three_figures(e.joules_per_output_token)} J "
                f"per output token, {_three_figures(e.watt_hours_per_answer)} Wh per answer "
                f"of {p.serve.output_tokens:,} tokens. {pue}")
    assert p.train is not None and e.megawatt_hours is not None
    return (f"Energy at rated power: {draw} for {format_seconds(p.train.seconds)} = "
            f"{_three_figures(e.megawatt_hours)} MWh. {pue}")


def _three_figures(x: float) -> str:
    """'5.35', '0.381', '30,600': three significant figures, no exponent."""
    if x >= 100:
        return f"{float(f'{x:.3g}'):,.0f}"
    return f"{x:.3g}"


def _watts(watts: float) -> str:
    for unit, size in (("MW", 1e6), ("kW", 1e3)):
        if watts >= size:
            return f"{_three_figures(watts / size)} {unit}"
    return f"{_three_figures(watts)} W"
