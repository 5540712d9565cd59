"""What a plan's expected speed costs per million tokens at its price per GPU-hour.

Both figures take the expected speed (a tuned stack), not the bound, so a training run and a
service on the same GPU compare like with like: the run at its expected tokens/s, the service
with its replicas' decode kept busy at the plan's batch (every slot generating, no idle time
between requests, prefill left out). None when the plan has no price or is the other task.
"""

from __future__ import annotations

from engine.numbers.cost import TokenCost, cost_per_million_tokens
from engine.numbers.memory import ServingMemory
from engine.numbers.plan import Plan


def train_expected_cost(p: Plan) -> TokenCost | None:
    """USD per million tokens trained at the run's expected tokens/s on all its GPUs."""
    if p.usd_per_gpu_hour is None or p.train is None:
        return None
    return cost_per_million_tokens(tokens_per_s=p.train.expected.tokens_per_s,
                                   usd_per_gpu_hour=p.usd_per_gpu_hour, gpus=p.gpus)


def serve_busy_tokens_per_s(p: Plan) -> float | None:
    """Output tokens/s of every replica decoding its share of the plan's batch (the batch
    split over the replicas, rounded up, as the plan's throughputs count it) at the expected
    time per output token (None for a training plan)."""
    if p.serve is None or not isinstance(p.memory, ServingMemory):
        return None
    s = p.serve
    return s.replicas * p.memory.batch / s.expected.decode_seconds_per_token


def serve_expected_cost(p: Plan) -> TokenCost | None:
    """USD per million output tokens with the service kept busy at its batch
    (:func:`serve_busy_tokens_per_s`) on all its GPUs."""
    tokens_per_s = serve_busy_tokens_per_s(p)
    if p.usd_per_gpu_hour is None or tokens_per_s is None:
        return None
    return cost_per_million_tokens(tokens_per_s=tokens_per_s,
                                   usd_per_gpu_hour=p.usd_per_gpu_hour, gpus=p.gpus)
