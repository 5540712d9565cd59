"""Activations: what a training step keeps for its backward pass, per layer and per pipeline
stage, in bytes (Korthikanti et al. 2022, adapted to GQA, gated MLPs, mixtures of experts and
FlashAttention; the derivation is in :func:`layer_activations`' docstring).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import architecture
from engine.numbers.catalog import ModelSpec
from engine.numbers.records import Record
from engine.numbers.training_choices import Recompute

# Activations are kept in 16 bits; FlashAttention's softmax statistics (one log-sum-exp per
# query head per token) in fp32.
ACTIVATION_BYTES = 2.0
SOFTMAX_STATS_BYTES = 4.0


@dataclass(frozen=True, slots=True)
class LayerActivations(Record):
    """What one transformer layer keeps for its backward pass, per GPU, in bytes.

    ``norms`` (the input of each norm), ``attention`` (the inputs of the QKV and output
    projections, Q, K and V: what the attention core's backward reads), ``softmax_stats``
    (FlashAttention's log-sum-exp, or the s x s scores and their dropout mask of standard
    attention), ``mlp`` (the MLP's inputs and intermediates), ``dropout_masks`` (one byte
    per number after attention and after the MLP; zero without dropout).
    """

    norms: float
    attention: float
    softmax_stats: float
    mlp: float
    dropout_masks: float

    @property
    def total(self) -> float:
        return (self.norms + self.attention + self.softmax_stats + self.mlp
                + self.dropout_masks)


def _mlp_width(model: ModelSpec) -> float:
    """The MLP width one token passes through, averaged over the layers: a mixture of
    experts runs each token through its top-k routed experts and the shared ones (each
    keeps its own intermediates), dense layers through the dense MLP."""
    m = model
    if not m.is_moe:
        return float(m.ffn)
    moe = m.moe_ffn * (m.experts_per_token + m.shared_experts)
    return (m.dense_layers * m.ffn + (m.layers - m.dense_layers) * moe) / m.layers


def layer_activations(model: ModelSpec, *, seq_len: int, micro_batch: int,
                      recompute: Recompute, tp: int = 1, flash_attention: bool = True,
                      dropout: bool = False) -> LayerActivations:
    """Bytes one layer keeps for the backward pass, per GPU (Korthikanti et al. 2022,
    'Reducing Activation Recomputation in Large Transformer Models', section 4), adapted
    to the model's shapes.

    The paper's GPT layer (h hidden, a heads, a 4h GELU MLP, dropout) keeps, per token of
    s x b, in bytes: the two LayerNorm inputs 4h; attention 11h (QKV input 2h, Q and K 4h,
    V 2h, output-projection input 2h, dropout mask h) + 5as (scores 2as, their dropout mask
    as, the dropped-out probabilities 2as); MLP 19h (input 2h, GELU input 8h, GELU output
    8h, dropout mask h): s*b*h*(34 + 5*a*s/h). Adapted here:

    - Attention with Q, K and V of their own widths: GQA's K and V have kv_heads x head_dim
      (Llama 3.1 8B: 1,024 of 4,096), MLA's its per-head key and value widths. Attention
      bytes = 2 x (h + q + k + v + o) per token, q/o the query and output widths.
    - FlashAttention (``flash_attention``, the default: what every run modelled here used)
      keeps no s x s scores: only one fp32 log-sum-exp per query head per token, 4 x a bytes
      per token. Standard attention keeps the paper's 5 x a x s bytes per token.
    - The MLP of width f keeps its input 2h; a GELU MLP the activation's input and output
      (2f + 2f, the paper's 8h + 8h at f = 4h); a gated (SwiGLU) MLP the gate and up
      projections' outputs, which the backward of SiLU(gate) x up reads, and their product,
      the down projection's input (2f + 2f + 2f = 6f; SiLU itself is recomputed, as
      Megatron-LM's fused SwiGLU does). A mixture of experts: f = the widths of the experts
      a token visits (top-k routed + shared), averaged with the dense layers.
    - No dropout by default (Llama 3 and MPT pretrained without it): ``dropout`` adds the
      paper's two 1-byte masks (2h per token) and, with standard attention, the scores' mask.

    Llama 3.1 8B (h 4,096, K and V 1,024 wide, f 14,336 = 3.5h, 32 heads): norms 4h +
    attention 2 x (h + h + h/4 + h/4 + h) = 7h + MLP 2h + 6 x 3.5h = 23h: 34h per token
    (the paper's figure, by coincidence), plus 4 x 32 = 128 bytes of statistics.

    Tensor parallelism with sequence parallelism (Megatron-LM, and Meta's Llama 3 runs)
    splits every part over ``tp`` GPUs: norms and dropout along the sequence, attention and
    MLP along the heads and the MLP width (K and V stored tp / kv_heads times when the GPUs
    outnumber the KV heads).

    ``recompute``: 'none' keeps all of the above; 'selective' (the paper's definition)
    recomputes the attention core from Q, K and V, so drops the softmax statistics or
    scores (with FlashAttention that is what its backward does anyway, bar the statistics),
    and for MLA also the up-projections to Q, K and V from their latents, as DeepSeek-V3
    trains (DeepSeek-AI 2024, 'DeepSeek-V3 Technical Report', section 3.2.3: "we recompute
    all RMSNorm operations and MLA up-projections during back-propagation");
    'selective-op' (torchtitan's per-op policy) keeps the layer's input, the outputs of
    every other matmul and attention's output and statistics, recomputing the rest;
    'full' keeps only each layer's input, 2h per token (/ tp: sequence-parallel).
    """
    m = model
    t = tp
    tokens = seq_len * micro_batch
    h = m.hidden
    if recompute == "full":
        # The layer's input is its first norm's input.
        return LayerActivations(ACTIVATION_BYTES * tokens * h / t, 0.0, 0.0, 0.0, 0.0)
    qk, vd = architecture.attention_head_dims(m)
    kv_copies = 1.0 if m.attention == "mla" else architecture.kv_replication(m, t)
    q, o = m.heads * qk, m.heads * vd
    k, v = m.kv_heads * qk * kv_copies, m.kv_heads * vd * kv_copies
    f = _mlp_width(m)
    norms = ACTIVATION_BYTES * 2 * h
    attention = ACTIVATION_BYTES * (h + q + k + v + o)
    if m.attention == "mla" and recompute == "selective":
        # DeepSeek-V3 recomputes MLA's up-projections in the backward pass: it keeps the
        # latents they read (the query's and the keys' and values' with the rotary key)
        # instead of the per-head Q, K and V.
        latents = m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim
        attention = ACTIVATION_BYTES * (h + latents + o)
    if recompute == "selective-op":
        return _op_policy_activations(m, tokens / t, o)
    mlp = ACTIVATION_BYTES * (h + (3 if m.gated_mlp else 2) * f)
    masks = 2.0 * h if dropout else 0.0
    if recompute == "selective":
        stats = 0.0
    elif flash_attention:
        stats = SOFTMAX_STATS_BYTES * m.heads
    else:
        stats = (4.0 + (1.0 if dropout else 0.0)) * m.heads * seq_len
    return LayerActivations(norms * tokens / t, attention * tokens / t, stats * tokens / t,
                            mlp * tokens / t, masks * tokens / t)


def _op_policy_activations(m: ModelSpec, tokens: float, attention_out: int
                           ) -> LayerActivations:
    """What torchtitan's per-op checkpointing keeps per layer for ``tokens`` tokens (per
    GPU): the layer's input, the outputs of the matmuls it does not recompute
    (architecture.op_policy_recomputed), attention's output and its log-sum-exp."""
    again = architecture.op_policy_recomputed(m)
    attention = float(attention_out)
    mlp = 0.0
    for c in architecture.components(m):
        if c.scope == "model" or c.kind not in ("matmul", "router", "unassigned") \
                or c.name in again:
            continue
        width = c.cols * c.copies * c.active_fraction / m.layers  # averaged over the layers
        if c.name.startswith("attention."):
            attention += width
        else:
            mlp += width
    b = ACTIVATION_BYTES * tokens
    return LayerActivations(b * m.hidden, b * attention, SOFTMAX_STATS_BYTES * m.heads * tokens,
                            b * mlp, 0.0)


def activation_bytes_per_layer(model: ModelSpec, *, seq_len: int, micro_batch: int,
                               recompute: Recompute, tp: int = 1,
                               flash_attention: bool = True, dropout: bool = False) -> float:
    """Bytes one layer keeps for its backward pass, per GPU: :func:`layer_activations`'
    total (the paper's GPT with standard attention and dropout: s*b*h*(34 + 5*a*s/h)/t
    without recomputation, 34*s*b*h/t selective, 2*s*b*h/t full)."""
    return layer_activations(model, seq_len=seq_len, micro_batch=micro_batch,
                             recompute=recompute, tp=tp, flash_attention=flash_attention,
                             dropout=dropout).total


def micro_batches_in_flight(pp: int, interleave: int, micro_batches: int) -> float:
    """Micro-batches whose activations the first pipeline stage holds at its peak.

    1F1B (Narayanan et al. 2021): the first of ``pp`` stages runs pp forward passes before
    its first backward, so holds pp micro-batches; the interleaved schedule with v =
    ``interleave`` chunks per GPU (v > 1) runs more forward chunks first: pp + (pp - 1) / v
    micro-batches' worth (Korthikanti et al. 2022, section 4.2.3: L x (1 + (p - 1)/(p v))
    layers in all). Never more than the ``micro_batches`` of one step per data-parallel
    rank: with no more micro-batches than stages every forward pass runs before the first
    backward (Megatron-LM's schedule then warms up with all of them)."""
    warm = pp + (pp - 1) / interleave if interleave > 1 else pp
    return float(min(warm, micro_batches))


def _schedule_table(micro_batches: int, interleave: int, group: int) -> list[int]:
    """The model chunk of each forward pass of one rank, in order: Megatron-LM's schedule
    table (schedules.py, get_schedule_table), micro-batches taken ``group`` at a time, each
    group run through every chunk in turn, the last group as many as are left."""
    chunks: list[int] = []
    for start in range(0, micro_batches, group):
        size = min(group, micro_batches - start)
        for chunk in range(interleave):
            chunks.extend([chunk] * size)
    return chunks


def _peak_layers_held(pp: int, rank: int, interleave: int, micro_batches: int,
                      layers_of_chunk: list[float], group: int) -> float:
    """Most layer x micro-batch activations rank ``rank`` of ``pp`` holds at once in
    Megatron-LM's 1F1B schedule (interleaved when ``interleave`` > 1), each forward pass of
    chunk c adding ``layers_of_chunk[c]`` and its backward pass freeing them.

    Warm-up: pp - rank - 1 forward passes under 1F1B; interleaved, 2 (pp - rank - 1) +
    (v - 1) x ``group`` (schedules.py, get_pp_rank_microbatches), never more than all. Then
    one forward and one backward in turn, the backward passes running the same table with
    the chunks in reverse order; then the remaining backward passes.

    Past its warm-up the schedule repeats group by group, so more micro-batches only add
    more of the same: the peak is that of a step with a few full groups beyond the warm-up
    and the same last, partial group (:func:`_peak_of_schedule` runs the whole table)."""
    keep = (-(-(2 * pp + (interleave - 1) * group) // (group * interleave)) + 3) * group
    if micro_batches > keep + group:
        micro_batches = keep + micro_batches % group
    return _peak_of_schedule(pp, rank, interleave, micro_batches, layers_of_chunk, group)


def _peak_of_schedule(pp: int, rank: int, interleave: int, micro_batches: int,
                      layers_of_chunk: list[float], group: int) -> float:
    """:func:`_peak_layers_held` run through every micro-batch of the step."""
    table = _schedule_table(micro_batches, interleave, group)
    total = len(table)
    warm = min(pp - rank - 1 if interleave == 1
               else 2 * (pp - rank - 1) + (interleave - 1) * group, total)
    held = peak = 0.0
    for k in range(warm):
        held += layers_of_chunk[table[k]]
        peak = max(peak, held)
    for i in range(total - warm):
        held += layers_of_chunk[table[warm + i]]
        peak = max(peak, held)
        held -= layers_of_chunk[interleave - 1 - table[i]]
    return peak


def layers_in_flight_with_embedding_and_loss(pp: int, interleave: int, micro_batches: int,
                                             stage_layers: int, group: int | None = None,
                                             ) -> float:
    """Layer x micro-batch activations the fullest pipeline rank holds at its peak when the
    embedding and the loss each take one layer's place in the cut (the 'embedding-and-loss'
    pipeline split): ``stage_layers`` places per rank in ``interleave`` equal chunks, the
    first rank's first chunk one layer short (the embedding's place) and the last rank's
    last chunk too (the loss's). The ranks between hold chunks alike and rank 1 warms up
    longest of them, so the peak is the largest of ranks 0, 1 and pp - 1, each run through
    Megatron-LM's schedule (:func:`_peak_layers_held`). ``group``: the micro-batches each
    chunk runs in a row (None: Megatron-LM's default, pp, or all of them when a step has no
    more than pp; Meta's Llama 3 schedule tunes it below pp too)."""
    per_chunk = stage_layers / interleave
    if group is None:
        group = min(pp, micro_batches)
    peaks = []
    for rank in sorted({0, min(1, pp - 1), pp - 1}):
        layers = [per_chunk] * interleave
        if rank == 0:
            layers[0] -= 1
        if rank == pp - 1:
            layers[-1] -= 1
        peaks.append(_peak_layers_held(pp, rank, interleave, micro_batches, layers, group))
    return max(peaks)
