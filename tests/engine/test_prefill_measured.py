"""Serving's expected prefill against this project's own H200 prefill measurements.

Every case is one line of bench/measured/ (plain PyTorch, bf16, eager prefill, SDPA
attention, one NVIDIA H200): Llama 3.1 8B shapes in h200-2026-11-30.json
(llama_8b_shaped) and h200-2026-11-30-short-prefill.json (llama_8b_short_prefill), 70B
shapes in h200-2026-11-30-70b-long-context.json (llama_70b_shaped). A tuned stack is at
least as fast as plain PyTorch, so the band is two-sided but loose: within 15 % of each.
``pytest -s`` prints the table of modelled times and errors.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.expected_serving import expected_serve
from engine.numbers.training_ops import StepShape, forward_ops

BAND = 0.15

# (file, key, model, batch, prompt tokens, measured ms)
MEASURED_PREFILLS = (
    ("h200-2026-11-30-short-prefill.json", "prefill_b1_t16_ms", "llama-3.1-8b", 1, 16, 7.25),
    ("h200-2026-11-30-short-prefill.json", "prefill_b1_t128_ms", "llama-3.1-8b", 1, 128, 7.25),
    ("h200-2026-11-30-short-prefill.json", "prefill_b1_t512_ms", "llama-3.1-8b", 1, 512, 13.8),
    ("h200-2026-11-30-short-prefill.json", "prefill_b1_t1024_ms", "llama-3.1-8b", 1, 1024,
     25.48),
    ("h200-2026-11-30.json", "prefill_b1_t2048_ms", "llama-3.1-8b", 1, 2048, 50.41),
    ("h200-2026-11-30.json", "prefill_b1_t8192_ms", "llama-3.1-8b", 1, 8192, 225.47),
    ("h200-2026-11-30.json", "prefill_b8_t2048_ms", "llama-3.1-8b", 8, 2048, 408.69),
    ("h200-2026-11-30-70b-long-context.json", "prefill_b1_t2048_ms", "llama-3.1-70b", 1, 2048,
     465.49),
)


def _modelled_ms(model: str, batch: int, prompt_tokens: int) -> float:
    e = expected_serve(get_model(model), get_hardware("h200"), prompt_tokens=prompt_tokens,
                       output_tokens=1, batch=batch)
    return e.prefill_seconds * 1e3


def test_expected_prefill_within_band_of_every_h200_measurement() -> None:
    rows = []
    for file, key, model, batch, tokens, measured_ms in MEASURED_PREFILLS:
        modelled_ms = _modelled_ms(model, batch, tokens)
        rows.append((file, key, model, measured_ms, modelled_ms, modelled_ms / measured_ms - 1))
    print()
    for file, key, model, measured_ms, modelled_ms, error in rows:
        print(f"{file} {key} {model}: measured {measured_ms:.2f} ms, modelled "
              f"{modelled_ms:.2f} ms, error {error:+.1%}")
    for file, key, _, measured_ms, modelled_ms, _ in rows:
        assert modelled_ms == pytest.approx(measured_ms, rel=BAND), (file, key)


def test_the_measured_files_hold_the_listed_figures() -> None:
    root = Path(__file__).resolve().parents[2] / "bench" / "measured"
    for file, key, model, _, _, measured_ms in MEASURED_PREFILLS:
        data = json.loads((root / file).read_text())
        section = {"llama-3.1-8b": ("llama_8b_shaped", "llama_8b_short_prefill"),
                   "llama-3.1-70b": ("llama_70b_shaped",)}[model]
        held = [data[s][key] for s in section if s in data and key in data[s]]
        assert held == [measured_ms], (file, key)


def test_forward_ops_are_training_forward_with_the_head_on_the_last_tokens() -> None:
    m, hw = get_model("llama-3.1-8b"), get_hardware("h200")
    shape = StepShape(tokens=2 * 512, seq_len=512, tp=1, stage_layers=m.layers, pipeline=1,
                      ep=1, optimizer_shards=1, recompute="none")
    f = forward_ops(m, hw, shape, head_tokens=2)
    names = [o.name for o in f.ops]
    assert all("backward" not in n and "loss" not in n for n in names)
    head = next(o for o in f.ops if o.name == "matmul: output head (forward)")
    assert head.flops == 2.0 * 2 * m.hidden * m.vocab
    assert f.seconds == math.fsum(o.seconds for o in f.ops)
