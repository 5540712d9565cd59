"""Memory: weights, serving working space (KV cache, activations, overhead), training state.

All sizes in bytes (GB = 10^9 bytes). The assumptions each result rests on are written by
engine.words.memory_explained.
Serving: weights + KV cache + activations + runtime overhead must fit in each GPU's memory.
Training: weights + gradients + optimiser states (the 'state', 16 bytes per parameter for
Adam in mixed precision) + activations (Korthikanti et al. 2022) + runtime overhead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.numbers import architecture
from engine.numbers.activations import activation_bytes_per_layer as activation_bytes_per_layer
from engine.numbers.activations import (
    layers_in_flight_with_embedding_and_loss,
    micro_batches_in_flight,
)
from engine.numbers.adapter_setup import AdapterSetup
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.efficiency import training_defaults
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.formats import FormatId, get_format
from engine.numbers.parallelism import (
    check_context_split,
    check_expert_parallel,
    fullest_stage,
    split_batch,
)
from engine.numbers.records import JsonShape, Record
from engine.numbers.rounding import ceil_div

# The choices' tuples are re-exported: the fields and the simulation import them from here.
from engine.numbers.training_choices import CONVENTIONS as CONVENTIONS
from engine.numbers.training_choices import OPTIMIZERS as OPTIMIZERS
from engine.numbers.training_choices import RECOMPUTE as RECOMPUTE
from engine.numbers.training_choices import SHARDINGS as SHARDINGS
from engine.numbers.training_choices import (
    Convention,
    Optimizer,
    PipelineSplit,
    Recompute,
    Sharding,
)

# A fixed allowance for the CUDA context (about 0.5 GB on an H100), cuBLAS/cuDNN workspaces
# and the framework's own buffers. An assumption, stated in every result that uses it.
RUNTIME_OVERHEAD_BYTES = 1.5e9
LOGITS_BYTES = 4.0  # logits are kept in fp32


def serving_overhead_bytes(hardware: HardwareSpec) -> float:
    """The fixed memory a serving runtime takes on ``hardware`` beyond weights, KV cache and
    activations: the chip's own measured figure where the catalogue has one (a phone's
    llama.cpp), else the server allowance :data:`RUNTIME_OVERHEAD_BYTES`."""
    measured = hardware.serving_overhead_bytes
    return RUNTIME_OVERHEAD_BYTES if measured is None else measured

_OPT_STATES: dict[Optimizer, dict[str, float]] = {
    "adam": {"first_moment": 4.0, "second_moment": 4.0},
    "adamw": {"first_moment": 4.0, "second_moment": 4.0},
    "adam-8bit": {"first_moment": 1.0, "second_moment": 1.0},
    "sgd-momentum": {"momentum": 4.0},
    "sgd": {},
}
_CONVENTION_PARTS: dict[Convention, dict[str, float]] = {
    "mixed-16": {"weights": 2.0, "gradients": 2.0, "master_weights": 4.0},
    "mixed-18": {"weights": 2.0, "gradients": 4.0, "master_weights": 4.0},
    "mixed-20": {"weights": 2.0, "gradients": 2.0, "fp32_gradients": 4.0, "master_weights": 4.0},
    "fp32": {"weights": 4.0, "gradients": 4.0},
    # Transformer Engine's fp8 copy of each weight and of its transpose (the backward pass's
    # layout), kept for every micro-batch of the step.
    "fp8": {"weights": 2.0, "gradients": 2.0, "master_weights": 4.0, "fp8_weights": 2.0},
}
# Which sharding stage partitions each part: 1 = optimiser states, 2 = gradients, 3 = weights.
_ZERO_STAGE = {"weights": 3, "fp8_weights": 3, "gradients": 2, "fp32_gradients": 2}
_STAGE: dict[Sharding, int] = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3}
# Under a pipeline, ZeRO-3 keeps each stage's gathered 16-bit weights and its unsharded
# gradients from the first micro-batch to the last (gathering them again for every
# micro-batch would repeat the traffic dozens of times a step): only the master weights and
# the optimiser's moments stay sharded, as with ZeRO-1.
ZERO3_UNDER_PIPELINE = 1


def sharding_stage(sharding: Sharding, pp: int) -> int:
    """Which parts ``sharding`` partitions over the data-parallel GPUs (1 = optimiser states,
    2 = and gradients, 3 = and weights) on ``pp`` pipeline stages: ZeRO-3 under a pipeline
    partitions what ZeRO-1 does (:data:`ZERO3_UNDER_PIPELINE`; its source:
    catalog.efficiency.zero3_under_pipeline_source)."""
    if sharding == "zero3" and pp > 1:
        return ZERO3_UNDER_PIPELINE
    return _STAGE[sharding]


def weights_bytes(params: float, format_id: FormatId = "bf16") -> float:
    """Bytes of ``params`` numbers stored in ``format_id`` (8.03e9 x 2 = 16.06 GB)."""
    return params * get_format(format_id).bytes_per_number


def kv_cache_bytes_per_token(model: ModelSpec, format_id: FormatId = "bf16") -> float:
    """KV cache bytes for one token of context.

    GQA/MHA: 2 (key and value) x layers x KV heads x head_dim x bytes (131,072 B for
    Llama 3.1 8B in bf16). MLA (DeepSeek-V3): the compressed latent plus the shared RoPE
    key, (kv_lora_rank + qk_rope_head_dim) x layers x bytes, which is what MLA caches.
    """
    m = model
    b = get_format(format_id).bytes_per_number
    if m.attention == "mla":
        return float((m.kv_lora_rank + m.qk_rope_head_dim) * m.layers * b)
    return float(2 * m.layers * m.kv_heads * m.head_dim * b)


def kv_cache_bytes(model: ModelSpec, context_tokens: float, format_id: FormatId = "bf16"
                   ) -> float:
    """KV cache bytes of one request holding ``context_tokens`` tokens of context.

    Per layer per token x the tokens each layer keeps: all of them for full attention, at
    most the window for a sliding-window layer (Mistral 7B keeps 4,096 per layer at any
    context; Gemma 2 keeps 4,096 in its 21 local layers and the whole context in the rest).
    """
    per_layer_token = kv_cache_bytes_per_token(model, format_id) / model.layers
    return per_layer_token * architecture.attended_layer_tokens(model, context_tokens)


@dataclass(frozen=True, slots=True)
class ServingMemory(Record):
    """Memory of one GPU serving a model: ``parts`` (name -> bytes) and the verdict.

    ``headroom_bytes`` is capacity minus use (negative when it does not fit).
    ``kv_cache_bytes_per_token``: KV bytes per token of context at ``context_tokens``
    (averaged over the context, so lower than the full-attention rate for sliding-window
    models), times ``kv_replication`` copies when there are more GPUs than KV heads.
    ``max_context_tokens_that_fit``: tokens of KV cache the GPU(s) hold as a serving
    engine sizes its cache, whatever the batch (:func:`kv_cache_room_bytes`, in whole
    blocks of the scheduler's block size: the dgx-1 simulation's cache, for a model without
    sliding windows); ``max_concurrent_requests``: the most requests of ``context_tokens``
    that cache holds at once, each in whole blocks (a plan at that batch fits). ``host_weight_bytes``: the weights one replica leaves in host memory
    (layers offloaded, :mod:`engine.numbers.offload`), not in ``parts``; 0 without offload.
    """

    JSON = JsonShape(ids=("model", "hardware"), skip=("activation_tokens", "host_weight_bytes"))

    model: ModelSpec
    hardware: HardwareSpec
    weight_format: FormatId
    kv_format: FormatId
    context_tokens: int
    batch: int
    gpus: int
    parts: dict[str, float]
    per_gpu_bytes: float
    capacity_bytes: float
    fits: bool
    headroom_bytes: float
    kv_cache_bytes_per_token: float
    max_context_tokens_that_fit: int
    max_concurrent_requests: int
    activation_tokens: int
    host_weight_bytes: float = 0.0

    @property
    def weights_bytes_total(self) -> float:
        """The whole model's weights in ``weight_format`` before any split (bytes)."""
        return weights_bytes(self.model.params, self.weight_format)

    @property
    def kv_cache_bytes_total(self) -> float:
        """The KV cache of all ``batch`` requests of ``context_tokens`` tokens before any
        split (bytes)."""
        return self.kv_cache_bytes_per_token * self.context_tokens * self.batch

    def kv_tokens_that_fit(self, free_bytes: float) -> int:
        """Tokens of KV cache that ``free_bytes`` (free on each GPU before this deployment)
        hold once its weights and working space are loaded; its own KV cache counts as
        room. 0 when even the weights do not fit."""
        room = free_bytes - (self.per_gpu_bytes - self.parts["kv_cache"])
        if room <= 0:
            return 0
        return int(room * self.gpus // self.kv_cache_bytes_per_token)


def activation_bytes_serving(model: ModelSpec, tokens_in_flight: int, batch: int) -> float:
    """Transient serving buffers: tokens x (2 hidden + 2 FFN) x 2 bytes + logits (fp32)."""
    ffn = model.moe_ffn * (model.experts_per_token + model.shared_experts) if model.is_moe \
        else model.ffn
    return tokens_in_flight * (2 * model.hidden + 2 * ffn) * 2.0 + batch * model.vocab * LOGITS_BYTES


def serving_working_space_bytes(model: ModelSpec, *, max_running: int,
                                max_batched_tokens: int) -> float:
    """The working space a serving engine keeps on each GPU for its fullest step, whatever
    the requests of the moment (bytes): the buffers of ``max_batched_tokens`` tokens in
    flight and the logits of the sequences they are spread over (``max_running``, at most
    one a token). vLLM runs such a step at start-up (its profiling pass, of its scheduler's
    max_num_batched_tokens tokens over at most max_num_seqs requests, then the sampler on
    their logits) and gives its KV cache what is left."""
    return activation_bytes_serving(model, max_batched_tokens,
                                    min(max_running, max_batched_tokens))


def kv_cache_room_bytes(model: ModelSpec, hardware: HardwareSpec, *, weight_format: FormatId,
                        gpus: int, max_running: int | None = None,
                        host_weight_bytes: float = 0.0) -> float:
    """Bytes of each GPU a serving engine gives its KV cache, as vLLM sizes it: all the
    memory its share of the weights, :func:`serving_working_space_bytes` (at ``max_running``
    sequences, the scheduler's default on ``hardware`` when None) and the runtime overhead
    leave; negative when they do not fit. vLLM's default ``gpu_memory_utilization`` of 0.9
    would keep a tenth of the memory back as well."""
    limits = scheduler_limits(hardware)
    space = serving_working_space_bytes(
        model, max_running=limits.max_running if max_running is None else max_running,
        max_batched_tokens=limits.max_batched_tokens)
    weights = (weights_bytes(model.params, weight_format) - host_weight_bytes) / gpus
    return hardware.memory_bytes - weights - space - serving_overhead_bytes(hardware)


def kv_blocks_that_fit(room_bytes: float, block_bytes: float) -> int:
    """Whole KV-cache blocks of ``block_bytes`` bytes in ``room_bytes`` (0 when no room): a
    serving engine's cache is blocks of a fixed count of tokens, never part of one."""
    if room_bytes <= 0:
        return 0
    return int(room_bytes // block_bytes)


def serving_memory(
    model: ModelSpec,
    hardware: HardwareSpec,
    *,
    weight_format: FormatId = "bf16",
    kv_format: FormatId = "bf16",
    context_tokens: int = 8192,
    batch: int = 1,
    gpus: int = 1,
    host_weight_bytes: float = 0.0,
) -> ServingMemory:
    """Memory per GPU to serve ``model`` with ``batch`` requests of ``context_tokens`` each
    (at least one token) on ``gpus`` tensor-parallel GPUs (a split the model allows:
    :func:`engine.numbers.architecture.check_tensor_parallel`, checked where it enters),
    ``host_weight_bytes`` of the weights left in host memory (offloaded layers; at most
    the weights)."""
    m, hw, ctx, b, g = model, hardware, context_tokens, batch, gpus
    wf = get_format(weight_format)
    kf = get_format(kv_format)
    kv_token = (kv_cache_bytes(m, ctx, kf.id) / ctx if ctx else kv_cache_bytes_per_token(m, kf.id)
                ) * architecture.kv_replication(m, g)
    weights = (m.params * wf.bytes_per_number - host_weight_bytes) / g
    kv = kv_token * ctx * b / g
    limits = scheduler_limits(hw)
    # Prompts go through in chunks: at most the scheduler's token budget a step.
    in_flight = min(ctx * b, limits.max_batched_tokens)
    act = activation_bytes_serving(m, in_flight, b)
    overhead = serving_overhead_bytes(hw)
    parts = {"weights": weights, "kv_cache": kv, "activations": act,
             "runtime_overhead": overhead}

    def per_gpu(n: int) -> float:
        # n requests bring their KV cache and their own working space (a logits row each).
        act_n = activation_bytes_serving(m, min(ctx * n, limits.max_batched_tokens), n)
        return weights + kv_token * ctx * n / g + act_n + overhead

    total = per_gpu(b)
    cap = hw.memory_bytes
    block_tokens = limits.block_tokens
    room = kv_cache_room_bytes(m, hw, weight_format=wf.id, gpus=g,
                               host_weight_bytes=host_weight_bytes)
    max_tokens = kv_blocks_that_fit(room * g, kv_token * block_tokens) * block_tokens
    # A request holds whole blocks: its context rounded up to the block size.
    request_tokens = -(-ctx // block_tokens) * block_tokens

    return ServingMemory(
        model=m, hardware=hw, weight_format=wf.id, kv_format=kf.id, context_tokens=ctx,
        batch=b, gpus=g, parts=parts, per_gpu_bytes=total, capacity_bytes=cap,
        fits=total <= cap, headroom_bytes=cap - total, kv_cache_bytes_per_token=kv_token,
        max_context_tokens_that_fit=max_tokens,
        max_concurrent_requests=_most_that_fit(lambda n: per_gpu(n) <= cap,
                                               max_tokens // request_tokens),
        activation_tokens=in_flight, host_weight_bytes=host_weight_bytes,
    )


def _most_that_fit(fits: Callable[[int], bool], most: int) -> int:
    """The largest n from 0 to ``most`` with ``fits(n)`` (``fits`` holds up to some n and
    fails past it; 0 when even one does not fit), by bisection."""
    low, high = 0, most
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def kv_tokens_at_utilization(mem: ServingMemory, utilization: float) -> int:
    """``mem``'s ``max_context_tokens_that_fit`` had the serving engine used only
    ``utilization`` of each GPU's memory (vLLM's ``gpu_memory_utilization``)."""
    block_tokens = scheduler_limits(mem.hardware).block_tokens
    room = kv_cache_room_bytes(mem.model, mem.hardware, weight_format=mem.weight_format,
                               gpus=mem.gpus, host_weight_bytes=mem.host_weight_bytes)
    room -= (1.0 - utilization) * mem.capacity_bytes
    blocks = kv_blocks_that_fit(room * mem.gpus, mem.kv_cache_bytes_per_token * block_tokens)
    return blocks * block_tokens


def min_gpus_to_serve(mem: ServingMemory) -> int | None:
    """Fewest GPUs (tensor parallel) on which ``mem``'s workload fits; None if none can."""
    g = mem.gpus
    split = (mem.parts["weights"] + mem.parts["kv_cache"]) * g
    fixed = mem.parts["activations"] + mem.parts["runtime_overhead"]
    room = mem.capacity_bytes - fixed
    if room <= 0:
        return None
    need = max(1, ceil_div(split, room))
    for tp in range(need, 4 * need + 64):
        if not architecture.tensor_parallel_ok(mem.model, tp):
            continue
        copies = architecture.kv_replication(mem.model, tp) / architecture.kv_replication(
            mem.model, g)
        if mem.parts["weights"] * g + mem.parts["kv_cache"] * g * copies <= room * tp:
            return tp
    return None


# ---------------------------------------------------------------------------- training


def training_state_bytes_per_param(optimizer: Optimizer = "adam",
                                   convention: Convention = "mixed-16") -> dict[str, float]:
    """Bytes of training state per parameter, by part (16 for Adam in mixed precision:
    weights 2 + gradients 2 + master weights 4 + first moment 4 + second moment 4)."""
    out = dict(_CONVENTION_PARTS[convention])
    out.update(_OPT_STATES[optimizer])
    return out


def training_bytes_per_param(optimizer: Optimizer = "adam", convention: Convention = "mixed-16"
                             ) -> float:
    """All the training state per parameter, in bytes (16 for Adam in mixed precision)."""
    return sum(training_state_bytes_per_param(optimizer, convention).values())


@dataclass(frozen=True, slots=True)
class TrainingMemory(Record):
    """Memory of one GPU training a model: ``parts`` (name -> bytes) and the verdict.

    ``state_bytes`` is this GPU's share of weights + gradients + optimiser states;
    ``state_bytes_total`` the same unsharded (params x bytes per parameter).
    ``interleave``: chunks of layers per GPU; ``micro_batches_per_step``: micro-batches each
    data-parallel rank runs per optimiser step; ``micro_batches_in_flight``: those whose
    activations the first pipeline stage holds at once (1 without pipelining; under the
    'embedding-and-loss' ``pipeline_split``, the fullest rank's, in micro-batches of a full
    stage's layers).
    ``adapter``: fine-tuning with adapters (engine.numbers.adapters.adapter_training_memory):
    ``parts`` are then the frozen base and the adapters' weights, gradients and optimiser
    states, and ``bytes_per_param`` is per trainable (adapter) parameter.
    """

    JSON = JsonShape(ids=("model", "hardware"), derived=("bytes_per_param_total",),
                     after={"bytes_per_param_total": "bytes_per_param"},
                     skip=("ep", "cp", "adapter", "pipeline_split"))

    model: ModelSpec
    hardware: HardwareSpec
    gpus: int
    tp: int
    dp: int
    pp: int
    sharding: Sharding
    optimizer: Optimizer
    convention: Convention
    micro_batch: int
    seq_len: int
    recompute: Recompute
    interleave: int
    micro_batches_per_step: int
    micro_batches_in_flight: float
    bytes_per_param: dict[str, float]
    parts: dict[str, float]
    per_gpu_bytes: float
    capacity_bytes: float
    fits: bool
    headroom_bytes: float
    state_bytes: float
    state_bytes_total: float
    ep: int = 1
    cp: int = 1
    adapter: AdapterSetup | None = None
    pipeline_split: PipelineSplit = "layers"

    @property
    def bytes_per_param_total(self) -> float:
        return sum(self.bytes_per_param.values())


def training_memory(
    model: ModelSpec,
    hardware: HardwareSpec,
    *,
    gpus: int = 1,
    sharding: Sharding = "none",
    tp: int = 1,
    optimizer: Optimizer = "adam",
    convention: Convention = "mixed-16",
    micro_batch: int = 1,
    seq_len: int = 4096,
    recompute: Recompute = "selective",
    pp: int = 1,
    interleave: int = 1,
    global_batch_tokens: float | None = None,
    ep: int = 1,
    cp: int = 1,
    pipeline_split: PipelineSplit = "layers",
) -> TrainingMemory:
    """Memory per GPU to train ``model`` on ``gpus`` GPUs with the given sharding, tensor
    parallel ``tp`` and ``pp`` pipeline stages of ``interleave`` chunks each (see
    engine.numbers.parallelism); EngineError when that split cannot work
    (parallelism.check_split).

    Weights and state: the fullest stage holds ceil(layers / pp) layers' share of all the
    parameters, embedding and output layer spread over the stages with the layers (Meta's
    Llama 3 405B run took one layer off the first and the last stage to make room for them,
    so its first stage held less than this share).
    Activations: :func:`engine.numbers.activations.layer_activations` per layer (16-bit,
    FlashAttention, sequence parallelism with tensor parallelism, no dropout) x
    ceil(layers / pp) layers x the micro-batches the first stage holds in flight
    (:func:`engine.numbers.activations.micro_batches_in_flight`: pp under 1F1B, more when
    interleaved, at most the step's micro-batches, ``global_batch_tokens`` / (dp x
    ``micro_batch`` x ``seq_len``) with the catalogue's global batch by default). The
    embedding's output, the logits and the loss are left out.
    ``ep`` expert-parallel GPUs each hold 1/ep of a mixture's routed experts (1: every GPU
    holds them all); ``cp`` context-parallel GPUs share each sequence, so each keeps 1/cp of
    its activations (gpus = dp x tp x pp x cp). ``pipeline_split`` 'embedding-and-loss':
    the embedding and the output layer each take one layer's place in the pipeline cut
    (training_choices.PipelineSplit): the fullest stage's parameters and its activations in
    flight are then counted rank by rank
    (:func:`engine.numbers.activations.layers_in_flight_with_embedding_and_loss`).
    """
    m = model
    hw = hardware
    g = gpus
    split = check_context_split(m, hw, g, tp, pp, cp, pipeline_split)
    t = split.tp
    shard = sharding
    rec = recompute
    mb = micro_batch
    s = seq_len
    bpp = training_state_bytes_per_param(optimizer, convention)
    dp = split.dp
    check_expert_parallel(m, ep, dp)
    stage = sharding_stage(shard, split.pp)
    # The weights' copies are sharded over every data- and context-parallel GPU (Megatron's
    # distributed optimiser), an expert's over the copies of that expert: dp x cp / ep.
    fullest = fullest_stage(m, split.pp, split.pipeline_split, ep)
    p = m.params / t * fullest.params
    p_experts = m.routed_params / t * fullest.layers
    groups = {"weights": 0.0, "gradients": 0.0, "optimizer_states": 0.0}
    for name, nbytes in bpp.items():
        part_stage = _ZERO_STAGE.get(name, 1)
        sharded = stage >= part_stage
        share = p * nbytes / (dp * cp if sharded else 1)
        if ep > 1:
            share += (p_experts / ep * nbytes / (dp * cp // ep if sharded else 1)
                      - p_experts * nbytes / (dp * cp if sharded else 1))
        key = name if name in groups else {2: "gradients", 3: "weights"}.get(
            part_stage, "optimizer_states")
        groups[key] += share
    global_tokens = (global_batch_tokens if global_batch_tokens is not None
                     else float(training_defaults().global_batch_tokens))
    per_step = split_batch(global_tokens, mb * s, dp).accumulation
    if split.pipeline_split == "embedding-and-loss":
        layers_held = layers_in_flight_with_embedding_and_loss(
            split.pp, interleave, per_step, split.stage_layers)
        in_flight = layers_held / split.stage_layers
    else:
        in_flight = micro_batches_in_flight(split.pp, interleave, per_step)
        layers_held = in_flight * split.stage_layers
    act = layers_held * activation_bytes_per_layer(
        m, seq_len=s, micro_batch=mb, recompute=rec, tp=t) / cp
    state = groups["weights"] + groups["gradients"] + groups["optimizer_states"]
    parts = {**groups, "activations": act, "runtime_overhead": RUNTIME_OVERHEAD_BYTES}
    total = state + act + RUNTIME_OVERHEAD_BYTES
    cap = hw.memory_bytes
    return TrainingMemory(
        model=m, hardware=hw, gpus=g, tp=t, dp=dp, pp=split.pp, sharding=shard,
        optimizer=optimizer, convention=convention, micro_batch=mb, seq_len=s,
        recompute=rec, interleave=interleave, micro_batches_per_step=per_step,
        micro_batches_in_flight=in_flight, bytes_per_param=bpp, parts=parts, per_gpu_bytes=total,
        capacity_bytes=cap, fits=total <= cap, headroom_bytes=cap - total, state_bytes=state,
        state_bytes_total=m.params * sum(bpp.values()), ep=ep, cp=cp,
        pipeline_split=split.pipeline_split,
    )


def min_gpus_to_train(mem: TrainingMemory,
                      memory_at: Callable[[int], TrainingMemory] | None = None) -> int | None:
    """Fewest GPUs with ``mem``'s sharding, tensor parallelism and pipeline stages on which
    it fits; None when no count helps (the unsharded parts alone are too big).

    Without a pipeline, replicated ('none') data parallelism never lowers memory per GPU, so
    the answer is tensor parallel (x context parallel) if it fits at all; ZeRO stages
    divide their parts over the data- and context-parallel GPUs, as :func:`training_memory`
    does: a mixture's experts, held 1/ep on each GPU, are sharded over the dp x cp / ep copies
    of each, so their sharded parts fall as the dense ones do. The data-parallel size is kept
    a multiple of ``mem.ep`` (the expert-parallel GPUs are data-parallel ranks).

    Under a pipeline the activations depend on the count too: at a fixed global batch fewer
    copies each run more micro-batches, and the first stage holds more of them in flight. So
    with pp > 1, ``memory_at(gpus)`` (the same request on ``gpus`` GPUs) is searched. From
    the count at which every copy runs one micro-batch a step the activations stop falling,
    so the sharded parts alone decide beyond it; below it memory per GPU falls as copies are
    added, except under the 'embedding-and-loss' cut with interleaving, where a part-filled
    last group of micro-batches can make a few more copies hold slightly more. There every
    count below the searched answer is tried too, up to :data:`_COUNTS_TRIED`.
    """
    if mem.pp == 1:
        return _fewest_at_these_activations(mem)
    if memory_at is None:
        raise ValueError("min_gpus_to_train needs memory_at under a pipeline")
    unit = mem.tp * mem.pp * mem.cp * mem.ep
    # Copies (in units of ep) at which each runs one micro-batch: the step's sequences, as
    # rounded for this count, over micro-batch x ep (never fewer than the batch's own).
    sequences = mem.micro_batches_per_step * mem.dp * mem.micro_batch
    one_each = max(1, ceil_div(sequences, mem.micro_batch * mem.ep))
    widest = memory_at(one_each * unit)
    if not widest.fits:
        return _fewest_at_these_activations(widest)
    low, high = 0, one_each  # memory_at(low * unit) does not fit (or low is 0); high fits
    while high - low > 1:
        middle = (low + high) // 2
        if memory_at(middle * unit).fits:
            high = middle
        else:
            low = middle
    if mem.pipeline_split == "embedding-and-loss" and mem.interleave > 1:
        for k in range(1, min(high, _COUNTS_TRIED + 1)):
            if memory_at(k * unit).fits:
                return k * unit
    return high * unit


# The most counts tried one by one where memory per GPU need not fall with more copies.
_COUNTS_TRIED = 2048


def _fewest_at_these_activations(mem: TrainingMemory) -> int | None:
    """:func:`min_gpus_to_train` with ``mem``'s own activations at every count."""
    t = mem.tp * mem.pp * mem.cp
    stage = sharding_stage(mem.sharding, mem.pp)
    m = mem.model
    fullest = fullest_stage(m, mem.pp, mem.pipeline_split, mem.ep)
    stage_params = m.params * fullest.params / mem.tp
    held = fullest.held_params(m, mem.ep) / mem.tp
    sharded = 0.0
    fixed = mem.parts["activations"] + mem.parts["runtime_overhead"]
    for name, nbytes in mem.bytes_per_param.items():
        if stage >= _ZERO_STAGE.get(name, 1):
            sharded += stage_params * nbytes
        else:
            fixed += held * nbytes
    room = mem.capacity_bytes - fixed
    if room <= 0:
        return None
    if sharded == 0.0:
        return t
    # The sharded parts are split over dp x cp GPUs.
    dp = max(1, ceil_div(ceil_div(sharded, room), mem.cp))
    return ceil_div(dp, mem.ep) * mem.ep * t
