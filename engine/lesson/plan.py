"""The five questions in one call: does it fit, what limits its speed, how many GPUs, why
would it fail, what does it cost.

``plan()`` computes the numbers (fast: no text); ``Plan.answers()`` and ``Plan.to_dict()``
put them into words and plain JSON values. Serving times are best cases (raw peak, full
bandwidth; see engine.numbers.serving); training time uses the MFU given (40 % by default).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import quantities, validate
from engine.numbers.catalog import HardwareSpec, ModelSpec, as_hardware, prices, resolve_model
from engine.numbers.compute import (
    DEFAULT_MFU,
    TrainingFlopsPerToken,
    flops_per_token,
    training_flops_per_token,
)
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import ExpectedServe, expected_serve
from engine.numbers.expected_training import ExpectedTrain, expected_train
from engine.numbers.memory import (
    ServingMemory,
    TrainingMemory,
    format_GB,
    min_gpus_to_serve,
    min_gpus_to_train,
    serving_memory,
    training_memory,
)
from engine.numbers.serving import DecodeStep, Prefill, _costs, _prefill, _step, _sum_steps
from engine.numbers.units import SECONDS_PER_DAY
from engine.words.format import a_or_an, format_seconds
from engine.words.labels import part_label

TASKS = ("serve", "train")
CHINCHILLA_TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022: compute-optimal ~20 tokens/param


# The five questions, in the order a plan answers them: key of `Plan.answers()` -> title.
QUESTIONS: tuple[tuple[str, str], ...] = (
    ("fits", "Does it fit?"),
    ("limit", "What limits its speed?"),
    ("gpus", "How many GPUs?"),
    ("failure", "Why would it fail?"),
    ("cost", "What does it cost?"),
)


@dataclass(frozen=True, slots=True)
class ServeFigures:
    """Speed of serving: the first decode step and the mean over the request (TPOT)."""

    prompt_tokens: int
    output_tokens: int
    prefill: Prefill
    first_step: DecodeStep
    decode_seconds: float
    tpot_seconds: float
    ttft_seconds: float
    total_seconds: float
    expected: ExpectedServe
    tp: int = 1
    replicas: int = 1

    @property
    def tokens_per_s_per_user(self) -> float:
        return 1.0 / self.tpot_seconds

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


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything ``plan()`` found. ``memory`` is a ServingMemory or a TrainingMemory."""

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
    price_note: str

    # ------------------------------------------------------------------ words
    def answers(self) -> dict[str, str]:
        """The five questions, each answered in one or two sentences with numbers."""
        return {
            "fits": self._fits_words(),
            "limit": self._limit_words(),
            "gpus": self._gpus_words(),
            "failure": self._failure_words(),
            "cost": self._cost_words(),
        }

    def _parts_words(self) -> str:
        return " + ".join(f"{part_label(k).lower().replace('kv cache', 'KV cache')} {format_GB(v)}"
                          for k, v in self.memory.parts.items())

    def _fits_words(self) -> str:
        mem = self.memory
        unit = "GPU" if self.hardware.kind == "gpu" else "chip"
        per = f"per {unit}" if self.gpus > 1 else f"on one {unit}"
        if mem.fits:
            return (f"Yes: {format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)} "
                    f"{per} ({self._parts_words()}), {format_GB(mem.headroom_bytes)} to spare.")
        return (f"No: it needs {format_GB(mem.per_gpu_bytes)} {per} ({self._parts_words()}), "
                f"{format_GB(-mem.headroom_bytes)} more than the {format_GB(mem.capacity_bytes)} "
                f"of one {self.hardware.name}.")

    def _limit_words(self) -> str:
        hw = self.hardware
        if self.serve is not None:
            s = self.serve
            d = s.first_step
            if d.bound == "memory":
                spread = f" across {self.gpus:,} chips" if self.gpus > 1 else ""
                head = (f"Decoding is memory-bandwidth-bound: each step reads "
                        f"{format_GB(d.bytes_read)}{spread} at "
                        f"{hw.bandwidth_bytes_per_s / 1e12:g} TB/s{' each' if spread else ''}")
            else:
                head = (f"Decoding is compute-bound at batch {d.batch}: {d.flops:.3g} FLOPs per "
                        f"step at {hw.compute_peak(self._wf)[0] / 1e12:,.0f} TFLOP/s")
            return (f"{head}: about {format_seconds(s.tpot_seconds)} per token, "
                    f"{s.tokens_per_s_per_user:,.0f} tokens/s per user at best. The prefill of "
                    f"{s.prompt_tokens:,} tokens is {s.prefill.bound}-bound: "
                    f"{format_seconds(s.prefill.seconds)} to the first token.")
        t = self.train
        assert t is not None
        return (f"Compute: {t.model_flops:.3g} FLOPs ({t.per_token.model:.3g} per token × "
                f"{t.tokens:.3g} tokens) on {self.gpus:,} "
                f"GPU{'s' if self.gpus > 1 else ''} at {t.peak_flops_per_s / 1e12:,.1f} TFLOP/s ({t.compute_format}) × "
                f"{t.mfu:.0%} MFU takes {format_seconds(t.seconds)}.")

    @property
    def _wf(self) -> str:
        return self.memory.weight_format if isinstance(self.memory, ServingMemory) else "bf16"

    @property
    def _full(self) -> bool:
        return isinstance(self.memory, TrainingMemory) and self.memory.recompute == "full"

    def _gpus_words(self) -> str:
        mem = self.memory
        if isinstance(mem, ServingMemory):
            if self.min_gpus is None:
                return ("No number of GPUs helps: the parts that are not split (activations "
                        "and overhead) alone exceed one GPU.")
            return (f"{self.min_gpus:,} GPU{'s' if self.min_gpus > 1 else ''} to hold the "
                    f"weights and {a_or_an(mem.context_tokens)} {mem.context_tokens:,}-token KV cache for {mem.batch} "
                    f"request{'s' if mem.batch > 1 else ''}"
                    + (" (tensor parallel)." if self.min_gpus > 1 else "."))
        t = self.train
        assert t is not None
        target = ""
        if t.gpus_for_target is not None and t.target_days is not None:
            target = (f" To finish in {t.target_days:g} days at {t.mfu:.0%} MFU: "
                      f"{t.gpus_for_target:,} GPUs.")
        if self.min_gpus is None:
            how = "replicated state" if mem.sharding == "none" else f"{mem.sharding} sharding"
            return (f"With {how} and tensor parallel {mem.tp} no GPU count "
                    f"fits: the unsharded parts alone exceed one GPU.{self._zero3_words()}"
                    + target)
        return (f"Memory: at least {self.min_gpus:,} GPU{'s' if self.min_gpus > 1 else ''} "
                f"with {mem.sharding} sharding"
                f"{f' and tensor parallel {mem.tp}' if mem.tp > 1 else ''}.{target}")

    def _zero3_words(self) -> str:
        """The smallest ZeRO-3 set-up that fits, trying tensor parallel 1, 2, 4, 8."""
        mem = self.memory
        assert isinstance(mem, TrainingMemory)
        for tp in (1, 2, 4, 8):
            if tp > 1 and self.model.heads % tp:
                continue  # that many GPUs cannot share the attention heads
            alt = training_memory(self.model, self.hardware, gpus=tp, sharding="zero3", tp=tp,
                                  optimizer=mem.optimizer, convention=mem.convention,
                                  micro_batch=mem.micro_batch, seq_len=mem.seq_len,
                                  recompute=mem.recompute)
            n = min_gpus_to_train(alt)
            if n is not None:
                tp_words = f" and tensor parallel {tp}" if tp > 1 else ""
                return f" What would fit: ZeRO-3{tp_words} on at least {n:,} GPUs."
        return " Even ZeRO-3 with tensor parallel 8 does not fit: use full recomputation."

    def _failure_words(self) -> str:
        mem = self.memory
        if not mem.fits:
            extra = ""
            if isinstance(mem, TrainingMemory):
                extra = (f" The training state alone is {format_GB(mem.state_bytes)} per GPU "
                         f"({mem.bytes_per_param_total:g} bytes × {self.model.params:,} "
                         f"parameters{' / sharding' if mem.sharding != 'none' else ''}).")
            return ("Out of memory, decided by arithmetic before it starts: "
                    f"{format_GB(mem.per_gpu_bytes)} needed, {format_GB(mem.capacity_bytes)} "
                    f"available per GPU.{extra} Retrying cannot help; more GPUs with sharded "
                    "state, a smaller model or format, or a bigger GPU can.")
        if isinstance(mem, ServingMemory):
            return (f"It fits. It would run out of KV cache beyond "
                    f"{mem.max_context_tokens_that_fit:,} tokens of context in total "
                    f"({mem.max_concurrent_requests:,} concurrent requests of "
                    f"{mem.context_tokens:,} tokens); past that, requests queue or are refused.")
        return (f"It fits with {format_GB(mem.headroom_bytes)} to spare; a longer sequence or a "
                "bigger micro-batch grows the activations and could push it out of memory.")

    def _cost_words(self) -> str:
        if self.usd_per_gpu_hour is None:
            return self.price_note
        from engine.numbers import cost

        price = self.usd_per_gpu_hour
        src = (self.price_note,)
        if self.serve is not None:
            tps = self.serve.replicas * self.serve.first_step.batch / self.serve.tpot_seconds
            c = cost.cost_per_million_tokens(tokens_per_s=tps, usd_per_gpu_hour=price,
                                             gpus=self.gpus, sources=src)
            return (f"{self.gpus:,} GPU{'s' if self.gpus > 1 else ''} at ${price:,.2f} per "
                    f"GPU-hour ({self.price_note}) = ${c.usd_per_hour:,.2f} per hour; at "
                    f"{tps:,.0f} tokens/s ({self.serve.first_step.batch:,} "
                    f"request{'s' if self.serve.first_step.batch > 1 else ''} at a time), "
                    f"${c.usd_per_million_tokens:,.2f} per million output tokens if kept busy; "
                    "serving more requests at once cuts it.")
        t = self.train
        assert t is not None
        tc = cost.training_run_cost(gpus=self.gpus, seconds=t.seconds, usd_per_gpu_hour=price,
                                    sources=src)
        return (f"{self.gpus:,} GPU{'s' if self.gpus > 1 else ''} × {format_seconds(t.seconds)} = {tc.gpu_hours:,.0f} "
                f"GPU-hours x ${price:,.2f} ({self.price_note}) = ${tc.usd:,.0f}.")

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, object]:
        mem = self.memory
        out: dict[str, object] = {
            "task": self.task,
            "model": {"id": self.model.id, "name": self.model.name,
                      "params": float(self.model.params),
                      "active_params": float(self.model.active_params)},
            "hardware": {"id": self.hardware.id, "name": self.hardware.name},
            "gpus": self.gpus,
            "memory": {
                "per_gpu_bytes": mem.per_gpu_bytes,
                "capacity_bytes": mem.capacity_bytes,
                "fits": mem.fits,
                "headroom_bytes": mem.headroom_bytes,
                "parts": dict(mem.parts),
                "assumptions": list(mem.assumptions),
            },
            "flops": {"per_token": self.flops_per_token},
            "min_gpus": self.min_gpus,
            "usd_per_gpu_hour": self.usd_per_gpu_hour,
            "price_source": self.price_note,
            "answers": self.answers(),
        }
        if isinstance(mem, ServingMemory) and self.serve is not None:
            s = self.serve
            out["serve"] = {
                "weight_format": mem.weight_format,
                "kv_format": mem.kv_format,
                "context_tokens": mem.context_tokens,
                "batch": mem.batch,
                "prompt_tokens": s.prompt_tokens,
                "output_tokens": s.output_tokens,
                "kv_cache_bytes_per_token": mem.kv_cache_bytes_per_token,
                "decode_seconds_per_token": s.tpot_seconds,
                "decode_tokens_per_s_per_user": s.tokens_per_s_per_user,
                "decode_tokens_per_s": mem.batch * s.tokens_per_s_per_user,
                "decode_bytes_per_step": s.first_step.bytes_read,
                "bound": s.bound,
                "prefill_seconds": s.prefill.seconds,
                "prefill_bound": s.prefill.bound,
                "ttft_seconds": s.ttft_seconds,
                "total_seconds": s.total_seconds,
                "max_context_tokens_that_fit": _json_int(mem.max_context_tokens_that_fit),
                "max_concurrent_requests": _json_int(mem.max_concurrent_requests),
                "note": "Best-case times: raw dense peak and full datasheet bandwidth.",
                "tp": s.tp,
                "replicas": s.replicas,
                "output_tokens_per_s": s.output_tokens_per_s,
                "communication_seconds_per_token": s.expected.communication_seconds_per_token,
                "expected": {**s.expected.to_dict(), "output_tokens_per_s":
                             s.replicas * s.expected.output_tokens_per_s},
            }
        if isinstance(mem, TrainingMemory) and self.train is not None:
            t = self.train
            out["train"] = {
                "sharding": mem.sharding, "tp": mem.tp, "dp": mem.dp,
                "optimizer": mem.optimizer, "convention": mem.convention,
                "bytes_per_param": dict(mem.bytes_per_param),
                "bytes_per_param_total": mem.bytes_per_param_total,
                "state_bytes_total": mem.state_bytes_total,
                "state_bytes_per_gpu": mem.state_bytes,
                "recompute": mem.recompute, "micro_batch": mem.micro_batch,
                "seq_len": mem.seq_len,
                "tokens": t.tokens,
                "tokens_source": "given" if t.tokens_given else
                f"not given: {CHINCHILLA_TOKENS_PER_PARAM} tokens per parameter "
                "(Chinchilla-optimal, Hoffmann et al. 2022)",
                "total_flops": t.total_flops, "model_flops": t.model_flops,
                "flops_per_token": t.per_token.to_dict(),
                "peak_flops_per_s": t.peak_flops_per_s,
                "compute_format": t.compute_format, "mfu": t.mfu, "seconds": t.seconds,
                "days": t.seconds / SECONDS_PER_DAY, "tokens_per_s": t.tokens_per_s,
                "target_days": t.target_days, "gpus_for_target": t.gpus_for_target,
                "bound_seconds": t.bound_seconds, "bound_tokens_per_s": t.bound_tokens_per_s,
                "communication_seconds_per_step": t.expected.communication_seconds_per_step,
                "expected": t.expected.to_dict(),
            }
        return out


def _json_int(n: int) -> int | float:
    return n if n <= 2**53 else float(n)


def _serve_split(gpus: object, serve_tp: object, batch: object) -> tuple[int, int, int]:
    """(tensor-parallel size, replicas, requests per replica): ``gpus`` GPUs serve as
    gpus / tp replicas of ``serve_tp`` GPUs (default: one replica of all of them), the batch
    spread evenly (rounded up)."""
    g = quantities.GPUS.check_integer(gpus, "gpus", "GPU count")
    if serve_tp is None or serve_tp == "":
        return g, 1, quantities.BATCH.check_integer(batch, "batch", "Batch")
    t = quantities.TENSOR_PARALLEL.check_integer(serve_tp, "tp", "Tensor-parallel size")
    if g % t:
        raise EngineError(f"GPU count ({g:,}) must be a multiple of the tensor-parallel size "
                          f"({t}).", "tp")
    b = quantities.BATCH.check_integer(batch, "batch", "Batch")
    replicas = g // t
    return t, replicas, -(-b // replicas)


def _price(hw: HardwareSpec, given: object) -> tuple[float | None, str]:
    if given is not None and given != "":
        return (quantities.USD_PER_GPU_HOUR.check(given, "usd_per_gpu_hour", "Price per GPU-hour"),
                "price given")
    offers = prices().cloud_for(hw.id)
    if not offers:
        return None, (f"No cloud price in the catalogue for {hw.name}; give one "
                      "(usd_per_gpu_hour) to get a cost.")
    p = prices().default_cloud(hw.id)
    return p.usd_per_gpu_hour, f"{p.provider} {p.offer}, {p.date}"


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
    prompt_tokens: object = 1024,
    output_tokens: object = 256,
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
) -> Plan:
    """Answer the five questions for one workload.

    Serving: ``batch`` requests of up to ``context_tokens`` each held in KV cache; speed for a
    request of ``prompt_tokens`` in and ``output_tokens`` out, on ``gpus`` GPUs as replicas of
    ``serve_tp`` tensor-parallel GPUs (default: all of them, one replica) sharing the batch.
    Training: ``tokens`` (default 20 per parameter) at ``mfu`` (default 40 %) on ``gpus`` GPUs
    with ``sharding`` and ``tp``; the expected figures model the MFU unless ``mfu`` is given.
    """
    m = model if isinstance(model, ModelSpec) else resolve_model(model, params)
    hw = as_hardware(hardware)
    job = validate.choice(task, "task", TASKS)
    price, note = _price(hw, usd_per_gpu_hour)
    if job == "serve":
        t_s, replicas, b_rep = _serve_split(gpus, serve_tp, batch)
        mem = serving_memory(m, hw, weight_format=weight_format, kv_format=kv_format,
                             context_tokens=context_tokens, batch=b_rep, gpus=t_s)
        s = quantities.PROMPT_TOKENS.check_integer(prompt_tokens, "prompt_tokens", "Prompt length")
        out = quantities.OUTPUT_TOKENS.check_integer(output_tokens, "output_tokens",
                                                     "Answer length")
        g = mem.gpus
        pre = _prefill(m, hw, mem.batch, s, mem.weight_format, mem.kv_format, g)
        k = _costs(m, hw, mem.batch, mem.weight_format, mem.kv_format, g)
        first = _step(k, mem.batch, s + 1, g)
        steps = out - 1
        dec = _sum_steps(k, s + 1, steps)
        tpot = dec / steps if steps else first.seconds
        exp = expected_serve(m, hw, prompt_tokens=s, output_tokens=out, batch=mem.batch,
                             weight_format=mem.weight_format, kv_format=mem.kv_format, gpus=g)
        figures = ServeFigures(s, out, pre, first, dec, tpot, pre.seconds, pre.seconds + dec,
                               exp, g, replicas)
        return Plan(job, m, hw, g * replicas, mem, flops_per_token(m),
                    min_gpus_to_serve(mem), figures, None, price, note)
    tmem = training_memory(m, hw, gpus=gpus, sharding=sharding, tp=tp, optimizer=optimizer,
                           convention=convention, micro_batch=micro_batch, seq_len=seq_len,
                           recompute=recompute)
    given = tokens is not None and tokens != ""
    d = (quantities.TRAINING_TOKENS.check(tokens, "tokens", "Training tokens") if given
         else float(CHINCHILLA_TOKENS_PER_PARAM * m.params))
    mfu_given = mfu is not None and mfu != ""
    u = quantities.MFU.check(mfu, "mfu", "MFU") if mfu_given else DEFAULT_MFU
    fmt = "fp32" if tmem.convention == "fp32" else "bf16"
    peak, fmt = hw.compute_peak(fmt)
    per_token = training_flops_per_token(m, tmem.seq_len, tmem.recompute)
    per_token.hardware_utilisation(u)
    model_flops = per_token.model * d
    total = per_token.hardware * d
    seconds = model_flops / (tmem.gpus * peak * u)
    target = None
    for_target = None
    if target_days is not None and target_days != "":
        target = quantities.TARGET_DAYS.check(target_days, "target_days", "Target days")
        for_target = max(1, int(-(-model_flops // (target * SECONDS_PER_DAY * peak * u))))
    if seconds > 1e15:
        raise EngineError("That run would take longer than the age of the universe; check "
                          "the tokens, GPUs and MFU.", "tokens")
    exp_t = expected_train(m, hw, tokens=d, gpus=tmem.gpus, tp=tmem.tp, sharding=tmem.sharding,
                           micro_batch=tmem.micro_batch, seq_len=tmem.seq_len,
                           recompute=tmem.recompute, compute_format=fmt,
                           mfu=u if mfu_given else None)
    bound = exp_t.bound_seconds
    tf = TrainFigures(d, given, total, model_flops, per_token, peak, fmt, u, seconds,
                      tmem.gpus * peak * u / per_token.model, for_target, target, exp_t, bound,
                      d / bound)
    return Plan(job, m, hw, tmem.gpus, tmem, flops_per_token(m), min_gpus_to_train(tmem),
                None, tf, price, note)
