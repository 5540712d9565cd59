"""The decoding front (engine/numbers/load/decoding_front.py) keeps the oldest plain decodes
as counts in runs that keep no snapshot; a run keeping its fullest step schedules every
request one by one. Both must give the same run to the last bit: every step, latency and
count."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.load.load_request import load_request, serve_load
from engine.numbers.serve_request import ServeRequest, serve_request


def _serve(model: str = "llama-3.1-8b", hardware: str = "h100-sxm", gpus: int = 1,
           tp: int | None = None, prompt: int = 1024, output: int = 256) -> ServeRequest:
    return serve_request(get_model(model), get_hardware(hardware), gpus=gpus, serve_tp=tp,
                         batch=1, weight_format="bf16", kv_format="bf16",
                         context_tokens=8192, prompt_tokens=prompt, output_tokens=output)


CASES = [
    # dgx-1's capacity run: a closed loop at the batch its KV cache holds whole.
    (_serve(), {"concurrency": 397, "requests": 794}),
    # More at once than the cache holds: preemptions, so the front gives way.
    (_serve(), {"concurrency": 1000, "requests": 1500, "length_dist": "lognormal"}),
    (_serve(hardware="a100-80gb", prompt=4096, output=64),
     {"concurrency": 300, "requests": 600, "length_dist": "uniform"}),
    (_serve(), {"rate": 200, "requests": 400, "prefix_tokens": 1000, "prefix_hit": 0.5}),
    (_serve(gpus=2, tp=1), {"rate": 64, "requests": 300, "length_dist": "normal",
                            "scheduling": "overlapped"}),
    (_serve(model="mixtral-8x7b", gpus=2), {"concurrency": 128, "requests": 300}),
]


@pytest.mark.parametrize(("serve", "load"), CASES)
def test_a_run_with_the_front_is_the_run_without_it(serve: ServeRequest,
                                                    load: dict[str, object]) -> None:
    request = load_request(**load)  # type: ignore[arg-type]
    assert request is not None
    counted = serve_load(serve, request)
    one_by_one = serve_load(serve, request, fullest=True)
    assert counted == replace(one_by_one, fullest=None)
