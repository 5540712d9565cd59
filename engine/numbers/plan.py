"""The numbers behind the five questions (does it fit, what limits its speed, how many GPUs,
why would it fail, what does it cost) for one workload, in one call.

``plan()`` computes the numbers (fast: no text); engine.words.answers puts them into words
and engine.lesson.plans.plan_json into plain JSON values. Serving times are best cases (raw peak, full
bandwidth; see engine.numbers.serving); training time uses the MFU given (40 % by default).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import quantities, validate
from engine.numbers.adapters import adapter_training_memory
from engine.numbers.catalog import (
    CloudPrice,
    HardwareSpec,
    ModelSpec,
    as_hardware,
    prices,
    resolve_model,
)
from engine.numbers.compute import (
    DEFAULT_MFU,
    TrainingFlopsPerToken,
    flops_per_token,
    training_flops_per_token,
)
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import ExpectedServe, expected_serve
from engine.numbers.expected_training import ExpectedTrain, expected_train
from engine.numbers.formats import FormatId
from engine.numbers.memory import (
    ServingMemory,
    TrainingMemory,
    min_gpus_to_serve,
    min_gpus_to_train,
    serving_memory,
    training_memory,
)
from engine.numbers.offload import Offload, offload
from engine.numbers.parallelism import gpus_of_servers
from engine.numbers.rounding import ceil_div
from engine.numbers.serve_request import ServeRequest, serve_request
from engine.numbers.serving import (
    DecodeStep,
    JoiningPrefill,
    Prefill,
    _costs,
    _prefill,
    _step,
    _sum_steps,
    joining_prefill,
)
from engine.numbers.train_request import TrainRequest, check_train_request
from engine.numbers.units import SECONDS_PER_DAY

TASKS = ("serve", "train")
CHINCHILLA_TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022: compute-optimal ~20 tokens/param


@dataclass(frozen=True, slots=True)
class ServeFigures:
    """Speed of serving, bounds. A batch means that many requests kept running (the steady
    state of a continuous-batching server): ``joining`` is the step in which a request joins
    the others, its prompt prefilled beside their decodes, and its time
    (``ttft_at_batch_seconds``) the bound of its first token, on the basis of the expected
    ``expected.ttft_seconds``; ``ttft_seconds`` is one request on an idle server, its own
    prompt alone (whatever the arrivals, no request sees its first token sooner). The
    first decode step and the mean over the request (TPOT) are at the batch. ``prefill``
    is the batch's prompts all arriving together, in one pass; ``total_seconds`` that
    prefill and every decode step (the basis of the batch's output tokens per second).
    ``offload``: the layers left in host memory (None: all on the GPU); the times then
    include their weights' reads over the host link, the bounds' and the expected alike.
    ``ep``: each replica's routed experts in that many expert-parallel groups (the bounds
    unchanged: balanced expert reads, no communication; the expected add the busiest
    group and the all-to-alls, engine.numbers.expert_parallel)."""

    prompt_tokens: int
    output_tokens: int
    prefill: Prefill
    first_step: DecodeStep
    decode_seconds: float
    tpot_seconds: float
    ttft_seconds: float
    total_seconds: float
    expected: ExpectedServe
    joining: JoiningPrefill
    tp: int = 1
    replicas: int = 1
    offload: Offload | None = None
    ep: int = 1

    @property
    def ttft_at_batch_seconds(self) -> float:
        """Bound: the first token of a request joining the batch's other requests."""
        return self.joining.seconds

    @property
    def request_seconds_at_batch(self) -> float:
        """One request joining the batch, from its arrival to its last token at the bound:
        its first token beside the others' decodes, then every decode step (seconds)."""
        return self.joining.seconds + self.decode_seconds

    @property
    def tokens_per_s_per_user(self) -> float:
        return 1.0 / self.tpot_seconds

    @property
    def decode_tokens_per_s(self) -> float:
        """Bound: output tokens per second of every replica's batch while decoding (the
        basis of the cost and energy per token)."""
        return self.replicas * self.first_step.batch / self.tpot_seconds

    @property
    def output_tokens_per_s(self) -> float:
        """Bound: output tokens of every replica's batch / the request's total time."""
        return self.replicas * self.first_step.batch * self.output_tokens / self.total_seconds

    @property
    def bound(self) -> str:
        return self.first_step.bound


@dataclass(frozen=True, slots=True)
class TrainFigures:
    """Time of training: model FLOPs (about 6 x active N per token, plus attention) at
    ``mfu``; ``total_flops`` are the hardware FLOPs (recomputation included)."""

    tokens: float
    tokens_given: bool
    total_flops: float
    model_flops: float
    per_token: TrainingFlopsPerToken
    peak_flops_per_s: float
    compute_format: str
    mfu: float
    seconds: float
    tokens_per_s: float
    gpus_for_target: int | None
    target_days: float | None
    expected: ExpectedTrain
    bound_seconds: float
    bound_tokens_per_s: float

    @property
    def bound_seconds_per_step(self) -> float:
        """One optimiser step (the expected step's tokens) at the bound, seconds."""
        return self.bound_seconds / self.tokens * self.expected.tokens_per_step


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything ``plan()`` found. ``memory`` is a ServingMemory or a TrainingMemory.

    ``usd_per_gpu_hour`` is the price given, else the catalogue's default cloud offer for the
    hardware (``price_offer``), else None (no price known).
    """

    task: str
    model: ModelSpec
    hardware: HardwareSpec
    gpus: int
    memory: ServingMemory | TrainingMemory
    flops_per_token: float
    min_gpus: int | None
    serve: ServeFigures | None
    train: TrainFigures | None
    usd_per_gpu_hour: float | None
    price_offer: CloudPrice | None

    @property
    def weight_format(self) -> FormatId:
        """The format the weights are multiplied in: the serving weights', else bf16."""
        return self.memory.weight_format if isinstance(self.memory, ServingMemory) else "bf16"

    def zero3_fallback(self) -> tuple[int, int] | None:
        """The smallest ZeRO-3 set-up that fits, trying tensor parallel 1, 2, 4, 8:
        (tensor-parallel size, fewest GPUs), or None when even tensor parallel 8 does not."""
        mem = self.memory
        assert isinstance(mem, TrainingMemory)
        for tp in (1, 2, 4, 8):
            try:
                alt = training_memory(self.model, self.hardware, gpus=tp, sharding="zero3",
                                      tp=tp, optimizer=mem.optimizer,
                                      convention=mem.convention, micro_batch=mem.micro_batch,
                                      seq_len=mem.seq_len, recompute=mem.recompute)
            except EngineError:
                continue  # the heads do not split that many ways, or a server is smaller
            n = min_gpus_to_train(alt)
            if n is not None:
                return tp, n
        return None


def _price(hw: HardwareSpec, given: object) -> tuple[float | None, CloudPrice | None]:
    if given is not None and given != "":
        return (quantities.USD_PER_GPU_HOUR.check(given, "usd_per_gpu_hour", "Price per GPU-hour"),
                None)
    if not prices().cloud_for(hw.id):
        return None, None
    p = prices().default_cloud(hw.id)
    return p.usd_per_gpu_hour, p


def plan(
    *,
    model: object = None,
    params: object = None,
    hardware: object = "h100-sxm",
    gpus: object = 1,
    task: object = "serve",
    weight_format: object = "bf16",
    kv_format: object = "bf16",
    context_tokens: object = 8192,
    batch: object = 1,
    prompt_tokens: object = quantities.TYPICAL_PROMPT_TOKENS,
    output_tokens: object = quantities.TYPICAL_OUTPUT_TOKENS,
    sharding: object = "none",
    tp: object = 1,
    serve_tp: object = None,
    optimizer: object = "adam",
    convention: object = "mixed-16",
    micro_batch: object = 1,
    seq_len: object = 4096,
    recompute: object = "selective",
    tokens: object = None,
    mfu: object = None,
    target_days: object = None,
    usd_per_gpu_hour: object = None,
    pp: object = 1,
    nodes: object = None,
    global_batch_tokens: object = None,
    interleave: object = 1,
    ep: object = None,
    cp: object = 1,
    adapter: object = "none",
    rank: object = 16,
    targets: object = "all",
    kernels: object = "fused",
    attention: object = "fa2",
    tp_comm: object = "exposed",
    param_gather: object = "overlapped",
    grad_reduce: object = "bf16",
    pipeline_split: object = "layers",
    gpu_layers: object = None,
) -> Plan:
    """Answer the five questions for one workload.

    Serving: ``batch`` requests of up to ``context_tokens`` each held in KV cache; speed for a
    request of ``prompt_tokens`` in and ``output_tokens`` out, on ``gpus`` GPUs as replicas of
    ``serve_tp`` tensor-parallel GPUs (default: all of them, one replica) sharing the batch.
    Training: ``tokens`` (default 20 per parameter) at ``mfu`` (default 40 %) on ``gpus`` GPUs
    with ``sharding``, tensor parallel ``tp`` and ``pp`` pipeline stages (``nodes``: that
    many servers of the hardware instead of ``gpus``), ``global_batch_tokens`` per optimiser
    step (default: the catalogue's); the expected figures model the MFU unless ``mfu`` is
    given. ``convention`` 'fp8' runs the layers' matmuls in fp8 (Transformer Engine); ``ep``
    (serving: 1 by default) the expert-parallel groups each replica's routed experts are
    spread over (engine.numbers.expert_parallel); training: expert-parallel GPUs share a mixture's experts (default: min(experts, data-parallel
    size) for the times, every GPU holding every expert for the memory); ``cp``
    context-parallel GPUs share each sequence (gpus = dp x tp x pp x cp). ``adapter``
    'lora' or 'qlora' fine-tunes adapters of ``rank`` on ``targets`` ('attn', 'mlp', 'all')
    instead of training every weight (engine.numbers.adapters: each GPU holds the whole frozen
    base, data parallel only). ``kernels``: the stack's memory-bound kernels, 'fused' (one
    kernel per op: Transformer Engine, torch.compile), 'eager' (eager PyTorch, unfused) or
    'eager-fused-norm' (eager with a fused RMSNorm); ``attention``: its attention kernel,
    'fa2' (FlashAttention-2), 'triton' (the Triton port LLM Foundry's MPT ran) or 'cudnn'
    (cuDNN's fused attention, Transformer Engine's choice on Hopper);
    ``tp_comm``: 'exposed' (tensor parallelism's all-reduces on the critical path) or
    'overlapped' (under the GEMMs: Megatron-LM's --tp-comm-overlap); ``param_gather``: ZeRO-1/2's
    all-gather of the updated weights beside the next forward pass ('overlapped') or after
    the step ('after-step', DeepSpeed); ``grad_reduce``: the gradients' format on the
    data-parallel network, 'bf16' or 'fp32' (Megatron-LM's and torchtitan's default);
    ``pipeline_split``: 'layers' (the embedding and output layer ride on the first and last
    stages) or 'embedding-and-loss' (each takes one layer's place in the pipeline cut:
    Megatron-LM's --account-for-embedding-in-pipeline-split and -loss-, Llama 3 405B's run).
    ``gpu_layers`` (serving): the layers
    kept on each replica's GPUs, as llama.cpp's ``-ngl``; the others stay in host memory and
    are read over the chip's host link every pass (engine.numbers.offload). Empty: every
    layer on the GPU.
    """
    m = model if isinstance(model, ModelSpec) else resolve_model(model, params)
    hw = as_hardware(hardware)
    job = validate.choice(task, "task", TASKS)
    price, offer = _price(hw, usd_per_gpu_hour)
    if job == "serve":
        req = serve_request(m, hw, gpus=gpus_of_servers(hw, nodes, gpus), serve_tp=serve_tp,
                            batch=batch, weight_format=weight_format, kv_format=kv_format,
                            context_tokens=context_tokens, prompt_tokens=prompt_tokens,
                            output_tokens=output_tokens,
                            gpus_field="gpus" if nodes is None or nodes == "" else "nodes",
                            gpu_layers=gpu_layers, ep=ep)
        return _serve_plan(req, price, offer)
    if gpu_layers is not None and gpu_layers != "":
        raise EngineError("Layers on the GPU: offloading layers to host memory is planned for "
                          "serving; leave it empty for training.", "gpu_layers")
    treq = check_train_request(gpus=gpus_of_servers(hw, nodes, gpus), sharding=sharding, tp=tp,
                               optimizer=optimizer, convention=convention,
                               micro_batch=micro_batch, seq_len=seq_len, recompute=recompute,
                               pp=pp, tokens=tokens, mfu=mfu, target_days=target_days,
                               global_batch_tokens=global_batch_tokens, interleave=interleave,
                               ep=ep, cp=cp, adapter=adapter, rank=rank, targets=targets,
                               kernels=kernels, attention=attention, tp_comm=tp_comm,
                               param_gather=param_gather, grad_reduce=grad_reduce,
                               pipeline_split=pipeline_split)
    return _train_plan(m, hw, treq, price, offer)


def _serve_plan(req: ServeRequest, price: float | None, offer: CloudPrice | None) -> Plan:
    """plan() for serving the checked request ``req``."""
    m, hw = req.model, req.hardware
    s, out, b, g = req.prompt_tokens, req.output_tokens, req.batch, req.tp
    wf, kf = req.weight_format, req.kv_format
    off = None if req.gpu_layers is None else offload(m, hw, req.gpu_layers, wf, g)
    mem = serving_memory(m, hw, weight_format=wf, kv_format=kf,
                         context_tokens=req.context_tokens, batch=b, gpus=g,
                         host_weight_bytes=0.0 if off is None else off.host_weight_bytes)
    pre = _prefill(m, hw, b, s, wf, kf, g, off)
    # No arrival pattern gives a request its first token before its own prompt is read:
    # that alone is the idle server's bound.
    own = pre if b == 1 else _prefill(m, hw, 1, s, wf, kf, g, off)
    k = _costs(m, hw, b, wf, kf, g, off)
    first = _step(k, b, s + 1, g)
    steps = out - 1
    dec = _sum_steps(k, s + 1, steps)
    tpot = dec / steps if steps else first.seconds
    exp = expected_serve(m, hw, prompt_tokens=s, output_tokens=out, batch=b, weight_format=wf,
                         kv_format=kf, gpus=g, offload=off, ep=req.ep)
    join = joining_prefill(m, hw, prompt_tokens=s, output_tokens=out, batch=b,
                           weight_format=wf, kv_format=kf, gpus=g, offload=off)
    figures = ServeFigures(s, out, pre, first, dec, tpot, own.seconds, pre.seconds + dec,
                           exp, join, g, req.replicas, off, req.ep)
    return Plan("serve", m, hw, req.gpus, mem, flops_per_token(m),
                min_gpus_to_serve(mem), figures, None, price, offer)


def _train_plan(m: ModelSpec, hw: HardwareSpec, r: TrainRequest, price: float | None,
                offer: CloudPrice | None) -> Plan:
    """plan() for training the checked request ``r`` on ``hw``."""
    tmem = (_adapter_memory(m, hw, r) if r.adapter is not None
            else _request_memory(m, hw, r, r.gpus))
    setup = tmem.adapter
    given = r.tokens is not None
    d = r.tokens if r.tokens is not None else float(CHINCHILLA_TOKENS_PER_PARAM * m.params)
    u = r.mfu if r.mfu is not None else DEFAULT_MFU
    fmt = "fp32" if tmem.convention == "fp32" else "bf16"
    peak, fmt = hw.compute_peak(fmt)
    per_token = training_flops_per_token(m, tmem.seq_len, tmem.recompute, setup)
    per_token.hardware_utilisation(u)
    model_flops = per_token.model * d
    total = per_token.hardware * d
    seconds = model_flops / (tmem.gpus * peak * u)
    target = r.target_days
    for_target = (None if target is None
                  else max(1, ceil_div(model_flops, target * SECONDS_PER_DAY * peak * u)))
    if seconds > 1e15:
        raise EngineError("That run would take longer than the age of the universe; check "
                          "the tokens, GPUs and MFU.", "tokens")
    exp_t = expected_train(m, hw, tokens=d, gpus=tmem.gpus, tp=tmem.tp, sharding=tmem.sharding,
                           micro_batch=tmem.micro_batch, seq_len=tmem.seq_len,
                           recompute=tmem.recompute, compute_format=fmt, mfu=r.mfu,
                           pp=tmem.pp, global_batch_tokens=r.global_batch_tokens,
                           interleave=r.interleave, ep=r.ep, cp=r.cp,
                           fp8=r.convention == "fp8", adapter=setup, kernels=r.kernels,
                           attention=r.attention, tp_comm=r.tp_comm,
                           param_gather=r.param_gather, grad_reduce=r.grad_reduce,
                           pipeline_split=r.pipeline_split)
    bound = exp_t.bound_seconds
    tf = TrainFigures(d, given, total, model_flops, per_token, peak, fmt, u, seconds,
                      tmem.gpus * peak * u / per_token.model, for_target, target, exp_t, bound,
                      d / bound)
    fewest = (min_gpus_to_train(tmem, lambda gpus: _request_memory(m, hw, r, gpus))
              if setup is None
              else 1 if tmem.fits else None)  # every GPU holds the whole frozen base
    return Plan("train", m, hw, tmem.gpus, tmem, flops_per_token(m), fewest, None, tf, price,
                offer)


def _request_memory(m: ModelSpec, hw: HardwareSpec, r: TrainRequest, gpus: int) -> TrainingMemory:
    """Memory per GPU of the full-training request ``r`` run on ``gpus`` GPUs."""
    return training_memory(m, hw, gpus=gpus, sharding=r.sharding, tp=r.tp,
                           optimizer=r.optimizer, convention=r.convention,
                           micro_batch=r.micro_batch, seq_len=r.seq_len, recompute=r.recompute,
                           pp=r.pp, interleave=r.interleave,
                           global_batch_tokens=r.global_batch_tokens,
                           ep=r.ep if r.ep is not None else 1, cp=r.cp,
                           pipeline_split=r.pipeline_split)


# The full-training choices an adapter run leaves at their defaults: each GPU holds the whole
# frozen base and the adapters with Adam's state (engine.numbers.adapters).
_ADAPTER_DEFAULTS = (("tp", 1), ("pp", 1), ("cp", 1), ("interleave", 1), ("sharding", "none"),
                     ("optimizer", "adam"), ("convention", "mixed-16"), ("ep", None),
                     ("pipeline_split", "layers"))


def _adapter_memory(m: ModelSpec, hw: HardwareSpec, r: TrainRequest) -> TrainingMemory:
    """The adapter run's memory, after refusing the full-training choices it does not take."""
    assert r.adapter is not None
    for name, default in _ADAPTER_DEFAULTS:
        if getattr(r, name) != default:
            raise EngineError(f"Fine-tuning with adapters is planned data parallel, each GPU "
                              f"holding the whole frozen base, with Adam on bf16 adapters: "
                              f"leave {name} at {default if default is not None else 'empty'} "
                              f"(given {getattr(r, name)}).", name)
    return adapter_training_memory(m, hw, gpus=r.gpus, method=r.adapter, rank=r.rank,
                                   targets=r.targets, micro_batch=r.micro_batch,
                                   seq_len=r.seq_len, recompute=r.recompute,
                                   global_batch_tokens=r.global_batch_tokens)
