"""Memory in words: the assumptions and warnings of a serving or training memory record, the
KV-cache arithmetic written out, the sharding in a sentence, and where each training-state
convention and optimiser comes from (the sources quoted beside the numbers).

The records and their arithmetic are engine.numbers.memory's; nothing here computes a size
that is not already in the record (or the catalogue's model).
"""

from __future__ import annotations

from engine.numbers import architecture
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.server import default_memory_utilization, scheduler_limits
from engine.numbers.formats import FormatId, get_format
from engine.numbers.memory import (
    RUNTIME_OVERHEAD_BYTES,
    ServingMemory,
    TrainingMemory,
    kv_cache_bytes_per_token,
    kv_tokens_at_utilization,
)
from engine.numbers.parallelism import pipeline_cut
from engine.words.adapters_explained import adapter_setup_words
from engine.words.format import a_or_an, format_GB
from engine.words.labels import part_words
from engine.words.offload_explained import offload_memory_words
from engine.words.sharding import sharding_name, what_is_split

# How a serving KV cache is sized (engine.numbers.memory.kv_cache_room_bytes), said beside
# its figure wherever it is shown: the plans' and the dgx-1 simulation's rule.
KV_ROOM_RULE = ("all the memory the weights and a full step's working space leave (vLLM given the "
                "whole GPU)")

CONVENTION_SOURCES = {
    "mixed-16": "bf16 weights 2 + bf16 gradients 2 + fp32 master weights 4 (+ optimiser "
    "states): Rajbhandari et al. 2020, 'ZeRO', section 3.1 (2 + 2 + K bytes, K = 12 for "
    "Adam: 16 bytes). The engine's default.",
    "mixed-18": "bf16 weights 2 + fp32 gradients 4 + fp32 master weights 4: Megatron-LM "
    "docs 'Distributed Optimizer' (bf16 params, fp32 grads: 18 bytes with Adam); Hugging "
    "Face 'Model training anatomy' (6 + 4 + 8 = 18 bytes).",
    "mixed-20": "fp16 weights 2 + fp16 gradients 2 + fp32 gradient copy 4 + fp32 master 4: "
    "Megatron-LM docs 'Distributed Optimizer' (fp16 params, fp16 grads: 20 bytes with Adam); "
    "Smith et al. 2022, 'Megatron-Turing NLG 530B' (20 bytes per parameter).",
    "fp32": "fp32 weights 4 + fp32 gradients 4, no master copy (16 bytes with Adam).",
    "fp8": "mixed-16's bf16 weights 2 + bf16 gradients 2 + fp32 master weights 4, plus the "
    "fp8 copies of the weights and of their transposes, 1 + 1 (18 bytes with Adam): "
    "Transformer Engine casts each weight to fp8 once per optimiser step and keeps the copy "
    "for the step's micro-batches (its modules' is_first_microbatch argument), and Hopper's "
    "fp8 tensor cores take only the TN layout, so the backward pass needs the transposed "
    "copy too (Transformer Engine docs, 'Using FP8 with Transformer Engine'). Scaling "
    "factors and amax histories are a few numbers per tensor, left out.",
}
OPTIMIZER_SOURCES = {
    "adam": "Adam keeps two fp32 moments per parameter (4 + 4 bytes); Kingma & Ba 2015.",
    "adamw": "AdamW: as Adam, two fp32 moments (4 + 4 bytes); Loshchilov & Hutter 2019.",
    "adam-8bit": "8-bit Adam keeps both moments in 1 byte each; Dettmers et al. 2022, "
    "'8-bit Optimizers via Block-wise Quantization'.",
    "sgd-momentum": "SGD with momentum keeps one fp32 momentum (4 bytes).",
    "sgd": "Plain SGD keeps no optimiser state.",
}


def kv_cache_formula(model: ModelSpec, format_id: FormatId = "bf16") -> str:
    """The KV-per-token arithmetic in words, for assumptions and widgets."""
    b = get_format(format_id).bytes_per_number
    per = kv_cache_bytes_per_token(model, format_id)
    if model.attention == "mla":
        return (f"KV cache per token (MLA latent): ({model.kv_lora_rank} + "
                f"{model.qk_rope_head_dim}) × {model.layers} layers × {b:g} bytes = {per:,.0f} "
                "bytes (MLA caches a compressed latent, not full keys and values)")
    return (f"KV cache per token: 2 × {model.layers} layers × {model.kv_heads} KV heads × "
            f"{model.head_dim} head dim × {b:g} bytes = {per:,.0f} bytes")


def capacity_words(hw: HardwareSpec) -> str:
    """The one-line assumption behind a chip's capacity: which figure, and its source."""
    return (f"Capacity: {format_GB(hw.memory_bytes)} per {hw.name}, what a program can "
            f"allocate ({hw.memory_basis.rstrip('.')}). GB = 10^9 bytes.")


def memory_assumptions(mem: ServingMemory | TrainingMemory) -> tuple[str, ...]:
    """What a memory record rests on, one sentence each (the model's own notes last)."""
    if isinstance(mem, ServingMemory):
        return serving_assumptions(mem)
    return training_assumptions(mem)


def serving_assumptions(mem: ServingMemory) -> tuple[str, ...]:
    m = mem.model
    chunk = scheduler_limits(mem.hardware).max_batched_tokens
    fmt = get_format(mem.weight_format)
    out = [
        f"Weights: {m.params:,} parameters × {fmt.bytes_per_number:g} bytes "
        f"({fmt.id}) = {format_GB(mem.weights_bytes_total)}"
        + (f", split over {mem.gpus} GPUs" if mem.gpus > 1 else "") + ".",
        kv_cache_formula(m, mem.kv_format) + _kv_adjusted_words(mem)
        + f"; × {mem.context_tokens:,} tokens × batch {mem.batch} = "
        f"{format_GB(mem.kv_cache_bytes_total)}.",
        f"Activations: transient buffers for the {mem.activation_tokens:,} tokens in flight "
        f"(prefill chunks of at most {chunk:,}) × (2 × hidden + 2 × FFN "
        f"width) × 2 bytes, plus logits of batch × {m.vocab:,} vocabulary × 4 bytes.",
        serving_overhead_words(mem.hardware),
        capacity_words(mem.hardware),
        kv_room_words(mem),
    ]
    offloaded = offload_memory_words(mem)
    if offloaded:
        out.insert(1, offloaded)
    if mem.gpus > 1:
        out.append(f"Tensor parallel over {mem.gpus} GPUs: weights and KV cache split "
                   "evenly; activations and overhead counted in full on each GPU.")
        copies = architecture.kv_replication(m, mem.gpus)
        if copies > 1:
            out.append(f"More GPUs than KV heads: every GPU keeps at least one KV head, so "
                       f"the KV cache is stored {copies:g} times over.")
    if m.sliding_window:
        out.append(f"{m.name} uses {a_or_an(m.sliding_window)} {m.sliding_window:,}-token "
                   f"sliding window on some or all layers; those layers keep at most "
                   f"{m.sliding_window:,} tokens, so the KV cache averages "
                   f"{mem.kv_cache_bytes_per_token:,.0f} bytes per token at "
                   f"{mem.context_tokens:,} tokens of context.")
    out.extend(m.assumptions)
    return tuple(out)


def serving_overhead_words(hardware: HardwareSpec) -> str:
    """The serving runtime's allowance on ``hardware`` and where it comes from: a chip's
    measured one (its catalogue basis), else the server allowance, an assumption."""
    if hardware.serving_overhead_bytes is not None:
        return (f"Runtime overhead: {format_GB(hardware.serving_overhead_bytes)}, measured. "
                f"{hardware.serving_overhead_basis}")
    return (f"Runtime overhead: a fixed allowance of {format_GB(RUNTIME_OVERHEAD_BYTES)} per "
            "GPU for the CUDA context, cuBLAS workspaces and framework buffers (an assumption; "
            "real engines vary by about 0.5-3 GB).")


def kv_room_words(mem: ServingMemory) -> str:
    """The KV cache's room and its basis: 'Room for KV cache: 505,472 tokens in blocks of
    16: all the memory ...; vLLM's default gpu_memory_utilization of 0.9 would leave 64,816
    fewer.'"""
    limits = scheduler_limits(mem.hardware)
    chunk = limits.max_batched_tokens  # vLLM profiles a step of this many tokens
    share = default_memory_utilization().value
    fewer = mem.max_context_tokens_that_fit - kv_tokens_at_utilization(mem, share)
    return (f"Room for KV cache: {mem.max_context_tokens_that_fit:,} tokens in blocks of "
            f"{limits.block_tokens}: {KV_ROOM_RULE}; a full step is vLLM's profiling pass: "
            f"{limits.max_running:,} sequences' logits and {chunk:,} tokens "
            f"(max_num_batched_tokens); vLLM's default gpu_memory_utilization of {share:g} "
            f"would leave {fewer:,} fewer.")


def _kv_adjusted_words(mem: ServingMemory) -> str:
    """Why the per-token KV figure used differs from the full-attention one, if it does."""
    full = kv_cache_bytes_per_token(mem.model, mem.kv_format)
    if mem.kv_cache_bytes_per_token == full:
        return ""
    why = []
    if mem.model.sliding_window and mem.context_tokens > mem.model.sliding_window:
        why.append("the sliding window caps some layers")
    copies = architecture.kv_replication(mem.model, mem.gpus)
    if copies > 1:
        why.append(f"stored {copies:g} times over {mem.gpus} GPUs")
    return f"; {mem.kv_cache_bytes_per_token:,.0f} bytes per token here ({', '.join(why)})"


def serving_warnings(mem: ServingMemory) -> tuple[str, ...]:
    """What is doubtful about the request itself (a context beyond the model's maximum)."""
    if mem.context_tokens > mem.model.max_context:
        return (f"{mem.context_tokens:,} tokens is beyond {mem.model.name}'s maximum "
                f"context of {mem.model.max_context:,}.",)
    return ()


def training_assumptions(mem: TrainingMemory) -> tuple[str, ...]:
    m = mem.model
    if mem.adapter is not None:
        return (*adapter_setup_words(mem.adapter, m, mem.micro_batch, mem.seq_len,
                                     mem.recompute),
                "Data parallel: every GPU holds the whole frozen base and the adapters.",
                activation_words(mem),
                f"Runtime overhead: a fixed allowance of {format_GB(RUNTIME_OVERHEAD_BYTES)} "
                "per GPU (CUDA context, workspaces, communication buffers); an assumption.",
                capacity_words(mem.hardware), *m.assumptions)
    sums = " + ".join(f"{part_words(k)} {v:g}" for k, v in mem.bytes_per_param.items())
    out = [
        f"Training state per parameter ({mem.optimizer}, {mem.convention}): {sums} = "
        f"{mem.bytes_per_param_total:g} bytes. {CONVENTION_SOURCES[mem.convention]} "
        f"{OPTIMIZER_SOURCES[mem.optimizer]}",
        f"State: {m.params:,} parameters × {mem.bytes_per_param_total:g} bytes = "
        f"{format_GB(mem.state_bytes_total)} before sharding.",
        sharding_words(mem.sharding, mem.dp, mem.tp, mem.pp),
        activation_words(mem),
        f"Runtime overhead: a fixed allowance of {format_GB(RUNTIME_OVERHEAD_BYTES)} per "
        "GPU (CUDA context, workspaces, communication buffers); an assumption.",
        capacity_words(mem.hardware),
    ]
    out.extend(m.assumptions)
    return tuple(out)


def activation_words(mem: TrainingMemory) -> str:
    """The activation estimate in words: its source, what it assumes, how many layers and
    micro-batches the fullest pipeline stage holds."""
    m = mem.model
    kept = {"none": "everything the backward pass reads",
            "selective": "everything but the attention core, recomputed from Q, K and V",
            "selective-op": ("each layer's input, attention's output and every other "
                             "matmul's, the rest recomputed (torchtitan's per-op policy)"),
            "full": "only each layer's input, the rest recomputed"}[mem.recompute]
    if m.attention == "mla" and mem.recompute == "selective":
        kept = ("everything but the attention core and MLA's up-projections, recomputed from "
                "the latents as DeepSeek-V3 trains")
    mlp = "gated (SwiGLU)" if m.gated_mlp else "GELU"
    out = (f"Activations: Korthikanti et al. 2022 ('Reducing Activation Recomputation in Large "
           f"Transformer Models', section 4) adapted to {m.name}'s K and V widths and {mlp} "
           f"MLP; {mem.recompute} recomputation keeps {kept}; FlashAttention (no sequence × "
           f"sequence scores), 16-bit, no dropout; sequence {mem.seq_len:,} × micro-batch "
           f"{mem.micro_batch}")
    if mem.pp == 1:
        out += f" × {m.layers} layers"
    if mem.tp > 1:
        out += f", split over {mem.tp} tensor-parallel GPUs with sequence parallelism"
    schedule = (f"interleaved, {mem.interleave} chunks per GPU" if mem.interleave > 1
                else "1F1B")
    stage = pipeline_cut(m.layers, mem.pp, mem.pipeline_split).stage_places
    if mem.pp > 1 and mem.pipeline_split == "embedding-and-loss":
        out += (f"; {mem.pp} pipeline stages of {stage} places, the embedding and the loss "
                f"taking one each (the first and last stages one layer short), the fullest "
                f"holding {mem.micro_batches_in_flight * stage:.4g} layers' activations of one "
                f"micro-batch at its peak ({schedule}, Megatron-LM's warm-up; "
                f"{mem.micro_batches_per_step:,} micro-batches per step)")
    elif mem.pp > 1:
        out += (f"; {mem.pp} pipeline stages of up to {stage} layers (the embedding and output "
                f"layer's parameters counted with the layers), the first holding "
                f"{mem.micro_batches_in_flight:g} micro-batches in flight ({schedule}; "
                f"{mem.micro_batches_per_step:,} per step)")
    return out + "; embedding output, logits and loss not included."


def sharding_words(sharding: str, dp: int, tp: int, pp: int = 1) -> str:
    """What a sharding stage splits, over how many data-parallel GPUs, as one sentence (two
    for ZeRO-3 under a pipeline, which splits only what ZeRO-1 does)."""
    tp_words = f" Tensor parallel over {tp} GPUs divides everything by {tp}." if tp > 1 else ""
    if sharding == "none":
        return f"Replicated data parallel: every GPU holds the full state.{tp_words}"
    if sharding == "zero3" and pp > 1:
        return (f"ZeRO-3 under a pipeline: each stage keeps its weights gathered and its "
                f"gradients whole from the first micro-batch to the last (gathering them "
                f"for every micro-batch would repeat the traffic each time), so only the "
                f"optimiser states (master weights and moments) are split over the {dp} "
                f"data-parallel GPUs, as with ZeRO-1.{tp_words}")
    what = what_is_split(sharding) + (" (master weights and moments)" if sharding == "zero1"
                                      else "")
    return (f"{sharding_name(sharding)} (Rajbhandari et al. 2020): {what} split over the "
            f"{dp} data-parallel GPUs.{tp_words}")


def layout_does_not_fit_words(mem: TrainingMemory) -> str:
    """A training plan's warning when its layout does not fit: the times given are for a run
    that cannot start as laid out."""
    return (f"The layout does not fit: it needs {format_GB(mem.per_gpu_bytes)} per GPU of "
            f"{format_GB(mem.capacity_bytes)}, so its times are for a run that cannot start "
            "as laid out; shard the state or add pipeline stages or GPUs (answers.gpus says "
            "what would fit).")
