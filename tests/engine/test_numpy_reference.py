"""An independent, vectorised numpy reimplementation of the core formulas, checked against
the engine over >= 10,000 random configurations. Only raw catalogue data (shapes, peaks,
bandwidths) is shared; every formula is written again here."""

import numpy as np
import pytest

from engine.numbers.catalog import list_hardware, list_models
from engine.numbers.compute import training_seconds
from engine.numbers.memory import kv_cache_bytes_per_token, training_memory, weights_bytes
from engine.numbers.roofline import ridge_point
from engine.numbers.serving import decode_step

N = 10_000
BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5,
         "fp4": 4.5 / 8, "q4_0": 18 / 32, "q4_k_m": 4.84 / 8, "q8_0": 34 / 32}
# The maths each stored format runs in, best first (int4 is weight-only: dequantised to
# 16 bits; llama.cpp's q-formats multiply on int8 units where the chip has them).
MATH = {"fp32": ("fp32",), "bf16": (), "fp16": ("fp16",), "fp8": ("fp8",), "int8": ("int8",),
        "int4": (), "fp4": ("fp4",), "q4_0": ("int8", "fp16"), "q4_k_m": ("int8", "fp16"),
        "q8_0": ("int8", "fp16")}
FMTS = list(BYTES)
SHARD = ["none", "zero1", "zero2", "zero3"]


def _peak(h, fmt):
    peaks = dict(h.peaks)
    for key in (*MATH[fmt], "bf16", "fp16", "fp32"):
        if key in peaks:
            return peaks[key]
    return h.peaks[0][1]


def _norm_and_lookup_params(m):
    """Weights that cost no FLOPs per token: the input embedding and position tables, norms."""
    per_norm = m.hidden * (2 if m.norm == "layernorm" else 1)
    norms = (m.layers * m.norms_per_layer + 1) * per_norm
    if m.attention == "mla":
        norms += m.layers * (m.q_lora_rank + m.kv_lora_rank)
    return m.vocab * m.hidden + m.learned_positions * m.hidden + norms


def _forward_flops(m):
    head = 2 * m.vocab * m.hidden if m.tied_embeddings else 0
    return 2 * (m.active_params - _norm_and_lookup_params(m)) + head


def _tp_ok(m, g):
    return m.heads % g == 0 and (m.attention == "mla" or m.kv_heads % g == 0
                                 or g % m.kv_heads == 0)


@pytest.fixture(scope="module")
def configs():
    rng = np.random.default_rng(20240607)
    models = list_models()
    chips = list_hardware()
    return {
        "m": rng.integers(0, len(models), N), "h": rng.integers(0, len(chips), N),
        "f": rng.integers(0, len(FMTS), N), "kvf": rng.integers(0, len(FMTS), N),
        "ctx": rng.integers(0, 200_000, N), "batch": rng.integers(1, 512, N),
        "gpus": 2 ** rng.integers(0, 7, N), "shard": rng.integers(0, 4, N),
        "tokens": 10 ** rng.uniform(9, 13.5, N), "mfu": rng.uniform(0.05, 0.9, N),
        "models": models, "chips": chips,
    }


def test_reference_agrees(configs):
    c = configs
    models, chips = c["models"], c["chips"]
    # Raw data, gathered per configuration.
    P = np.array([models[i].params for i in c["m"]], dtype=float)
    R = np.array([models[i].routed_params for i in c["m"]], dtype=float)
    E = np.array([models[i].experts for i in c["m"]], dtype=float)
    K = np.array([models[i].experts_per_token for i in c["m"]], dtype=float)
    L = np.array([models[i].layers for i in c["m"]], dtype=float)
    KVH = np.array([models[i].kv_heads for i in c["m"]], dtype=float)
    HD = np.array([models[i].head_dim for i in c["m"]], dtype=float)
    H = np.array([models[i].heads for i in c["m"]], dtype=float)
    MLA = np.array([models[i].attention == "mla" for i in c["m"]])
    LAT = np.array([models[i].kv_lora_rank + models[i].qk_rope_head_dim for i in c["m"]],
                   dtype=float)
    FWD = np.array([_forward_flops(models[i]) for i in c["m"]], dtype=float)
    HID = np.array([models[i].hidden for i in c["m"]], dtype=float)
    VOCAB = np.array([models[i].vocab for i in c["m"]], dtype=float)
    UNTIED = np.array([not models[i].tied_embeddings for i in c["m"]], dtype=float)
    POS = np.array([models[i].learned_positions for i in c["m"]], dtype=float)
    QKV = np.array([(models[i].qk_nope_head_dim + models[i].qk_rope_head_dim
                     + models[i].v_head_dim) if models[i].attention == "mla"
                    else 2 * models[i].head_dim for i in c["m"]], dtype=float)
    WIN = np.array([models[i].sliding_window for i in c["m"]], dtype=float)
    LOC = np.array([models[i].local_layers or models[i].layers for i in c["m"]], dtype=float)
    OK = np.array([_tp_ok(models[i], int(g)) for i, g in zip(c["m"], c["gpus"], strict=True)])
    BW = np.array([chips[i].bandwidth_bytes_per_s for i in c["h"]])
    CAP = np.array([chips[i].memory_bytes for i in c["h"]])
    fmts = [FMTS[i] for i in c["f"]]
    kvfs = [FMTS[i] for i in c["kvf"]]
    WB = np.array([BYTES[f] for f in fmts])
    KB = np.array([BYTES[f] for f in kvfs])
    PEAK = np.array([_peak(chips[h], f) for h, f in zip(c["h"], fmts, strict=True)])
    BF16 = np.array([dict(chips[i].peaks)["bf16"] for i in c["h"]])
    ctx, b, g = c["ctx"].astype(float), c["batch"].astype(float), c["gpus"].astype(float)

    weights = P * WB
    kv = np.where(MLA, LAT * L * KB, 2 * L * KVH * HD * KB)
    # The bound reads the experts a step's tokens reach, uniformly routed: a share
    # 1 - (1 - k/E)^tokens of each layer's (k/E for one token).
    touched = np.where(R > 0, 1.0 - (1.0 - K / np.where(R > 0, E, 1.0))
                       ** np.minimum(np.maximum(b, 1.0), 10_000.0), 1.0)
    # Looked-up tables (an untied input embedding, learned positions) are not streamed: each
    # token reads one row of each, at most the table's rows.
    table = (UNTIED * VOCAB + POS) * HID
    rows = UNTIED * np.minimum(b, VOCAB) + np.where(POS > 0, np.minimum(b, POS), 0.0)
    wread = ((P - table - R) + R * touched) * WB + rows * HID * WB
    # Layer-tokens of context attended: a sliding-window layer keeps at most its window.
    att = np.where(WIN > 0, LOC * np.minimum(ctx, WIN) + (L - LOC) * ctx, L * ctx)
    # More GPUs than KV heads: each keeps one head; MLA keeps its latent whole on each GPU.
    copies = np.where(MLA, g, np.ceil(KVH / g) * g / KVH)
    mem_s = (wread + b * att * kv / L * copies) / (g * BW)
    comp_s = b * (FWD + 2 * H * QKV * att) / (g * PEAK)
    decode = np.maximum(mem_s, comp_s)
    div = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float)[c["shard"]]
    state = P * (2 / np.where(div[:, 0] == 1, 1, g) + 2 / np.where(div[:, 1] == 1, 1, g)
                 + 12 / np.where(div[:, 2] == 1, 1, g))
    train_s = 6 * P * c["tokens"] / (g * BF16 * c["mfu"])
    ridge = BF16 / BW

    for i in range(N):
        m, h = models[c["m"][i]], chips[c["h"][i]]
        gi = int(c["gpus"][i])
        if not OK[i]:
            continue  # tensor parallelism needs whole heads on every GPU (tested elsewhere)
        assert weights_bytes(m.params, fmts[i]) == pytest.approx(weights[i], rel=1e-12)
        assert kv_cache_bytes_per_token(m, kvfs[i]) == pytest.approx(kv[i], rel=1e-12)
        d = decode_step(m, h, context_tokens=int(c["ctx"][i]), batch=int(c["batch"][i]),
                        weight_format=fmts[i], kv_format=kvfs[i], gpus=gi)
        assert d.seconds == pytest.approx(decode[i], rel=1e-9)
        t = training_memory(m, h, gpus=gi, sharding=SHARD[c["shard"][i]])
        assert t.state_bytes == pytest.approx(state[i], rel=1e-9)
        assert t.fits == (t.per_gpu_bytes <= CAP[i])
        assert training_seconds(6 * m.params * c["tokens"][i], gi, BF16[i], c["mfu"][i]
                                ) == pytest.approx(train_s[i], rel=1e-9)
        assert ridge_point(h, "bf16") == pytest.approx(ridge[i], rel=1e-12)
