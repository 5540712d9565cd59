"""Named numbers for the "Going further" pages: the links between chips, the
pipeline bubble, tensor-parallel speed-ups and the MFU of a run split over many servers.
Each returns the number formatted for reading, from the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.numbers import quantities
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import get_hardware, resolve_model
from engine.numbers.communication import pipeline_bubble_fraction
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import decode_parts
from engine.numbers.hops import HOP_KINDS, Hop, hops
from engine.numbers.plan import Plan, TrainFigures, plan
from engine.numbers.training_runs import tokens_or_run
from engine.words.format import format_bandwidth, format_percent, format_seconds

if TYPE_CHECKING:
    from engine.lesson.reality.measurements import Measurement


def _hop(hardware: str, hop: str) -> Hop:
    for h in hops(get_hardware(hardware)):
        if h.kind == hop:
            return h
    raise EngineError(f"{hardware!r} has no hop {str(hop)[:40]!r}; hops are "
                      f"{', '.join(HOP_KINDS)}.", "hop")


def hop_bandwidth(hardware: str, hop: str) -> str:
    """Bandwidth per GPU of one hop ('memory', 'scale_up', 'pcie', 'scale_out'): '450 GB/s'."""
    return format_bandwidth(_hop(hardware, hop).bytes_per_s)


def hop_times_slower(hardware: str, hop: str) -> str:
    """How many times slower than the chip's memory a hop is: '7.4', '67'."""
    n = _hop(hardware, hop).times_slower
    return f"{n:.1f}" if n < 10 else f"{n:,.0f}"


def bubble_share(stages: int, micro_batches: int) -> str:
    """Share of a 1F1B pipeline step spent idle, (p - 1) / (m + p - 1): '27 %'."""
    p = quantities.PIPELINE_STAGES.check_integer(stages, "stages", "Pipeline stages")
    m = quantities.MICRO_BATCHES_PER_STEP.check_integer(micro_batches, "micro_batches",
                                                        "Micro-batches")
    return format_percent(pipeline_bubble_fraction(p, m))


def _decode_seconds(model: str, hardware: str, gpus: object, batch: object,
                    context: object) -> float:
    """The expected decode step of the figure's keywords, each checked here."""
    m = resolve_model(model_id=model)
    g = check_tensor_parallel(m, quantities.GPUS.check_integer(gpus, "gpus", "GPU count"))
    return decode_parts(
        m, get_hardware(hardware), gpus=g,
        context_tokens=quantities.CONTEXT_TOKENS.check_integer(context, "context", "Context"),
        batch=quantities.BATCH.check_integer(batch, "batch", "Batch")).seconds


def tp_step(model: str, hardware: str, gpus: int = 1, batch: int = 1,
            context: int = 1024) -> str:
    """The expected decode step on ``gpus`` tensor-parallel GPUs: '16.4 ms'."""
    return format_seconds(_decode_seconds(model, hardware, gpus, batch, context))


def tp_speedup(model: str, hardware: str, gpus: int, context: int = 1024) -> str:
    """How many times faster a batch-1 decode step is on ``gpus`` GPUs than on one: '3.4'."""
    one = _decode_seconds(model, hardware, 1, 1, context)
    many = _decode_seconds(model, hardware, gpus, 1, context)
    return f"{one / many:.1f}"


def _cluster_plan(model: str, gpus: int, tp: int, pp: int, interleave: int,
                  global_batch: float | None, seq_len: int, hardware: str,
                  tokens: float | str, sharding: str = "zero1") -> Plan:
    """The plan of a training run split tp x pp x data parallel (ZeRO-1 unless given)."""
    return plan(model=model, hardware=hardware, gpus=gpus, task="train", tp=tp, pp=pp,
                interleave=interleave, global_batch_tokens=global_batch, seq_len=seq_len,
                sharding=sharding, tokens=tokens_or_run(tokens))


def _cluster_train(model: str, gpus: int, tp: int, pp: int, interleave: int,
                   global_batch: float | None, seq_len: int, hardware: str,
                   tokens: float | str) -> TrainFigures:
    """The modelled training figures of that run."""
    t = _cluster_plan(model, gpus, tp, pp, interleave, global_batch, seq_len, hardware,
                      tokens).train
    assert t is not None
    return t


def cluster_fewest_gpus(model: str, tp: int, pp: int, interleave: int = 1,
                        global_batch: float | None = None, seq_len: int = 8192,
                        hardware: str = "h100-sxm", sharding: str = "zero1") -> str:
    """The fewest GPUs on which that layout fits at that global batch (fewer data-parallel
    copies each hold more micro-batches in flight): '16,384' for Meta's 405B layout at 16M
    tokens a step, '37,504' with nothing sharded."""
    n = _cluster_plan(model, tp * pp, tp, pp, interleave, global_batch, seq_len, hardware,
                      1e12, sharding).min_gpus
    if n is None:
        raise EngineError("That layout fits on no GPU count.", "gpus")
    return f"{n:,}"


def cluster_mfu(model: str, gpus: int, tp: int, pp: int, interleave: int = 1,
                global_batch: float | None = None, seq_len: int = 8192,
                hardware: str = "h100-sxm") -> str:
    """The expected MFU of a training run split tp x pp x data parallel: '37 %'."""
    return format_percent(_cluster_train(model, gpus, tp, pp, interleave, global_batch,
                                         seq_len, hardware, 1e12).expected.mfu)


def cluster_train_time(model: str, tokens: float | str, gpus: int, tp: int, pp: int,
                       interleave: int = 1, global_batch: float | None = None,
                       seq_len: int = 8192, hardware: str = "h100-sxm",
                       basis: str = "expected") -> str:
    """The wall-clock time of that run on ``tokens`` (a count or a run's name): the expected
    time, or with ``basis="bound"`` the time at best (every GPU at its dense peak, 100 %
    MFU): '78.3 days', '28.1 days' for Llama 3.1 405B on Meta's 16,384-GPU layout."""
    t = _cluster_train(model, gpus, tp, pp, interleave, global_batch, seq_len, hardware, tokens)
    seconds = {"expected": t.expected.seconds, "bound": t.bound_seconds}
    if basis not in seconds:
        raise EngineError(f"No basis {str(basis)[:20]!r}: expected or bound.", "basis")
    return format_seconds(seconds[basis])


def _measurement(measurement: str) -> Measurement:
    """The row of "How good are these numbers?" with that id, or an EngineError naming it."""
    # Imported here: only the build reads the measurements file; the browser never does.
    from engine.lesson.reality.measurements import load

    for m in load():
        if m.id == measurement:
            return m
    raise EngineError(f"No measurement {str(measurement)[:40]!r}.", "measurement")


def published(measurement: str) -> str:
    """A published measurement of "How good are these numbers?" as its source gave it,
    by id: '41.0 %' for llama3-405b-16k-gpus-mfu."""
    from engine.lesson.reality.measured import format_measure

    m = _measurement(measurement)
    return format_measure(m.value, m.metric, m.scope)


def published_expected(measurement: str) -> str:
    """What the engine expects for a published measurement of "How good are these numbers?",
    on that row's own workload and layout and in its source's terms, by id: '43.8 %' for
    llama3-405b-16k-gpus-mfu."""
    from engine.lesson.reality.measured import check, format_measure

    m = _measurement(measurement)
    expected = check(m).expected
    if expected is None:
        raise EngineError(f"The engine has no expected value for {m.id!r}.", "measurement")
    return format_measure(expected, m.metric, m.scope)


def observed_interruptions() -> str:
    """The interruptions Meta observed training Llama 3 405B, as a clause: '419 unexpected
    interruptions in 54 days on 16,384 H100s, about one every 3.1 hours'."""
    from engine.numbers.catalog.efficiency import interruption_record
    from engine.numbers.interruptions import run_interruptions
    from engine.numbers.units import SECONDS_PER_DAY

    seen = interruption_record()
    run = run_interruptions(seen.gpus, seen.days * SECONDS_PER_DAY)  # the observed run itself
    return (f"{seen.interruptions:,} unexpected interruptions in {seen.days:g} days on "
            f"{seen.gpus:,} H100s, about one every {run.hours_between:.1f} hours")


NETWORK_FIGURES = (hop_bandwidth, hop_times_slower, bubble_share, tp_step, tp_speedup,
                   cluster_mfu, cluster_train_time, cluster_fewest_gpus, published,
                   published_expected, observed_interruptions)
