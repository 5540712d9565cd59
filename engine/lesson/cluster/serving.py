"""Deploying a serving job: its memory (weights, KV cache, activations, overhead) as
:func:`engine.lesson.cluster.sizing.serve_memory` gives it, the arithmetic shown for it, :func:`deploy`,
and the ways out of a refusal (other GPUs, tensor parallelism, smaller weight formats, a
shorter context, a smaller model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.lesson.cluster.admission import (
    accept,
    busy_with_training,
    fits_now,
    memory_verdict,
    pick_gpus,
    refuse,
)
from engine.lesson.cluster.checks import (
    SERVE_BATCH,
    check_context,
    check_gpu_indexes,
    check_model,
)
from engine.lesson.cluster.from_dict import check_state
from engine.lesson.cluster.log import settle
from engine.lesson.cluster.sizing import serve_kv_blocks, serve_memory
from engine.lesson.cluster.state import (
    ActionResult,
    ActionValue,
    ClusterState,
    Job,
    WayOut,
)
from engine.lesson.cluster.words import gpu_list
from engine.numbers.architecture import check_tensor_parallel, tensor_parallel_ok
from engine.numbers.catalog import ModelSpec, list_models
from engine.numbers.formats import FORMATS, FormatId, get_format, parse_format
from engine.numbers.memory import ServingMemory, min_gpus_to_serve
from engine.words.format import format_count, format_GB, plural
from engine.words.memory_explained import memory_assumptions


def _serve_lines(mem: ServingMemory) -> list[str]:
    m = mem.model
    fmt = get_format(mem.weight_format)
    split = f" / {mem.gpus} GPUs" if mem.gpus > 1 else ""
    return [
        f"Weights: {format_count(m.params)} params × {fmt.bytes_per_number:g} bytes "
        f"({fmt.id}) = {format_GB(mem.weights_bytes_total)}{split}"
        + (f" = {format_GB(mem.parts['weights'])} per GPU" if split else "") + ".",
        f"KV cache: {mem.kv_cache_bytes_per_token:,.0f} bytes/token × "
        f"{mem.context_tokens:,} tokens × {plural(mem.batch, 'request')} = {format_GB(mem.kv_cache_bytes_total)}"
        f"{split}" + (f" = {format_GB(mem.parts['kv_cache'])} per GPU" if split else "") + ".",
        f"Activations (transient buffers): {format_GB(mem.parts['activations'])}.",
        f"Runtime overhead (CUDA context, workspaces): {format_GB(mem.parts['runtime_overhead'])}.",
        f"Total: {format_GB(mem.per_gpu_bytes)} per GPU.",
    ]


def _serve_action(model_id: str, gpus: tuple[int, ...], weight_format: FormatId, context: int,
                  batch: int) -> tuple[tuple[str, ActionValue], ...]:
    return (("kind", "serve"), ("model_id", model_id), ("gpus", gpus),
            ("weight_format", weight_format), ("context_tokens", context), ("batch", batch))


def _fits_on(label: str, head: str, mem: ServingMemory, model_id: str, gpus: tuple[int, ...],
             weight_format: FormatId, context: int, batch: int, *, tail: str = "") -> WayOut:
    """A way out that fits now on ``gpus`` (the caller has checked): its text is
    '{head}: {GB} per GPU on {gpus}{tail}.', its action that deployment."""
    return WayOut(
        label=label,
        text=f"{head}: {format_GB(mem.per_gpu_bytes)} per GPU on {gpu_list(gpus)}{tail}.",
        per_gpu_bytes=mem.per_gpu_bytes, fits_now=True,
        action=_serve_action(model_id, gpus, weight_format, context, batch))


def _serve_ways_out(st: ClusterState, model: ModelSpec, gpus: tuple[int, ...], wf: FormatId,
                    ctx: int, batch: int) -> list[WayOut]:
    system = st.system
    hw = system.gpu
    count = system.gpu_count
    out: list[WayOut] = []
    mem = serve_memory(model, hw, wf, ctx, batch, len(gpus))

    if mem.fits:  # it fits an empty GPU: other GPUs may have the room
        pick = pick_gpus(st, len(gpus), gpus, exclusive=False)
        if pick != gpus and fits_now(st, pick, mem.per_gpu_bytes, exclusive=False):
            out.append(WayOut(
                label="Other GPUs",
                text=f"The same job on {gpu_list(pick)}, which have the room: "
                f"{format_GB(mem.per_gpu_bytes)} per GPU.",
                per_gpu_bytes=mem.per_gpu_bytes, fits_now=True,
                action=_serve_action(model.id, pick, wf, ctx, batch)))

    need = min_gpus_to_serve(mem)
    if need is not None and need > len(gpus):
        n = need
        while n <= count and not tensor_parallel_ok(model, n):
            n += 1
        if n <= count:
            pick = pick_gpus(st, n, gpus, exclusive=False)
            m2 = serve_memory(model, hw, wf, ctx, batch, n)
            ok = fits_now(st, pick, m2.per_gpu_bytes, exclusive=False)
            out.append(WayOut(
                label=f"{n} GPUs (tensor parallel)",
                text=f"Split over {n} GPUs ({gpu_list(pick)}): {format_GB(m2.per_gpu_bytes)} per GPU"
                + ("" if ok else " (other jobs must stop first)")
                + (f"; {n} because tensor parallelism needs a count that divides the "
                   f"{model.heads} attention heads" if n != need else "") + ".",
                per_gpu_bytes=m2.per_gpu_bytes, fits_now=ok,
                action=_serve_action(model.id, pick, wf, ctx, batch)))
        else:
            out.append(WayOut(
                label="More GPUs than this system has",
                text=f"Even split over all {count} GPUs it needs more memory than they have: "
                f"at least {need} GPUs, more than one {system.id}.",
                per_gpu_bytes=serve_memory(model, hw, wf, ctx, batch, count).per_gpu_bytes,
                fits_now=False, action=()))

    current = get_format(wf).bytes_per_number
    smaller: tuple[FormatId, ...] = ("fp8", "int4")
    for fid in smaller:
        if FORMATS[fid].bytes_per_number >= current:
            continue
        m2 = serve_memory(model, hw, fid, ctx, batch, len(gpus))
        if fits_now(st, gpus, m2.per_gpu_bytes, exclusive=False):
            room = min(st.free_bytes()[g] for g in gpus) - m2.per_gpu_bytes
            extra = int(room * len(gpus) // mem.kv_cache_bytes_per_token)
            out.append(_fits_on(
                f"{fid} weights", f"Weights in {fid} ({FORMATS[fid].bytes_per_number:g} bytes each)",
                m2, model.id, gpus, fid, ctx, batch,
                tail=f", leaving room for {extra:,} more tokens of KV cache "
                "(quantised weights can cost some quality)"))
            break

    free_min = min(st.free_bytes()[g] for g in gpus)
    fixed = mem.per_gpu_bytes - mem.parts["kv_cache"]
    kv_per_token_per_gpu = mem.kv_cache_bytes_per_token * batch / len(gpus)
    if fixed < free_min and ctx > 1:
        fit_ctx = int((free_min - fixed) // kv_per_token_per_gpu)
        fit_ctx = (fit_ctx // 1024) * 1024 if fit_ctx >= 1024 else fit_ctx
        if 1 <= fit_ctx < ctx:
            m2 = serve_memory(model, hw, wf, fit_ctx, batch, len(gpus))
            if fits_now(st, gpus, m2.per_gpu_bytes, exclusive=False):
                out.append(_fits_on(
                    "Shorter context", f"Context of {fit_ctx:,} tokens instead of {ctx:,}",
                    m2, model.id, gpus, wf, fit_ctx, batch))

    for other in sorted(list_models(), key=lambda m: -m.params):
        if (other.params >= model.params or ctx > other.max_context
                or not tensor_parallel_ok(other, len(gpus))):
            continue
        m2 = serve_memory(other, hw, wf, ctx, batch, len(gpus))
        if fits_now(st, gpus, m2.per_gpu_bytes, exclusive=False):
            out.append(_fits_on(
                "A smaller model", f"{other.name} ({format_count(other.params)} params)",
                m2, other.id, gpus, wf, ctx, batch))
            break
    return out


def deploy(
    state: ClusterState | Mapping[str, object],
    model_id: str = "llama-3.1-8b",
    gpus: Sequence[int] | int = (0,),
    weight_format: object = "bf16",
    context_tokens: int = 8192,
    batch: int = 1,
) -> ActionResult:
    """Deploy ``model_id`` as a serving job on ``gpus`` (tensor parallel when several),
    sized for ``batch`` concurrent requests of ``context_tokens`` tokens each (KV cache in
    bf16). Refused at submission, with the arithmetic, if it does not fit the memory free on
    each GPU or a GPU is held by a training job."""
    st = settle(check_state(state))
    system = st.system
    model = check_model(model_id)
    idx = check_gpu_indexes(gpus, system)
    wf = parse_format(weight_format)
    ctx = check_context(model, context_tokens)
    b = SERVE_BATCH.check_integer(batch, "batch", "Batch (concurrent requests)")
    check_tensor_parallel(model, len(idx))
    mem = serve_memory(model, system.gpu, wf, ctx, b, len(idx))
    job = Job(id=f"job-{st.next_job}", kind="serve", model_id=model.id, gpus=idx,
              bytes_per_gpu=mem.per_gpu_bytes, status="running",
              started_seconds=st.clock_seconds, weight_format=wf, context_tokens=ctx, batch=b)
    lines = _serve_lines(mem)
    where = gpu_list(idx)
    bad_gpu, comparison = memory_verdict(st, idx, mem.per_gpu_bytes)
    lines.append(comparison[0].upper() + comparison[1:] + ".")
    if bad_gpu is not None:
        message = (f"Refused before it starts: serving {model.name} ({wf}) on {where} needs "
                   f"{comparison}. Retrying cannot help: the arithmetic will not change.")
        return refuse(st, job, message, lines, _serve_ways_out(st, model, idx, wf, ctx, b),
                       memory_assumptions(mem))
    holder = busy_with_training(st, idx)
    if holder is not None:
        message = (f"Refused: {gpu_list(holder.gpus)} belong to training job {holder.id}, "
                   "which has its GPUs to itself; stop it or choose other GPUs.")
        return refuse(st, job, message, lines, _serve_ways_out(st, model, idx, wf, ctx, b),
                       memory_assumptions(mem))
    blocks, block_tokens = serve_kv_blocks(model, st.gpu_as_found(idx), wf, len(idx))
    fit_tokens = blocks * block_tokens
    message = (f"{job.id}: serving {model.name} ({wf}) on {where}: "
               f"{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)} per GPU; room for "
               f"{fit_tokens:,} tokens of context "
               f"({plural(fit_tokens // ctx, 'request')} of {ctx:,} tokens).")
    return accept(st, job, message, lines, memory_assumptions(mem))
