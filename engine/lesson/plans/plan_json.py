"""A plan as plain JSON values: the numbers of engine.numbers.plan with the words of
engine.words (the five answers, the memory's assumptions, where the price and the token count
come from), for the command line's ``--json`` and the tests that compare CPython with Pyodide.
"""

from __future__ import annotations

from engine.lesson.plans.config_model import inspect_to_dict
from engine.numbers.catalog.hf_config import ConfigModel
from engine.numbers.energy import plan_energy
from engine.numbers.interruptions import run_interruptions
from engine.numbers.memory import ServingMemory, TrainingMemory
from engine.numbers.offload import Offload
from engine.numbers.plan import Plan, ServeFigures
from engine.numbers.plan_cost import serve_expected_cost, train_expected_cost
from engine.numbers.units import SECONDS_PER_DAY
from engine.words.answers import SERVE_NOTE, answers, price_note, tokens_source
from engine.words.memory_explained import layout_does_not_fit_words, memory_assumptions
from engine.words.offload_explained import OFFLOAD_MODEL
from engine.words.training import mfu_band_words, train_warnings_words


def plan_to_dict(p: Plan) -> dict[str, object]:
    """Every number of the plan, its answers and assumptions, as JSON-ready values."""
    mem = p.memory
    out: dict[str, object] = {
        "task": p.task,
        "model": {"id": p.model.id, "name": p.model.name,
                  "params": float(p.model.params),
                  "active_params": float(p.model.active_params)},
        "hardware": {"id": p.hardware.id, "name": p.hardware.name,
                     "memory_marketed_GB": p.hardware.memory_marketed_GB,
                     "memory_marketed_bytes": p.hardware.memory_marketed_bytes},
        "gpus": p.gpus,
        "memory": {
            "per_gpu_bytes": mem.per_gpu_bytes,
            "capacity_bytes": mem.capacity_bytes,
            "fits": mem.fits,
            "headroom_bytes": mem.headroom_bytes,
            "parts": dict(mem.parts),
            "assumptions": list(memory_assumptions(mem)),
        },
        "flops": {"per_token": p.flops_per_token},
        "min_gpus": p.min_gpus,
        "usd_per_gpu_hour": p.usd_per_gpu_hour,
        "price_source": price_note(p),
        "answers": answers(p),
    }
    energy = plan_energy(p)
    if energy is not None:
        out["energy"] = energy.to_dict()
    if isinstance(mem, ServingMemory) and p.serve is not None:
        s = p.serve
        serve_expected: dict[str, object] = {
            **s.expected.to_dict(),
            "output_tokens_per_s": s.replicas * s.expected.output_tokens_per_s}
        if (busy := serve_expected_cost(p)) is not None:
            serve_expected["usd_per_million_output_tokens"] = busy.usd_per_million_tokens
        serve: dict[str, object] = {
            "weight_format": mem.weight_format,
            "kv_format": mem.kv_format,
            "context_tokens": mem.context_tokens,
            "batch": mem.batch,
            "prompt_tokens": s.prompt_tokens,
            "output_tokens": s.output_tokens,
            "kv_cache_bytes_per_token": mem.kv_cache_bytes_per_token,
            "decode_seconds_per_token": s.tpot_seconds,
            "decode_tokens_per_s_per_user": s.tokens_per_s_per_user,
            "decode_tokens_per_s": mem.batch * s.tokens_per_s_per_user,
            "decode_bytes_per_step": s.first_step.bytes_read,
            "bound": s.bound,
            "prefill_seconds": s.prefill.seconds,
            "prefill_bound": s.prefill.bound,
            "ttft_seconds": s.ttft_seconds,
            "ttft_at_batch_seconds": s.ttft_at_batch_seconds,
            "request_seconds_at_batch": s.request_seconds_at_batch,
            "total_seconds": s.total_seconds,
            "max_context_tokens_that_fit": _json_int(mem.max_context_tokens_that_fit),
            "max_concurrent_requests": _json_int(mem.max_concurrent_requests),
            "note": SERVE_NOTE,
            "tp": s.tp,
            "replicas": s.replicas,
            "output_tokens_per_s": s.output_tokens_per_s,
            "communication_seconds_per_token": s.expected.communication_seconds_per_token,
            "expected": serve_expected,
        }
        if s.offload is not None:
            serve["offload"] = offload_dict(s.offload, s)
        if s.ep > 1:
            serve["ep"] = s.ep
        out["serve"] = serve
    if isinstance(mem, TrainingMemory) and p.train is not None:
        t = p.train
        train_expected = t.expected.to_dict()
        if (run := train_expected_cost(p)) is not None:
            train_expected["usd_per_million_tokens"] = run.usd_per_million_tokens
        train: dict[str, object] = {
            "sharding": mem.sharding, "tp": mem.tp, "dp": mem.dp, "pp": mem.pp,
            "interleave": mem.interleave if mem.pp > 1 else 1,
            "pipeline_split": mem.pipeline_split,
            "optimizer": mem.optimizer, "convention": mem.convention,
            "bytes_per_param": dict(mem.bytes_per_param),
            "bytes_per_param_total": mem.bytes_per_param_total,
            "state_bytes_total": mem.state_bytes_total,
            "state_bytes_per_gpu": mem.state_bytes,
            "recompute": mem.recompute, "micro_batch": mem.micro_batch,
            "seq_len": mem.seq_len,
            "tokens": t.tokens,
            "tokens_source": tokens_source(t),
            "total_flops": t.total_flops, "model_flops": t.model_flops,
            "flops_per_token": t.per_token.to_dict(),
            "peak_flops_per_s": t.peak_flops_per_s,
            "compute_format": t.compute_format, "mfu": t.mfu, "seconds": t.seconds,
            "days": t.seconds / SECONDS_PER_DAY, "tokens_per_s": t.tokens_per_s,
            "target_days": t.target_days, "gpus_for_target": t.gpus_for_target,
            "bound_seconds": t.bound_seconds, "bound_tokens_per_s": t.bound_tokens_per_s,
            "bound_seconds_per_step": t.bound_seconds_per_step,
            "communication_seconds_per_step": t.expected.communication_seconds_per_step,
            "global_batch_tokens": t.expected.tokens_per_step,
            "warnings": [*train_warnings_words(t.expected.warnings),
                         *(() if mem.fits else (layout_does_not_fit_words(mem),))],
            "mfu_band": mfu_band_words(t.expected),
            "interruptions": run_interruptions(p.gpus, t.expected.seconds).to_dict(),
            "expected": train_expected,
        }
        if mem.ep > 1 or mem.cp > 1:
            train.update(ep=t.expected.ep, cp=t.expected.cp)
        if mem.adapter is not None:
            train["adapter"] = mem.adapter.to_dict()
        out["train"] = train
    return out


def offload_dict(o: Offload, s: ServeFigures) -> dict[str, object]:
    """The layers left in host memory, the host memory they take and what reading them over
    the host link adds to each pass (seconds of the bound's decode step and prefill)."""
    return {
        "gpu_layers": o.gpu_layers, "layers": o.layers, "host_layers": o.host_layers,
        "host_weight_bytes": o.host_weight_bytes,
        "host_weight_bytes_per_gpu": o.host_weight_bytes_per_gpu,
        "host_weight_bytes_all_replicas": o.host_weight_bytes * s.replicas,
        "host_link": o.link.name, "host_link_bytes_per_s": o.link.bytes_per_s,
        "host_link_source": o.link.source,
        "decode_link_seconds_per_step": s.first_step.host_link_seconds,
        "prefill_link_seconds": s.prefill.host_link_seconds,
        "model": OFFLOAD_MODEL,
    }


def _json_int(n: int) -> int | float:
    return n if n <= 2**53 else float(n)


def plan_json(p: Plan, read: ConfigModel | None = None) -> dict[str, object]:
    """What ``python -m engine plan ... --json`` prints for the plan ``p`` (without a load
    run): :func:`plan_to_dict`, with the config.json's reading under ``model`` when the
    model came from one (``read``)."""
    data = plan_to_dict(p)
    if read is not None:
        data["model"] = {**inspect_to_dict(read), **data["model"]}  # type: ignore[dict-item]
    return data
