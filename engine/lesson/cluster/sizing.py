"""What a job asks of the GPUs, from its settings alone: a serving job's memory per GPU
(:func:`serve_memory`, KV cache in bf16), a training job's (:func:`train_memory`) and a
training job's run (:func:`training_run_inputs`: its speed at a given MFU and its length).
Nothing here reads the cluster's state; the state, the parser of a state sent back and the
actions all size jobs through these, and a serving job's KV cache through
:func:`serve_kv_blocks`.
"""

from __future__ import annotations

from functools import lru_cache

from engine.lesson.cluster.models import model_named
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.compute import DEFAULT_TRAINING_SEQ_LEN, training_flops_per_token
from engine.numbers.formats import FormatId
from engine.numbers.load.kv_blocks import kv_cache_blocks
from engine.numbers.memory import ServingMemory, TrainingMemory, serving_memory, training_memory
from engine.numbers.training_choices import Optimizer, Recompute, Sharding
from engine.numbers.training_run import TrainingRunInputs, check_training_run

TRAINING_FORMAT = "bf16"  # mixed-precision training: the maths runs at the bf16 peak
KV_FORMAT: FormatId = "bf16"  # the simulation keeps every serving job's KV cache in bf16


def serve_memory(model: ModelSpec, hw: HardwareSpec, weight_format: FormatId,
                 context_tokens: int, batch: int, gpus: int) -> ServingMemory:
    """Memory per GPU of ``model`` served tensor parallel over ``gpus`` GPUs, for ``batch``
    requests of ``context_tokens`` tokens each."""
    return serving_memory(model, hw, weight_format=weight_format, kv_format=KV_FORMAT,
                          context_tokens=context_tokens, batch=batch, gpus=gpus)


def serve_kv_blocks(model: ModelSpec, hw: HardwareSpec, weight_format: FormatId,
                    gpus: int) -> tuple[int, int]:
    """(blocks, tokens a block) of the KV cache ``model`` gets tensor parallel over ``gpus``
    GPUs of ``hw`` (its memory that which the job finds free), by the served traffic's
    rule, vLLM's: all the memory its weights and the working space of a full step (vLLM's
    default limits on the chip) leave. The deployment's "room for N tokens" and the
    traffic's simulation are this one figure."""
    limits = scheduler_limits(hw)
    blocks = kv_cache_blocks(model, hw, weight_format=weight_format, kv_format=KV_FORMAT,
                             gpus=gpus, max_running=limits.max_running,
                             block_tokens=limits.block_tokens)
    return blocks, limits.block_tokens


def train_memory(model: ModelSpec, hw: HardwareSpec, gpus: int, sharding: Sharding,
                 optimizer: Optimizer, recompute: Recompute, seq_len: int, micro_batch: int
                 ) -> TrainingMemory:
    """Memory per GPU of training ``model`` data parallel over ``gpus`` GPUs, its state
    sharded by ``sharding``."""
    return training_memory(model, hw, gpus=gpus, sharding=sharding, optimizer=optimizer,
                           recompute=recompute, seq_len=seq_len, micro_batch=micro_batch)


@lru_cache(maxsize=256)
def training_run_inputs(model_id: str, tokens: float, gpus: int, hardware_id: str, mfu: float,
                        recompute: Recompute, seq_len: int) -> TrainingRunInputs:
    """The run at ``mfu`` (model FLOPs: recomputation does not change the speed at a given
    MFU, it raises the hardware FLOPs the GPUs execute). EngineError if the run is out of
    range (its length, or an MFU the recomputation makes impossible)."""
    model = model_named(model_id)
    system_gpu = get_hardware(hardware_id)
    per_token = training_flops_per_token(model, seq_len or DEFAULT_TRAINING_SEQ_LEN, recompute)
    per_token.hardware_utilisation(mfu)
    return check_training_run(TrainingRunInputs(
        params=model.params, tokens=tokens, gpus=gpus,
        peak_flops_per_s=system_gpu.peak_flops_per_s(TRAINING_FORMAT), mfu=mfu,
        flops_per_token=per_token.model, vocab=model.vocab,
    ))
