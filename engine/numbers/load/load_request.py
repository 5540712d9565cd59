"""A server's load checked once, where it enters: raw values (the command line's text, a
caller's keywords) become a :class:`LoadRequest` of real types, and :func:`serve_load`
simulates a checked serving request under it.

Each limit is its :class:`~engine.numbers.quantities.Quantity`'s. The concurrency (closed
loop) and the rate (open loop) exclude each other; without either there is no load.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine.numbers import quantities, validate
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.errors import EngineError
from engine.numbers.load.arrivals import poisson_arrivals
from engine.numbers.load.kv_blocks import blocks_for, kv_cache_blocks
from engine.numbers.load.lengths import DEFAULT_CV, LENGTH_DISTS, LengthDist, draw_lengths
from engine.numbers.load.results import LoadResult
from engine.numbers.load.simulate import simulate
from engine.numbers.load.step_time import step_time_model
from engine.numbers.serve_request import ServeRequest


@dataclass(frozen=True, slots=True)
class LoadRequest:
    """Traffic for a server: closed loop at ``concurrency`` or open loop at ``rate``
    requests/s, ``requests`` in all, lengths from ``length_dist`` (spread ``length_cv``)
    or the lists ``prompt_lengths`` / ``output_lengths`` when given, random draws from
    ``seed``; optional TTFT and TPOT targets for goodput (s)."""

    concurrency: int | None
    rate: float | None
    requests: int
    length_dist: LengthDist
    length_cv: float
    seed: int
    ttft_target_seconds: float | None = None
    tpot_target_seconds: float | None = None
    prompt_lengths: tuple[int, ...] | None = None
    output_lengths: tuple[int, ...] | None = None


def _given(value: object) -> bool:
    return value is not None and value != ""


def _lengths(values: Sequence[object] | None, field: str, label: str,
             quantity: quantities.Quantity) -> tuple[int, ...] | None:
    if values is None:
        return None
    if isinstance(values, str) or not values:
        raise EngineError(f"{label}: give a list of whole numbers of tokens.", field)
    return tuple(quantity.check_integer(v, field, label) for v in values)


def load_request(*, concurrency: object = None, rate: object = None, requests: object = None,
                 length_dist: object = "fixed", length_cv: object = None, seed: object = 0,
                 ttft_target: object = None, tpot_target: object = None,
                 prompt_lengths: Sequence[object] | None = None,
                 output_lengths: Sequence[object] | None = None) -> LoadRequest | None:
    """The checked load, or None when neither ``concurrency`` nor ``rate`` is given.
    EngineError naming the field at fault otherwise."""
    has_c, has_r = _given(concurrency), _given(rate)
    if not (has_c or has_r):
        for name, value in (("requests", requests), ("ttft_target", ttft_target),
                            ("tpot_target", tpot_target)):
            if _given(value):
                raise EngineError(f"{name.replace('_', ' ').capitalize()} needs a load: give "
                                  "a concurrency or a rate.", name)
        return None
    if has_c and has_r:
        raise EngineError("Give a concurrency (closed loop) or a rate (open loop), not both.",
                          "rate")
    c = (quantities.CONCURRENCY.check_integer(concurrency, "concurrency", "Concurrency")
         if has_c else None)
    r = quantities.REQUEST_RATE.check(rate, "rate", "Request rate") if has_r else None
    n = (quantities.SIMULATED_REQUESTS.check_integer(requests, "requests", "Requests")
         if _given(requests) else quantities.TYPICAL_SIMULATED_REQUESTS)
    dist = validate.choice(length_dist, "length_dist", LENGTH_DISTS,
                           label="Length distribution")
    cv = (quantities.LENGTH_CV.check(length_cv, "length_cv", "Length spread (cv)")
          if _given(length_cv) else DEFAULT_CV)
    if _given(length_cv) and dist in ("fixed", "uniform"):
        raise EngineError(f"A spread (cv) is for normal or lognormal lengths, not {dist}.",
                          "length_cv")
    prompts = _lengths(prompt_lengths, "prompt_lengths", "Prompt lengths",
                       quantities.PROMPT_TOKENS)
    outputs = _lengths(output_lengths, "output_lengths", "Answer lengths",
                       quantities.OUTPUT_TOKENS)
    for given in (prompts, outputs):
        if given is not None and len(given) != n:
            n = len(given)
    if prompts is not None and outputs is not None and len(prompts) != len(outputs):
        raise EngineError("Give as many answer lengths as prompt lengths.", "output_lengths")
    return LoadRequest(
        concurrency=c, rate=r, requests=n, length_dist=dist,  # type: ignore[arg-type]
        length_cv=cv, seed=quantities.SEED.check_integer(seed, "seed", "Seed"),
        ttft_target_seconds=(quantities.LATENCY_TARGET_SECONDS.check(
            ttft_target, "ttft_target", "TTFT target") if _given(ttft_target) else None),
        tpot_target_seconds=(quantities.LATENCY_TARGET_SECONDS.check(
            tpot_target, "tpot_target", "TPOT target") if _given(tpot_target) else None),
        prompt_lengths=prompts, output_lengths=outputs,
    )


def serve_load(serve: ServeRequest, load: LoadRequest, *, host_costs: bool = True
               ) -> LoadResult:
    """``serve``'s deployment (its replicas of ``serve.tp`` GPUs, vLLM's default scheduler
    limits on its chip) under ``load``: means ``serve.prompt_tokens`` in and
    ``serve.output_tokens`` out. ``host_costs``: False leaves out the host's time between
    steps. EngineError when the KV cache cannot hold a request alone."""
    m, hw = serve.model, serve.hardware
    limits = scheduler_limits(hw)
    blocks = kv_cache_blocks(m, hw, weight_format=serve.weight_format,
                             kv_format=serve.kv_format, gpus=serve.tp,
                             max_running=limits.max_running, block_tokens=limits.block_tokens)
    if blocks == 0:
        raise EngineError("The weights and working space leave no room for a KV cache on "
                          "these GPUs; give more GPUs or a smaller format.", "gpus")
    rng = random.Random(load.seed)
    n = load.requests
    most = quantities.PROMPT_TOKENS.maximum
    prompts = load.prompt_lengths or draw_lengths(rng, load.length_dist, serve.prompt_tokens,
                                                  n, cv=load.length_cv, most=int(most))
    outputs = load.output_lengths or draw_lengths(rng, load.length_dist, serve.output_tokens,
                                                  n, cv=load.length_cv, most=int(most))
    longest = max(p + o - 1 for p, o in zip(prompts, outputs, strict=True))
    if blocks_for(longest, limits.block_tokens) > blocks:
        raise EngineError(f"A request of {longest:,} tokens (prompt and answer) does not fit "
                          f"the KV cache of {blocks * limits.block_tokens:,} tokens; give "
                          "shorter lengths or more GPUs.", "prompt_tokens")
    arrivals = poisson_arrivals(rng, load.rate, n) if load.rate is not None else None
    step = step_time_model(m, hw, weight_format=serve.weight_format, kv_format=serve.kv_format,
                           gpus=serve.tp, host_costs=host_costs)
    return simulate(step, prompts=prompts, outputs=outputs, concurrency=load.concurrency,
                    arrivals=arrivals, rate=load.rate, replicas=serve.replicas,
                    max_running=limits.max_running,
                    max_batched_tokens=limits.max_batched_tokens, kv_blocks=blocks,
                    block_tokens=limits.block_tokens,
                    ttft_target_seconds=load.ttft_target_seconds,
                    tpot_target_seconds=load.tpot_target_seconds)
