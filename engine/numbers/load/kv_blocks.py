"""The KV cache of a simulated server as paged blocks (vLLM's PagedAttention): a request
holds ceil(tokens / block) blocks of ``block_tokens`` tokens each.

How many blocks a replica has comes from the engine's serving memory model
(:func:`engine.numbers.memory.serving_memory`): each GPU's capacity less its share of the
weights, the working space of a full step (``max_running`` sequences' logits, the prefill
chunk's buffers) and the runtime's fixed overhead, divided by the bytes of one block. A
block costs every layer's keys and values for its tokens (a sliding-window layer's blocks
are counted as a full layer's: vLLM's simplest allocator keeps them). With a speculative
decoding draft model on the same GPUs, its weights come out of that room and each block
holds the draft's keys and values for its tokens too.
"""

from __future__ import annotations

from engine.numbers import architecture
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.formats import FormatId
from engine.numbers.memory import kv_cache_bytes_per_token, serving_memory, weights_bytes


def blocks_for(tokens: int, block_tokens: int) -> int:
    """Blocks that hold ``tokens`` tokens."""
    return -(-tokens // block_tokens)


def kv_cache_blocks(model: ModelSpec, hardware: HardwareSpec, *, weight_format: FormatId,
                    kv_format: FormatId, gpus: int, max_running: int, block_tokens: int,
                    draft: ModelSpec | None = None) -> int:
    """KV-cache blocks of one replica of ``gpus`` tensor-parallel GPUs (0 when the weights
    and working space leave no room); ``draft``: a draft model served beside it."""
    mem = serving_memory(model, hardware, weight_format=weight_format, kv_format=kv_format,
                         context_tokens=block_tokens, batch=max_running, gpus=gpus)
    room = mem.capacity_bytes - (mem.per_gpu_bytes - mem.parts["kv_cache"])
    if draft is not None:
        room -= weights_bytes(draft.params, weight_format) / gpus
    if room <= 0:
        return 0
    block_bytes = (kv_cache_bytes_per_token(model, kv_format)
                   * architecture.kv_replication(model, gpus) * block_tokens)
    if draft is not None:
        block_bytes += (kv_cache_bytes_per_token(draft, kv_format)
                        * architecture.kv_replication(draft, gpus) * block_tokens)
    return int(room * gpus // block_bytes)
