"""Fine-tuning with adapters: the memory of LoRA and QLoRA on one GPU.

LoRA (Hu et al. 2021, 'LoRA: Low-Rank Adaptation of Large Language Models', section 4.1):
the pretrained weights stay frozen; each chosen d x k matrix gets a trainable update B A,
with B of d x r and A of r x k, so r (d + k) trainable parameters per matrix. Gradients and
optimiser states exist only for those. The frozen base stays in bf16 (2 bytes a parameter).

QLoRA (Dettmers et al. 2023, 'QLoRA: Efficient Finetuning of Quantized LLMs', section 3):
the frozen base's linear layers are stored in 4-bit NormalFloat (NF4) in blocks of 64, one
scale per block; double quantisation stores those scales in 8 bits with one fp32 scale per
256 of them: 4 + 8/64 + 32/(64 x 256) = 4.127 bits per parameter. The embeddings and the
output head stay in bf16 (the QLoRA code quantises only the layers' linear matrices).
Adapters go on every linear matrix of the layers (section 4: needed to match full
fine-tuning).

Both: each trainable parameter carries bf16 weight 2 + bf16 gradient 2 + Adam's two fp32
moments 4 + 4 = 12 bytes (the QLoRA code keeps the adapters in bf16, no fp32 master copy).
Activations remain: the gradient for an adapter in the first layer flows back through every
later layer, so the activations are those of full training (engine.numbers.memory,
Korthikanti et al. 2022), by default with full recomputation (gradient checkpointing, as the
QLoRA code does). Sizes in bytes; GB = 10^9 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import validate
from engine.numbers.adapter_setup import (
    METHODS,
    PLAN_TARGETS,
    TARGETS,
    AdapterSetup,
    Method,
    Targets,
)
from engine.numbers.architecture import shape_components
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.efficiency import training_defaults
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format
from engine.numbers.memory import (
    RUNTIME_OVERHEAD_BYTES,
    TrainingMemory,
    activation_bytes_per_layer,
)
from engine.numbers.parallelism import split_batch
from engine.numbers.records import JsonShape, Record
from engine.numbers.training_choices import Recompute

DEFAULT_TARGETS: dict[Method, Targets] = {"lora": "all-linear", "qlora": "all-linear"}
DEFAULT_RANK = 16

NF4_BITS = 4.0
NF4_BLOCK = 64  # weights per first-level scale (QLoRA section 3)
NF4_SCALE_BITS = 8.0  # first-level scales, themselves quantised to 8 bits
NF4_SCALE_BLOCK = 256  # first-level scales per fp32 second-level scale
FP32_BITS = 32.0
# 4 + 8/64 + 32/(64 x 256) = 4.127 bits: QLoRA section 3, 'Double Quantization'.
NF4_DQ_BITS_PER_PARAM = (NF4_BITS + NF4_SCALE_BITS / NF4_BLOCK
                         + FP32_BITS / (NF4_BLOCK * NF4_SCALE_BLOCK))

# Bytes per trainable adapter parameter: bf16 weight, bf16 gradient, Adam's fp32 moments.
ADAPTER_BYTES_PER_PARAM = {"weights": 2.0, "gradients": 2.0, "optimizer_states": 8.0}


def parse_method(value: object) -> Method:
    """``value`` as an adapter method, checked where it enters (a figure's keyword text)."""
    chosen = validate.choice(value, "method", METHODS)
    return next(m for m in METHODS if m == chosen)


def parse_targets(value: object) -> Targets:
    """``value`` as the matrices adapters go on, checked where it enters."""
    chosen = validate.choice(value, "targets", tuple(TARGETS))
    return next(t for t in TARGETS if t == chosen)


def parse_plan_targets(value: object) -> Targets:
    """``value`` as the plan's short name for the targets (attn, mlp, all), checked where it
    enters."""
    chosen = validate.choice(value, "targets", tuple(PLAN_TARGETS))
    return PLAN_TARGETS[chosen]


def adapter_params(model: ModelSpec, rank: int = DEFAULT_RANK,
                   targets: Targets = "all-linear") -> int:
    """Trainable parameters of rank-``rank`` adapters on ``targets``: r (d + k) per d x k
    matrix, summed over the layers (GPT-3 175B, r = 1 on query and value: 4.7 million, the
    LoRA paper's Table 4)."""
    m, r = model, rank
    names = TARGETS[targets]
    if m.experts > 1 or m.attention == "mla":
        raise EngineError(f"Adapters are counted for dense models with ordinary attention; "
                          f"{m.name} is not one.", "model")
    return sum(r * (c.rows + c.cols) * c.copies
               for c in shape_components(m) if c.name in names)


def frozen_base_bytes(model: ModelSpec, method: Method = "lora") -> float:
    """The frozen base: all in bf16 for LoRA; for QLoRA the layers' linear matrices in NF4
    with double quantisation (4.127 bits), the embeddings, norms and head in bf16."""
    m, meth = model, method
    bf16 = get_format("bf16").bytes_per_number
    if meth == "lora":
        return m.params * bf16
    quantised = sum(c.params for c in shape_components(m)
                    if c.kind == "matmul" and c.scope != "model")
    return quantised * NF4_DQ_BITS_PER_PARAM / 8.0 + (m.params - quantised) * bf16


@dataclass(frozen=True, slots=True)
class AdapterMemory(Record):
    """Memory of one GPU fine-tuning ``model`` with adapters: ``parts`` (name -> bytes) and
    the verdict; ``trainable_params`` the adapters' parameters."""

    JSON = JsonShape(ids=("model", "hardware"))

    model: ModelSpec
    hardware: HardwareSpec
    method: Method
    rank: int
    targets: Targets
    seq_len: int
    micro_batch: int
    recompute: str
    trainable_params: int
    parts: dict[str, float]
    per_gpu_bytes: float
    capacity_bytes: float
    fits: bool
    headroom_bytes: float


def adapter_memory(
    model: ModelSpec,
    hardware: HardwareSpec,
    *,
    method: Method = "lora",
    rank: int = DEFAULT_RANK,
    targets: Targets | None = None,
    seq_len: int = 4096,
    micro_batch: int = 1,
    recompute: Recompute = "full",
) -> AdapterMemory:
    """Memory on one GPU to fine-tune ``model`` with LoRA or QLoRA adapters: frozen base +
    adapters' weights, gradients and optimiser states + activations + runtime overhead."""
    m, hw, meth, r, s, mb, rec = model, hardware, method, rank, seq_len, micro_batch, recompute
    tgt = DEFAULT_TARGETS[meth] if targets is None else targets
    trainable = adapter_params(m, r, tgt)
    parts = {"frozen_weights": frozen_base_bytes(m, meth)}
    parts.update({f"adapter_{k}": trainable * v for k, v in ADAPTER_BYTES_PER_PARAM.items()})
    parts["activations"] = m.layers * activation_bytes_per_layer(
        m, seq_len=s, micro_batch=mb, recompute=rec)
    parts["runtime_overhead"] = RUNTIME_OVERHEAD_BYTES
    total = sum(parts.values())
    cap = hw.memory_bytes
    return AdapterMemory(
        model=m, hardware=hw, method=meth, rank=r, targets=tgt, seq_len=s, micro_batch=mb,
        recompute=rec, trainable_params=trainable, parts=parts, per_gpu_bytes=total,
        capacity_bytes=cap, fits=total <= cap, headroom_bytes=cap - total,
    )


def adapter_setup(model: ModelSpec, method: Method, rank: int, targets: Targets
                  ) -> AdapterSetup:
    """The adapters' choices and their trainable parameters (:func:`adapter_params`)."""
    return AdapterSetup(method, rank, targets, adapter_params(model, rank, targets))


def adapter_training_memory(
    model: ModelSpec,
    hardware: HardwareSpec,
    *,
    gpus: int,
    method: Method,
    rank: int,
    targets: Targets,
    micro_batch: int,
    seq_len: int,
    recompute: Recompute,
    global_batch_tokens: float | None = None,
) -> TrainingMemory:
    """:func:`adapter_memory` (the same parts, the one computation) as the TrainingMemory of
    a plan: ``gpus`` data-parallel GPUs, each holding the whole frozen base and the adapters
    (no tensor or pipeline split, no sharding), each running its share of the global batch
    (``global_batch_tokens``, default the catalogue's) in micro-batches."""
    mem = adapter_memory(model, hardware, method=method, rank=rank, targets=targets,
                         seq_len=seq_len, micro_batch=micro_batch, recompute=recompute)
    global_tokens = (global_batch_tokens if global_batch_tokens is not None
                     else float(training_defaults().global_batch_tokens))
    per_step = split_batch(global_tokens, micro_batch * seq_len, gpus).accumulation
    state = mem.per_gpu_bytes - mem.parts["activations"] - mem.parts["runtime_overhead"]
    return TrainingMemory(
        model=model, hardware=hardware, gpus=gpus, tp=1, dp=gpus, pp=1, sharding="none",
        optimizer="adam", convention="mixed-16", micro_batch=micro_batch, seq_len=seq_len,
        recompute=recompute, interleave=1, micro_batches_per_step=per_step,
        micro_batches_in_flight=1.0, bytes_per_param=dict(ADAPTER_BYTES_PER_PARAM),
        parts=dict(mem.parts), per_gpu_bytes=mem.per_gpu_bytes,
        capacity_bytes=mem.capacity_bytes, fits=mem.fits, headroom_bytes=mem.headroom_bytes,
        state_bytes=state, state_bytes_total=state,
        adapter=AdapterSetup(method, rank, mem.targets, mem.trainable_params),
    )
