"""One basis for the time to first token at a batch: a request joining the others kept running.

The bound and the expected value describe the same workload: one prompt prefilled in the step
that also decodes the batch's other requests. One request on an idle server and the batch's
prompts all arriving together are separate, named quantities.
"""

from __future__ import annotations

import pytest
from widget_text import render, text_of

from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.expected_serving import expected_serve
from engine.numbers.load.step_time import PrefillChunk, step_time_model
from engine.numbers.plan import plan
from engine.numbers.serving import joining_prefill, prefill, running_context_tokens
from engine.words.expected import ttft_basis_words

CASES = [
    ("llama-3.1-8b", "h100-sxm", 1, 64, 1024, 256),
    ("llama-2-70b", "h200", 8, 1024, 2048, 128),
    ("mistral-7b", "a100-80gb", 1, 16, 8192, 512),
    ("mixtral-8x7b", "h100-sxm", 2, 32, 512, 64),
    ("gemma-2-9b", "h100-sxm", 1, 8, 6000, 100),
]


@pytest.mark.parametrize(("model", "hardware", "gpus", "batch", "prompt", "output"), CASES)
def test_the_bound_and_the_expected_ttft_are_one_workload(model: str, hardware: str, gpus: int,
                                                          batch: int, prompt: int,
                                                          output: int) -> None:
    p = plan(model=model, hardware=hardware, gpus=gpus, batch=batch, prompt_tokens=prompt,
             output_tokens=output, context_tokens=prompt + output)
    s = p.serve
    assert s is not None
    e = s.expected
    # No real system beats the bound of its own workload, and the idle server's is lower.
    assert s.ttft_at_batch_seconds <= e.ttft_seconds
    assert s.ttft_seconds <= s.ttft_at_batch_seconds
    assert e.ttft_idle_seconds <= e.ttft_seconds
    # The two describe one workload: the same order of size, not a whole batch's prefill.
    assert e.ttft_seconds < 4 * s.ttft_at_batch_seconds
    assert e.ttft_seconds < e.prefill_seconds
    assert s.joining.tokens == prompt + batch - 1
    assert s.joining.context_tokens == running_context_tokens(prompt, output)


@pytest.mark.parametrize(("model", "hardware", "gpus", "batch", "prompt", "output"), CASES)
def test_the_expected_ttft_is_the_servers_mixed_step(model: str, hardware: str, gpus: int,
                                                     batch: int, prompt: int,
                                                     output: int) -> None:
    """The simulated server's step of one prefill beside batch - 1 decodes, host time left out."""
    m, hw = get_model(model), get_hardware(hardware)
    e = expected_serve(m, hw, prompt_tokens=prompt, output_tokens=output, batch=batch,
                       gpus=gpus)
    step = step_time_model(m, hw, weight_format="bf16", kv_format="bf16", gpus=gpus,
                           host_costs=False)
    ctx = running_context_tokens(prompt, output)
    mixed = step.seconds([PrefillChunk(prompt, 0)], [ctx] * (batch - 1))
    assert e.ttft_seconds == pytest.approx(mixed, rel=1e-9)


def test_at_batch_one_every_basis_is_the_idle_server() -> None:
    m, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    join = joining_prefill(m, hw, prompt_tokens=1024, output_tokens=256)
    alone = prefill(m, hw, prompt_tokens=1024)
    assert (join.seconds, join.flops, join.bytes_read) == (alone.seconds, alone.flops,
                                                           alone.bytes_read)
    e = expected_serve(m, hw, prompt_tokens=1024, output_tokens=256)
    assert e.ttft_seconds == e.ttft_idle_seconds == e.prefill_seconds
    assert ttft_basis_words(1) == "one request on an idle server"


def test_llama_8b_on_an_h100_at_64_no_longer_waits_for_the_whole_batch() -> None:
    p = plan(model="llama-3.1-8b", hardware="h100-sxm", batch=64, prompt_tokens=1024,
             output_tokens=256, context_tokens=1280)
    s = p.serve
    assert s is not None
    # All 64 prompts at once took about 1.5 s; joining 63 running takes tens of ms.
    assert s.expected.prefill_seconds > 1.0
    assert 0.02 < s.expected.ttft_seconds < 0.06
    assert s.ttft_at_batch_seconds == pytest.approx(s.joining.seconds)


def test_the_json_names_each_basis() -> None:
    d = plan_to_dict(plan(model="llama-3.1-8b", hardware="h100-sxm", batch=64,
                          prompt_tokens=1024, output_tokens=256, context_tokens=1280))
    serve = d["serve"]
    assert isinstance(serve, dict)
    expected = serve["expected"]
    assert isinstance(expected, dict)
    assert serve["ttft_seconds"] < serve["ttft_at_batch_seconds"] < expected["ttft_seconds"]
    assert expected["ttft_idle_seconds"] < expected["ttft_seconds"] < expected["prefill_seconds"]
    for key in ("ttft_at_batch_seconds", "expected.ttft_seconds", "ttft_idle_seconds",
                "prefill_seconds"):
        assert key in str(serve["note"])


def test_the_playground_says_the_basis_of_its_first_token() -> None:
    text = text_of(render("playground", model="llama-3.1-8b", hardware="h100-sxm", batch="64",
                          task="serve"))
    assert "a request joining 63 running: its prompt read beside their decode step" in text
    assert "On an idle server" in text
    assert "all 64 prompts arriving together" in text


def test_step_10_says_the_basis_of_its_first_token() -> None:
    html = render("side_by_side", model="llama-3.1-8b", hardware="h100-sxm", batch="16")
    # In view, the workload the latency row is for; the why in the assumptions behind it.
    assert "Latency, a request joining 15 running: first token" in text_of(html.partition("<details")[0])
    assert ("the time to first token is for a request joining 15 running: its prompt read "
            "beside their decode step") in text_of(html)
    one = text_of(render("side_by_side", batch="1"))
    assert "Latency, one request on an idle server: first token" in one
