"""A server's load checked once, where it enters: raw values (the command line's text, a
caller's keywords) become a :class:`LoadRequest` of real types, and :func:`serve_load`
simulates a checked serving request under it.

Each limit is its :class:`~engine.numbers.quantities.Quantity`'s. The concurrency (closed
loop) and the rate (open loop) exclude each other; without either there is no load.
Speculative decoding takes its draft tokens and acceptance together (a draft model is
optional); a shared prefix takes its length and, optionally, its hit rate (all requests by
default). The scheduling says whether the host's work between steps waits for the GPU
(synchronous, vLLM's default) or runs beside it (overlapped, as TensorRT-LLM's PyTorch
backend does by default).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from engine.numbers import architecture, quantities, validate
from engine.numbers.catalog import ModelSpec, get_model
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.errors import EngineError
from engine.numbers.load.arrivals import poisson_arrivals
from engine.numbers.load.kv_blocks import blocks_for, kv_cache_blocks
from engine.numbers.load.lengths import DEFAULT_CV, LENGTH_DISTS, LengthDist, draw_lengths
from engine.numbers.load.prefix_cache import PrefixCache
from engine.numbers.load.results import LoadResult
from engine.numbers.load.simulate import simulate, snapshot
from engine.numbers.load.snapshot import StepSnapshot
from engine.numbers.load.speculative import SpecDecode, expected_tokens_per_step, spec_decode
from engine.numbers.load.step_time import SCHEDULINGS, Scheduling, StepTime, step_time_model
from engine.numbers.serve_request import ServeRequest


@dataclass(frozen=True, slots=True)
class LoadRequest:
    """Traffic for a server: closed loop at ``concurrency`` or open loop at ``rate``
    requests/s, ``requests`` in all, lengths from ``length_dist`` (spread ``length_cv``)
    or the lists ``prompt_lengths`` / ``output_lengths`` when given, random draws from
    ``seed``; optional TTFT and TPOT targets for goodput (s). ``spec_tokens`` draft tokens
    a step accepted with probability ``spec_accept`` (0 tokens: no speculative decoding),
    drafted by ``draft_model`` or, without one, by one-layer heads; a ``prefix_tokens``-token
    shared prefix (0: none) that a share ``prefix_hit`` of requests start with;
    ``scheduling``: the host's time between steps after the GPU's or beside it
    (:meth:`~engine.numbers.load.step_time.StepTime.step_seconds`)."""

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
    spec_tokens: int = 0
    spec_accept: float = 0.0
    draft_model: ModelSpec | None = None
    prefix_tokens: int = 0
    prefix_hit: float = 0.0
    scheduling: Scheduling = "synchronous"


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
                 output_lengths: Sequence[object] | None = None, spec_tokens: object = None,
                 spec_accept: object = None, draft_model: object = None,
                 prefix_tokens: object = None, prefix_hit: object = None,
                 scheduling: object = None) -> LoadRequest | None:
    """The checked load, or None when neither ``concurrency`` nor ``rate`` is given.
    ``draft_model``: a :class:`ModelSpec` or a catalogue model id. EngineError naming the
    field at fault otherwise."""
    has_c, has_r = _given(concurrency), _given(rate)
    if not (has_c or has_r):
        for name, value in (("requests", requests), ("ttft_target", ttft_target),
                            ("tpot_target", tpot_target), ("spec_tokens", spec_tokens),
                            ("spec_accept", spec_accept), ("draft_model", draft_model),
                            ("prefix_tokens", prefix_tokens), ("prefix_hit", prefix_hit),
                            ("scheduling", scheduling)):
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
    k, a, draft = _speculative(spec_tokens, spec_accept, draft_model)
    p, h = _prefix(prefix_tokens, prefix_hit)
    return LoadRequest(
        concurrency=c, rate=r, requests=n, length_dist=dist,  # type: ignore[arg-type]
        length_cv=cv, seed=quantities.SEED.check_integer(seed, "seed", "Seed"),
        ttft_target_seconds=(quantities.LATENCY_TARGET_SECONDS.check(
            ttft_target, "ttft_target", "TTFT target") if _given(ttft_target) else None),
        tpot_target_seconds=(quantities.LATENCY_TARGET_SECONDS.check(
            tpot_target, "tpot_target", "TPOT target") if _given(tpot_target) else None),
        prompt_lengths=prompts, output_lengths=outputs, spec_tokens=k, spec_accept=a,
        draft_model=draft, prefix_tokens=p, prefix_hit=h,
        scheduling=(validate.choice(scheduling, "scheduling", SCHEDULINGS,  # type: ignore[arg-type]
                                    label="Scheduling")
                    if _given(scheduling) else "synchronous"),
    )


def _speculative(tokens: object, accept: object, draft: object
                 ) -> tuple[int, float, ModelSpec | None]:
    """(draft tokens, acceptance, draft model) checked; (0, 0.0, None) when none given."""
    if not _given(tokens):
        for name, value in (("spec_accept", accept), ("draft_model", draft)):
            if _given(value):
                raise EngineError("Speculative decoding needs its draft tokens a step "
                                  "(spec tokens).", name)
        return 0, 0.0, None
    k = quantities.SPEC_DRAFT_TOKENS.check_integer(tokens, "spec_tokens", "Draft tokens")
    if not _given(accept):
        raise EngineError("Give the chance that a draft token is accepted (spec accept), "
                          "from 0 to 1.", "spec_accept")
    a = quantities.SPEC_ACCEPTANCE.check(accept, "spec_accept", "Draft acceptance")
    model = None
    if _given(draft):
        model = draft if isinstance(draft, ModelSpec) else get_model(draft)
    return k, a, model


def _prefix(tokens: object, hit: object) -> tuple[int, float]:
    """(shared prefix tokens, hit rate) checked; (0, 0.0) when none given."""
    if not _given(tokens):
        if _given(hit):
            raise EngineError("A prefix hit rate needs the shared prefix's length "
                              "(prefix tokens).", "prefix_hit")
        return 0, 0.0
    p = quantities.PREFIX_TOKENS.check_integer(tokens, "prefix_tokens", "Shared prefix")
    h = (quantities.PREFIX_HIT.check(hit, "prefix_hit", "Prefix hit rate") if _given(hit)
         else 1.0)
    return p, h


def load_options(load: LoadRequest) -> dict[str, object]:
    """The speculative decoding, the shared prefix and an overlapped scheduling of ``load``
    as JSON (``speculative``: draft tokens, acceptance, expected tokens per verification,
    draft model id or None for one-layer heads; ``prefix_cache``: tokens and hit rate;
    ``scheduling``: "overlapped"), each only when given."""
    out: dict[str, object] = {}
    if load.spec_tokens:
        out["speculative"] = {
            "draft_tokens": load.spec_tokens, "acceptance": load.spec_accept,
            "tokens_per_step": expected_tokens_per_step(load.spec_tokens, load.spec_accept),
            "draft_model": load.draft_model.id if load.draft_model is not None else None}
    if load.prefix_tokens:
        out["prefix_cache"] = {"tokens": load.prefix_tokens, "hit": load.prefix_hit}
    if load.scheduling != "synchronous":
        out["scheduling"] = load.scheduling
    return out


def serve_load(serve: ServeRequest, load: LoadRequest, *, host_costs: bool = True,
               fullest: bool = False) -> LoadResult:
    """``serve``'s deployment (its replicas of ``serve.tp`` GPUs, vLLM's default scheduler
    limits on its chip) under ``load``: means ``serve.prompt_tokens`` in and
    ``serve.output_tokens`` out. ``host_costs``: False leaves out the host's time between
    steps; ``fullest``: keep the first replica's snapshot at its fullest step (the result's
    ``fullest``). EngineError when the KV cache cannot hold a request alone."""
    step, inputs = _simulation(serve, load, host_costs)
    return simulate(step, rate=load.rate, ttft_target_seconds=load.ttft_target_seconds,
                    tpot_target_seconds=load.tpot_target_seconds, fullest=fullest, **inputs)


def serve_snapshot(serve: ServeRequest, load: LoadRequest, time_seconds: float, *,
                   replica: int = 0, host_costs: bool = True) -> StepSnapshot:
    """Replica ``replica`` of :func:`serve_load`'s run of the same inputs at
    ``time_seconds`` of simulated time (from the first arrival): who runs, who waits, whose
    blocks. ``time_seconds`` and ``replica`` are trusted (a moment of that run, one of its
    replicas)."""
    step, inputs = _simulation(serve, load, host_costs)
    return snapshot(step, time_seconds=time_seconds, replica=replica, **inputs)


class _Inputs(TypedDict):
    """The keywords :func:`simulate` and :func:`snapshot` share."""

    prompts: Sequence[int]
    outputs: Sequence[int]
    concurrency: int | None
    arrivals: Sequence[float] | None
    replicas: int
    max_running: int
    max_batched_tokens: int
    kv_blocks: int
    block_tokens: int
    spec: SpecDecode | None
    prefix: PrefixCache | None


def _simulation(serve: ServeRequest, load: LoadRequest, host_costs: bool
                ) -> tuple[StepTime, _Inputs]:
    """The step-time model and the inputs (as keywords) that :func:`serve_load` and
    :func:`serve_snapshot` simulate."""
    m, hw = serve.model, serve.hardware
    limits = scheduler_limits(hw)
    draft = load.draft_model
    if draft is not None:
        if draft.vocab != m.vocab:
            raise EngineError(f"A draft model shares its target's tokenizer: {draft.name} has "
                              f"a vocabulary of {draft.vocab:,}, {m.name} {m.vocab:,}.",
                              "draft_model")
        architecture.check_tensor_parallel(draft, serve.tp, "draft_model")
    blocks = kv_cache_blocks(m, hw, weight_format=serve.weight_format,
                             kv_format=serve.kv_format, gpus=serve.tp,
                             max_running=limits.max_running, block_tokens=limits.block_tokens,
                             draft=draft)
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
    longest = max(p + o - 1 for p, o in zip(prompts, outputs, strict=True)) + load.spec_tokens
    prefix = (PrefixCache(load.prefix_tokens, load.prefix_hit) if load.prefix_tokens
              else None)
    shared = (prefix.shared_blocks(limits.block_tokens)
              if prefix is not None and prefix.hit > 0 else 0)
    if shared and shared + blocks_for(longest, limits.block_tokens) > blocks:
        raise EngineError(f"The shared prefix's {load.prefix_tokens:,} tokens and a request "
                          f"of {longest:,} do not fit the KV cache of "
                          f"{blocks * limits.block_tokens:,} tokens together; give a shorter "
                          "prefix or more GPUs.", "prefix_tokens")
    if blocks_for(longest, limits.block_tokens) > blocks:
        raise EngineError(f"A request of {longest:,} tokens (prompt and answer) does not fit "
                          f"the KV cache of {blocks * limits.block_tokens:,} tokens; give "
                          "shorter lengths or more GPUs.", "prompt_tokens")
    arrivals = poisson_arrivals(rng, load.rate, n) if load.rate is not None else None
    step = step_time_model(m, hw, weight_format=serve.weight_format, kv_format=serve.kv_format,
                           gpus=serve.tp, host_costs=host_costs, scheduling=load.scheduling,
                           ep=serve.ep)
    return step, {
        "prompts": prompts, "outputs": outputs, "concurrency": load.concurrency,
        "arrivals": arrivals, "replicas": serve.replicas, "max_running": limits.max_running,
        "max_batched_tokens": limits.max_batched_tokens, "kv_blocks": blocks,
        "block_tokens": limits.block_tokens,
        "spec": (spec_decode(step, tokens=load.spec_tokens, acceptance=load.spec_accept,
                             draft=draft) if load.spec_tokens else None),
        "prefix": prefix}
