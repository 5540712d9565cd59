"""Launching a training job: its memory (training state sharded by ZeRO, activations,
overhead) as :func:`engine.lesson.cluster.sizing.train_memory` gives it, the arithmetic shown for it,
:func:`launch_training`, and the ways out of a refusal (other GPUs, ZeRO-3 over more GPUs,
8-bit Adam, full recomputation, a smaller model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.lesson.cluster.admission import (
    accept,
    busy_with_any,
    fits_now,
    memory_verdict,
    pick_gpus,
    refuse,
)
from engine.lesson.cluster.checks import (
    check_gpu_indexes,
    check_model,
    check_training_numbers,
)
from engine.lesson.cluster.from_dict import check_state
from engine.lesson.cluster.log import settle
from engine.lesson.cluster.sizing import train_memory, training_run_inputs
from engine.lesson.cluster.state import (
    DEFAULT_TOKENS,
    ActionResult,
    ActionValue,
    ClusterState,
    Job,
    WayOut,
)
from engine.lesson.cluster.words import gpu_list
from engine.numbers.catalog import HardwareSpec, ModelSpec, list_models
from engine.numbers.compute import DEFAULT_MFU
from engine.numbers.errors import EngineError
from engine.numbers.expected_training import ExpectedTrain, expected_train
from engine.numbers.memory import (
    OPTIMIZERS,
    RECOMPUTE,
    SHARDINGS,
    TrainingMemory,
    min_gpus_to_train,
)
from engine.numbers.training_choices import Optimizer, Recompute, Sharding, checked
from engine.words.format import (
    format_count,
    format_GB,
    format_percent,
    format_seconds,
    format_TFLOP_per_s,
)
from engine.words.labels import part_words
from engine.words.memory_explained import memory_assumptions
from engine.words.sharding import sharding_over
from engine.words.training import training_run_assumptions


def _train_lines(mem: TrainingMemory) -> list[str]:
    bpp = mem.bytes_per_param_total
    state = mem.state_bytes
    first = (f"Training state: {bpp:g} bytes/param × {format_count(mem.model.params)} params = "
             f"{format_GB(mem.state_bytes_total)}")
    if state < mem.state_bytes_total * (1 - 1e-12):
        first += f"; {sharding_over(mem.sharding, mem.gpus)}: {format_GB(state)} per GPU"
    elif mem.gpus > 1:
        first += f" {sharding_over(mem.sharding, mem.gpus)}"
    parts = ", ".join(f"{part_words(k)} {v:g}" for k, v in mem.bytes_per_param.items())
    return [
        first + f" ({parts} bytes; {mem.optimizer}).",
        f"Activations (sequence {mem.seq_len:,} × micro-batch {mem.micro_batch}, "
        f"{mem.recompute} recomputation): {format_GB(mem.parts['activations'])}.",
        f"Runtime overhead: {format_GB(mem.parts['runtime_overhead'])}.",
        f"Total: {format_GB(mem.per_gpu_bytes)} per GPU.",
    ]


def _train_action(model_id: str, gpus: tuple[int, ...], sharding: str, optimizer: str,
                  recompute: str, seq_len: int, micro_batch: int, tokens: float, mfu: float
                  ) -> tuple[tuple[str, ActionValue], ...]:
    return (("kind", "train"), ("model_id", model_id), ("gpus", gpus), ("sharding", sharding),
            ("optimizer", optimizer), ("recompute", recompute), ("seq_len", seq_len),
            ("micro_batch", micro_batch), ("tokens", tokens), ("mfu", mfu))


def _train_ways_out(st: ClusterState, model: ModelSpec, gpus: tuple[int, ...],
                    sharding: Sharding, optimizer: Optimizer, recompute: Recompute, seq_len: int, micro_batch: int,
                    tokens: float, mfu: float) -> list[WayOut]:
    system = st.system
    hw = system.gpu
    count = system.gpu_count
    out: list[WayOut] = []

    def way(label: str, text: str, m: ModelSpec, pick: tuple[int, ...], mem: TrainingMemory,
            shard: Sharding, opt: Optimizer, rec: Recompute) -> WayOut:
        ok = fits_now(st, pick, mem.per_gpu_bytes, exclusive=True)
        state_per_gpu = mem.state_bytes
        return WayOut(
            label=label,
            text=f"{text}: {format_GB(mem.per_gpu_bytes)} per GPU (state {format_GB(state_per_gpu)} + "
            f"activations {format_GB(mem.parts['activations'])} + overhead "
            f"{format_GB(mem.parts['runtime_overhead'])}) on {gpu_list(pick)}"
            + tight_words(mem) + ("" if ok else "; other jobs must stop first") + ".",
            per_gpu_bytes=mem.per_gpu_bytes, fits_now=ok,
            action=_train_action(m.id, pick, shard, opt, rec, seq_len, micro_batch, tokens, mfu))

    same = train_memory(model, hw, len(gpus), sharding, optimizer, recompute, seq_len,
                         micro_batch)
    if same.fits:  # it fits idle GPUs: other GPUs may be free
        pick = pick_gpus(st, len(gpus), gpus, exclusive=True)
        if pick != gpus and fits_now(st, pick, same.per_gpu_bytes, exclusive=True):
            out.append(way("Other GPUs", f"The same job on {gpu_list(pick)}, which are free",
                           model, pick, same, sharding, optimizer, recompute))

    one = train_memory(model, hw, 1, "zero3", optimizer, recompute, seq_len, micro_batch)
    need = min_gpus_to_train(one)
    if need is not None and need <= count:
        counts = sorted({max(need, 2), count})
        for n in counts:
            if n == len(gpus) and sharding == "zero3":
                continue
            pick = pick_gpus(st, n, gpus, exclusive=True)
            mem = train_memory(model, hw, n, "zero3", optimizer, recompute, seq_len,
                                micro_batch)
            if mem.fits:
                least = " (the fewest that fit)" if n == need and n != count else ""
                out.append(way(f"{n} GPUs with ZeRO-3", f"{n} GPUs with ZeRO-3{least}", model,
                               pick, mem, "zero3", optimizer, recompute))
    else:
        fixed_words = (f"its activations alone ({format_GB(one.parts['activations'])} per GPU at "
                       f"sequence {seq_len:,}) do not fit one GPU; it needs tensor and pipeline "
                       f"parallelism across more GPUs than one {system.id} has"
                       if need is None else f"it needs at least {need} GPUs, more than one "
                       f"{system.id} has (a multi-server cluster)")
        out.append(WayOut(
            label="More GPUs than this system has",
            text=f"Even sharded with ZeRO-3 over all {count} GPUs it does not fit: "
            f"{fixed_words}.",
            per_gpu_bytes=train_memory(model, hw, count, "zero3", optimizer, recompute,
                                        seq_len, micro_batch).per_gpu_bytes,
            fits_now=False, action=()))

    if optimizer in ("adam", "adamw"):
        mem = train_memory(model, hw, len(gpus), sharding, "adam-8bit", recompute, seq_len,
                            micro_batch)
        if mem.fits:
            out.append(way("8-bit Adam", f"8-bit Adam moments ({mem.bytes_per_param_total:g} "
                           "bytes/param instead of 16)", model, gpus, mem, sharding,
                           "adam-8bit", recompute))

    if recompute != "full":
        mem = train_memory(model, hw, len(gpus), sharding, optimizer, "full", seq_len,
                            micro_batch)
        if mem.fits:
            out.append(way("Full recomputation", "Full activation recomputation (about a "
                           "third more compute: 8 instead of 6 FLOPs per parameter per token)",
                           model, gpus, mem, sharding, optimizer, "full"))

    for other in sorted(list_models(), key=lambda m: -m.params):
        if other.params >= model.params or seq_len > other.max_context:
            continue
        mem = train_memory(other, hw, len(gpus), sharding, optimizer, recompute, seq_len,
                            micro_batch)
        if mem.fits:
            out.append(way("A smaller model", f"{other.name} ({format_count(other.params)} "
                           "params)", other, gpus, mem, sharding, optimizer, recompute))
            break
    return out


DEFAULT_SEQ_LEN = 4096


def tight_words(mem: TrainingMemory) -> str:
    """Words for a job that fits with less to spare than its runtime overhead allowance (the
    part of the sum least known: allocator fragmentation, communication buffers): it fits on
    paper only. Empty when it does not fit, or fits with room."""
    spare = mem.capacity_bytes - mem.per_gpu_bytes
    allowance = mem.parts["runtime_overhead"]
    if not mem.fits or spare >= allowance:
        return ""
    return (f"; it fits on paper only, {format_GB(spare)} spare (less than the "
            f"{format_GB(allowance)} runtime allowance, itself an estimate): too tight to trust")


def _expected(model: ModelSpec, gpu: HardwareSpec, tokens: float, gpus: int, shard: Sharding,
              rec: Recompute, mb: int, seq: int) -> ExpectedTrain | None:
    """The engine's expected run of the job (None when the engine cannot model it)."""
    try:
        return expected_train(model, gpu, tokens=tokens, gpus=gpus, sharding=shard,
                              recompute=rec, micro_batch=mb, seq_len=seq)
    except EngineError:
        return None


def _expected_lines(model: ModelSpec, gpu: HardwareSpec, tokens: float, gpus: int,
                    shard: Sharding, rec: Recompute, mb: int, seq: int) -> tuple[str, ...]:
    """The engine's expected speed of the job beside the MFU it was given (none when the
    engine cannot model the job)."""
    e = _expected(model, gpu, tokens, gpus, shard, rec, mb, seq)
    if e is None:
        return ()
    return (f"Expected: a well-tuned stack reaches about {format_percent(e.mfu)} MFU on these GPUs, "
            f"{e.tokens_per_s:,.0f} tokens/s: about {format_seconds(e.seconds)} (at best "
            f"{format_seconds(e.bound_seconds)}, every GPU at its peak).",)


def launch_training(
    state: ClusterState | Mapping[str, object],
    model_id: str = "llama-3.1-8b",
    gpus: Sequence[int] | int = (0,),
    sharding: str = "none",
    tokens: float = DEFAULT_TOKENS,
    mfu: float = DEFAULT_MFU,
    optimizer: str = "adam",
    recompute: str = "selective",
    seq_len: int | None = None,
    micro_batch: int = 1,
) -> ActionResult:
    """Launch a training job of ``model_id`` on ``gpus`` for a budget of ``tokens`` tokens.

    ``seq_len`` defaults to 4,096 tokens, or the model's maximum context if that is shorter.

    Mixed-precision training (bf16 maths, 16 bytes of state per parameter with Adam), state
    sharded by ``sharding`` ('none', 'zero1', 'zero2', 'zero3') over the GPUs, speed from
    ``mfu`` against the GPUs' dense bf16 peak. Refused at submission, with the arithmetic and
    the ways out, if the memory per GPU exceeds what is free on any of its GPUs, or if any
    of its GPUs runs another job (training gets its GPUs to itself).
    """
    st = settle(check_state(state))
    system = st.system
    model = check_model(model_id)
    idx = check_gpu_indexes(gpus, system)
    shard = checked(sharding, "sharding", SHARDINGS)
    opt = checked(optimizer, "optimizer", OPTIMIZERS)
    rec = checked(recompute, "recompute", RECOMPUTE)
    if seq_len is None:
        seq_len = min(DEFAULT_SEQ_LEN, model.max_context)
    seq, mb, budget, eff = check_training_numbers(model, seq_len, micro_batch, tokens, mfu)
    if eff > 0.95:
        raise EngineError("MFU above 95 % is not achievable; 35-55 % is good for large runs.",
                          "mfu")
    # Validates the run's length.
    training_run_inputs(model.id, budget, len(idx), system.gpu.id, eff, rec, seq)
    mem = train_memory(model, system.gpu, len(idx), shard, opt, rec, seq, mb)
    job = Job(id=f"job-{st.next_job}", kind="train", model_id=model.id, gpus=idx,
              bytes_per_gpu=mem.per_gpu_bytes, status="running",
              started_seconds=st.clock_seconds, sharding=shard, optimizer=opt, recompute=rec,
              seq_len=seq, micro_batch=mb, tokens=budget, mfu=eff)
    lines = _train_lines(mem)
    where = gpu_list(idx)
    bad_gpu, comparison = memory_verdict(st, idx, mem.per_gpu_bytes)
    lines.append(comparison[0].upper() + comparison[1:] + ".")
    if bad_gpu is not None:
        free = st.free_bytes()[bad_gpu]
        state_here = mem.state_bytes
        if state_here > free:
            why = (f"the training state alone, {mem.bytes_per_param_total:g} bytes/param × "
                   f"{format_count(model.params)} params = {format_GB(mem.state_bytes_total)}"
                   + (f" ({format_GB(state_here)} per GPU)" if state_here < mem.state_bytes_total
                      else "")
                   + f", is more than the {format_GB(free)} free on GPU {bad_gpu}")
        else:
            why = f"it needs {comparison}"
        message = (f"Refused before it starts: training {model.name} on {where}: {why}. "
                   "Out of memory is decided by arithmetic, so retrying cannot help.")
        ways = _train_ways_out(st, model, idx, shard, opt, rec, seq, mb, budget, eff)
        return refuse(st, job, message, lines, ways, memory_assumptions(mem))
    holder = busy_with_any(st, idx)
    if holder is not None:
        message = (f"Refused: a training job needs its GPUs to itself, and "
                   f"{gpu_list(tuple(sorted(set(holder.gpus) & set(idx))))} "
                   f"{'runs' if len(set(holder.gpus) & set(idx)) == 1 else 'run'} {holder.id}; "
                   "stop it or choose other GPUs.")
        ways = _train_ways_out(st, model, idx, shard, opt, rec, seq, mb, budget, eff)
        return refuse(st, job, message, lines, ways, memory_assumptions(mem))
    run = training_run_inputs(model.id, budget, len(idx), system.gpu.id, eff, rec, seq)
    lines.append(f"Speed: {len(idx)} × {format_TFLOP_per_s(run.peak_flops_per_s)} × {format_percent(eff)} "
                 f"MFU / {format_count(run.model_flops_per_token)} FLOPs per token = "
                 f"{run.steady_tokens_per_s:,.0f} tokens/s; about "
                 f"{format_seconds(run.total_seconds)} for "
                 f"{format_count(budget)} tokens.")
    lines.extend(_expected_lines(model, system.gpu, budget, len(idx), shard, rec, mb, seq))
    # The time at the MFU given, and the expected one beside it: both say their basis.
    e = _expected(model, system.gpu, budget, len(idx), shard, rec, mb, seq)
    expected = (f" (expected about {format_seconds(e.seconds)}, at {format_percent(e.mfu)} MFU)"
                if e is not None else "")
    message = (f"{job.id}: training {model.name} on {where}: {format_GB(mem.per_gpu_bytes)} of "
               f"{format_GB(mem.capacity_bytes)} per GPU{tight_words(mem)}; "
               f"{format_count(budget)} tokens in about {format_seconds(run.total_seconds)} at "
               f"{format_percent(eff)} MFU{expected}.")
    return accept(st, job, message, lines,
                   (*memory_assumptions(mem), *training_run_assumptions(run)))
