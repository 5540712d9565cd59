"""Figures from dgx-1's latency-throughput curve (:mod:`engine.lesson.dgx_curve`) for the
roofline step: what a bigger batch gives each GPU and costs each user, for the deployment
"Serve the model" makes by default (Llama 3.1 8B in bf16 on one of dgx-1's
H100s)."""

from __future__ import annotations

from functools import cache

from engine.lesson import cluster, dgx_curve, dgx_load
from engine.numbers import validate
from engine.words.format import format_tokens_per_s

MODEL = "llama-3.1-8b"
ENDS = ("one", "full")  # 1 request at a time; the full batch the KV cache holds whole


@cache
def _ends() -> tuple[dgx_curve.CurvePoint, dgx_curve.CurvePoint]:
    state = cluster.deploy(cluster.new_cluster("dgx-1"), MODEL, (0,), "bf16", 8192, 16).state
    job = dgx_load.serving_job(state)
    assert job is not None  # one model on an empty dgx-1 always fits
    points = dgx_curve.latency_curve(dgx_load.deployment(job, state.system.gpu))
    return points[0], points[-1]


def _end(at: object) -> dgx_curve.CurvePoint:
    first, last = _ends()
    return first if validate.choice(at, "at", ENDS) == "one" else last


def curve_batch() -> str:
    """The curve's last point, the requests at once its KV cache holds whole: '397'."""
    return f"{_end('full').concurrency:,}"


def curve_prompt() -> str:
    """Each request's prompt on the curve, in tokens: '1,024'."""
    return f"{dgx_load.PROMPT_TOKENS:,}"


def curve_output(at: object = "one") -> str:
    """Output tokens/s per GPU at one end of the curve: '147 tokens/s'."""
    return format_tokens_per_s(_end(at).output_tokens_per_s_per_gpu)


def curve_tpot(at: object = "one") -> str:
    """Each user's time per output token (p50) at one end of the curve: '6.74 ms'."""
    return dgx_curve.milliseconds(_end(at).tpot_p50_seconds)


LOAD_CURVE_FIGURES = (curve_batch, curve_prompt, curve_output, curve_tpot)
