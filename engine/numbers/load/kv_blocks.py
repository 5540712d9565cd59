"""The KV cache of a simulated server as paged blocks (vLLM's PagedAttention): a request
holds ceil(tokens / block) blocks of ``block_tokens`` tokens each.

How many blocks a replica has is the room the serving memory model gives a KV cache
(:func:`engine.numbers.memory.kv_cache_room_bytes`): each GPU's capacity less its share of
the weights, the working space of a full step (``max_running`` sequences' logits, the
buffers of the scheduler's token budget, as vLLM profiles it) and the runtime's fixed
overhead, in whole blocks; a plan's
``max_context_tokens_that_fit`` is the same room. A
block costs every layer's keys and values for its tokens (a sliding-window layer's blocks
are counted as a full layer's: vLLM's simplest allocator keeps them). With a speculative
decoding draft model on the same GPUs, its weights come out of that room and each block
holds the draft's keys and values for its tokens too.
"""

from __future__ import annotations

from engine.numbers import architecture
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.formats import FormatId
from engine.numbers.memory import (
    kv_blocks_that_fit,
    kv_cache_bytes_per_token,
    kv_cache_room_bytes,
    weights_bytes,
)


def blocks_for(tokens: int, block_tokens: int) -> int:
    """Blocks that hold ``tokens`` tokens."""
    return -(-tokens // block_tokens)


def kv_cache_blocks(model: ModelSpec, hardware: HardwareSpec, *, weight_format: FormatId,
                    kv_format: FormatId, gpus: int, max_running: int, block_tokens: int,
                    draft: ModelSpec | None = None) -> int:
    """KV-cache blocks of one replica of ``gpus`` tensor-parallel GPUs (0 when the weights
    and working space leave no room); ``draft``: a draft model served beside it."""
    room = kv_cache_room_bytes(model, hardware, weight_format=weight_format, gpus=gpus,
                               max_running=max_running)
    if draft is not None:
        room -= weights_bytes(draft.params, weight_format) / gpus
    block_bytes = (kv_cache_bytes_per_token(model, kv_format)
                   * architecture.kv_replication(model, gpus) * block_tokens)
    if draft is not None:
        block_bytes += (kv_cache_bytes_per_token(draft, kv_format)
                        * architecture.kv_replication(draft, gpus) * block_tokens)
    return kv_blocks_that_fit(room * gpus, block_bytes)
