"""Published measurements of real systems, as data (``data/measurements.toml``).

Each :class:`Measurement` is one number a source published (a time to first token, a time
per output token, a throughput, a training MFU, GPU-hours or days), with the workload exactly
as published and the source. This module reads the file and checks every row; it computes
nothing. :mod:`engine.lesson.reality.measured` compares the rows with the engine.

The file is read with ``tomllib`` at build time only: the reality page is rendered when the
site is built, and nothing the browser runs imports this module.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.training_choices import (
    ATTENTION_KERNELS,
    GRAD_REDUCES,
    KERNELS,
    PARAM_GATHERS,
    PIPELINE_SPLITS,
    TP_COMMS,
)

DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "measurements.toml")

# group -> heading of its table on the page, in page order.
GROUPS: dict[str, str] = {
    "serve-latency": "Serving: time to first token and time per output token",
    "serve-throughput": "Serving: output tokens per second of a whole batch",
    "on-device": "On one device: llama.cpp on a Mac and a gaming GPU",
    "train": "Training: MFU, tokens per second, GPU-hours and days of published runs",
}
SERVING_GROUPS = ("serve-latency", "serve-throughput", "on-device")

# A server under a stated load (a concurrency or a request rate): each latency as a statistic
# over the requests (p50, p90, p99 or mean, as benchmark_serving prints them), and throughput.
LOAD_LATENCIES = ("ttft", "tpot", "itl", "e2e")
LOAD_STATISTICS = ("p50", "p90", "p99", "mean")
LOAD_METRICS: dict[str, tuple[str, str]] = {
    **{f"load_{q}_{stat}_seconds": ("serve", "time")
       for q in LOAD_LATENCIES for stat in LOAD_STATISTICS},
    "load_output_tokens_per_s": ("serve", "speed"),
    "load_requests_per_s": ("serve", "speed"),
}
# metric -> (task, kind): a "time" is beaten by a smaller measurement, a "speed" by a larger.
METRICS: dict[str, tuple[str, str]] = {
    "ttft_seconds": ("serve", "time"),
    "prefill_seconds": ("serve", "time"),
    "decode_seconds_per_token": ("serve", "time"),
    "output_tokens_per_s": ("serve", "speed"),
    "prefill_tokens_per_s": ("serve", "speed"),
    "decode_tokens_per_s": ("serve", "speed"),
    "request_seconds": ("serve", "time"),
    "train_mfu": ("train", "speed"),
    "train_gpu_hours": ("train", "time"),
    "train_days": ("train", "time"),
    "train_tokens_per_s_per_gpu": ("train", "speed"),
    **LOAD_METRICS,
}
LENGTH_DISTS = ("fixed", "uniform", "normal", "lognormal")
# How the server's host work between steps meets the GPU's (its stack's default).
SCHEDULINGS = ("synchronous", "overlapped")
SCOPES = ("system", "per_gpu")
# The number format of a training run's matmuls, as published.
PRECISIONS = ("bf16", "fp8")
# How a published MFU counts attention's FLOPs: as a causal kernel does them (the engine's
# count, each token against itself and those before it) or every token against the whole
# sequence (PaLM's count, and Megatron-LM's before 2025).
MFU_ATTENTION_COUNTS = ("causal", "full")
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_YEAR = re.compile(r"\b(19|20)\d\d\b")

_SERVE_KEYS = ("weight_format", "kv_format", "batch", "prompt_tokens", "output_tokens")
_LOAD_KEYS = ("concurrency", "rate", "requests", "length_dist", "length_cv", "scheduling")
_TRAIN_KEYS = ("tokens", "seq_len")
_KNOWN_KEYS = frozenset(
    {
        "id", "group", "task", "model", "params", "model_note", "hardware", "hardware_note",
        "gpus", "tp", "pp", "sharding", "metric", "scope", "value", "value_text", "stack",
        "source", "note", "micro_batch", "recompute", "interleave", "global_batch_tokens",
        "cp", "precision", "kernels", "kernels_basis", "attention", "attention_basis",
        "tp_comm", "tp_comm_basis", "param_gather", "param_gather_basis",
        "mfu_attention", "mfu_attention_basis", "grad_reduce", "grad_reduce_basis",
        "pipeline_split", "pipeline_split_basis",
        *_SERVE_KEYS, *_TRAIN_KEYS, *_LOAD_KEYS,
    }
)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One published figure and the workload it was measured on.

    Serving: ``gpus`` is the tensor-parallel size; ``batch`` requests of ``prompt_tokens`` in
    and ``output_tokens`` out. Training: ``tokens`` in all, sequences of ``seq_len``, on
    ``gpus`` GPUs with ``tp``, ``pp`` pipeline stages of ``interleave`` chunks per GPU,
    ``global_batch_tokens`` per step (None: the catalogue's, for a whole run only; a rate
    or an MFU gives its own), ``sharding``, ``micro_batch``
    sequences per GPU and ``recompute`` (activation checkpointing); ``cp`` GPUs share each
    sequence (context parallelism).
    ``precision`` is the format of the training's matmuls (bf16 or fp8). ``kernels``: the
    stack's memory-bound kernels as its source ran them (engine.numbers.training_choices
    .Kernels), and ``kernels_basis`` where that is read from (or that it is not stated):
    every training row says it. ``attention``: the attention kernel it ran
    (training_choices.AttentionKernel, FlashAttention-2 unless the row says otherwise), with
    ``attention_basis`` saying where that is read when it is not FlashAttention-2.
    ``grad_reduce``: the format its gradients crossed the data-parallel network in
    (training_choices.GradReduce, bf16 unless the row says where fp32 is read,
    ``grad_reduce_basis``). ``pipeline_split``: how its pipeline's stages shared the model
    (training_choices.PipelineSplit, 'layers' unless ``pipeline_split_basis`` says where
    'embedding-and-loss' is read). ``mfu_attention``: how a ``train_mfu`` row's source counts attention's FLOPs
    (:data:`MFU_ATTENTION_COUNTS`; ``full`` says where that is read, ``mfu_attention_basis``).
    ``value`` is in the unit its ``metric`` names (seconds, tokens/s, a fraction, hours, days).
    A row under load (a ``load_*`` metric) gives ``concurrency`` (requests kept in flight;
    all of them when a benchmark submits every request at once) or ``rate`` (Poisson
    arrivals, requests/s), ``requests`` in all, and lengths drawn from ``length_dist``
    (spread ``length_cv``) about the means ``prompt_tokens`` and ``output_tokens``; its
    ``batch`` is unused.
    """

    id: str
    group: str
    task: str
    model: str | None
    params: float | None
    model_note: str
    hardware: str
    hardware_note: str
    gpus: int
    metric: str
    scope: str
    value: float
    value_text: str
    stack: str
    source: str
    note: str
    weight_format: str = "bf16"
    kv_format: str = "bf16"
    batch: int = 1
    prompt_tokens: int = 1
    output_tokens: int = 1
    tokens: float = 0.0
    seq_len: int = 0
    tp: int = 1
    pp: int = 1
    sharding: str = "none"
    micro_batch: int = 1
    recompute: str = "selective"
    interleave: int = 1
    global_batch_tokens: float | None = None
    cp: int = 1
    precision: str = "bf16"
    kernels: str = "fused"
    kernels_basis: str = ""
    attention: str = "fa2"
    attention_basis: str = ""
    tp_comm: str = "exposed"
    tp_comm_basis: str = ""
    param_gather: str = "overlapped"
    param_gather_basis: str = ""
    grad_reduce: str = "bf16"
    grad_reduce_basis: str = ""
    pipeline_split: str = "layers"
    pipeline_split_basis: str = ""
    mfu_attention: str = "causal"
    mfu_attention_basis: str = ""
    concurrency: int | None = None
    rate: float | None = None
    requests: int | None = None
    length_dist: str = "fixed"
    length_cv: float | None = None
    scheduling: str = "synchronous"

    @property
    def under_load(self) -> bool:
        """True for a measurement of a server under a stated load."""
        return self.metric in LOAD_METRICS

    def __post_init__(self) -> None:
        def bad(message: str, field: str) -> EngineError:
            return EngineError(f"Measurement {self.id!r}: {message}", field)

        def choose(value: str, choices: Sequence[str], field: str, name: str = "") -> None:
            if value not in choices:
                raise bad(f"unknown {name or field} {value!r}; choose one of: "
                          f"{', '.join(choices)}.", field)

        if not _ID.match(self.id):
            raise bad("the id must be lower case letters, digits, dots and dashes.", "id")
        if self.group not in GROUPS:
            raise bad(f"unknown group {self.group!r}.", "group")
        if self.metric not in METRICS:
            raise bad(f"unknown metric {self.metric!r}.", "metric")
        if METRICS[self.metric][0] != self.task:
            raise bad(f"metric {self.metric!r} does not belong to task {self.task!r}.", "task")
        if (self.group == "train") != (self.task == "train"):
            raise bad("training rows, and only they, go in the group 'train'.", "group")
        if self.scope not in SCOPES:
            raise bad(f"unknown scope {self.scope!r}.", "scope")
        if (self.model is None) == (self.params is None):
            raise bad("give a catalogue model or a parameter count, not both.", "model")
        if self.params is not None and not self.model_note:
            raise bad("a model given by its parameter count needs a model_note.", "model_note")
        if self.model is not None:
            get_model(self.model)
        get_hardware(self.hardware)
        if not (math.isfinite(self.value) and self.value > 0):
            raise bad("the value must be a finite number above 0.", "value")
        choose(self.precision, PRECISIONS, "precision")
        if self.precision != "bf16" and self.task != "train":
            raise bad("precision is a training row's; serving rows give weight_format.",
                      "precision")
        if self.metric == "train_mfu" and self.value > 1:
            raise bad("an MFU is a fraction: 0.41 for 41 %.", "value")
        if min(self.gpus, self.tp, self.pp, self.interleave, self.cp, self.batch) < 1:
            raise bad("GPU counts and batch must be at least 1.", "gpus")
        if self.task == "serve" and (self.prompt_tokens < 1 or self.output_tokens < 1):
            raise bad("prompt and output lengths must be at least 1.", "prompt_tokens")
        if self.under_load:
            if (self.concurrency is None) == (self.rate is None):
                raise bad("a load metric needs a concurrency or a rate, not both.",
                          "concurrency")
            if self.requests is None or self.requests < 1:
                raise bad("a load metric needs the requests sent, at least 1.", "requests")
            if (self.concurrency is not None and self.concurrency < 1) or (
                    self.rate is not None and not (math.isfinite(self.rate) and self.rate > 0)):
                raise bad("a concurrency is at least 1 and a rate above 0.", "concurrency")
            choose(self.length_dist, LENGTH_DISTS, "length_dist")
            choose(self.scheduling, SCHEDULINGS, "scheduling")
        elif any(v is not None for v in (self.concurrency, self.rate, self.requests,
                                         self.length_cv)) or self.length_dist != "fixed" or (
                self.scheduling != "synchronous"):
            raise bad("a load (concurrency, rate, requests, lengths) belongs to a load_* "
                      "metric.", "concurrency")
        if self.task == "train" and (self.tokens <= 0 or self.seq_len < 1):
            raise bad("training rows need tokens and seq_len.", "tokens")
        choose(self.kernels, KERNELS, "kernels")
        if self.task == "train" and not self.kernels_basis.strip():
            raise bad("a training row says which kernels its source ran, or that it does "
                      "not say (kernels_basis).", "kernels_basis")
        if self.task != "train" and (self.kernels != "fused" or self.kernels_basis):
            raise bad("kernels belong to a training row.", "kernels")
        train = self.task == "train"
        # Each stack choice off the engine's default is read from the source, and only where
        # it can apply: (field, choices, default, where it applies, what the row must say,
        # the choice's name in messages).
        for field, choices, default, applies, needs, name in (
                ("attention", ATTENTION_KERNELS, "fa2", train,
                 "a training row that ran another attention kernel than FlashAttention-2 says "
                 "where that is read", "attention kernel"),
                ("tp_comm", TP_COMMS, "exposed", train and self.tp >= 2,
                 "a training row whose tensor-parallel collectives ran under the GEMMs has "
                 "tp > 1 and says where that is read", "tensor-parallel communication"),
                ("param_gather", PARAM_GATHERS, "overlapped", self.sharding in ("zero1", "zero2"),
                 "a ZeRO-1/2 row whose weights were gathered after the step says where that "
                 "is read", "parameter gather"),
                ("grad_reduce", GRAD_REDUCES, "bf16", train,
                 "a training row whose gradients crossed the network in fp32 says where that "
                 "is read", "gradient reduction"),
                ("pipeline_split", PIPELINE_SPLITS, "layers", self.pp >= 2,
                 "a pipelined row whose embedding and loss took a layer's place in the cut "
                 "says where that is read", "pipeline split"),
                ("mfu_attention", MFU_ATTENTION_COUNTS, "causal",
                 self.metric == "train_mfu" and self.model is not None,
                 "an MFU counted with full attention is a train_mfu row of a catalogue model "
                 "that says where the count is read", "MFU attention count")):
            value = getattr(self, field)
            choose(value, choices, field, name)
            basis = f"{field}_basis"
            if value != default and (not applies or not getattr(self, basis).strip()):
                raise bad(f"{needs} ({basis}).", basis)
        # A steady rate is measured at one batch, which sets how often the gradients cross
        # the network: the row gives it rather than taking the catalogue's.
        if self.metric in ("train_mfu", "train_tokens_per_s_per_gpu") and (
                self.global_batch_tokens is None):
            raise bad("a training rate or MFU gives the global batch it ran "
                      "(global_batch_tokens).", "global_batch_tokens")
        for field in ("value_text", "stack", "source"):
            if not getattr(self, field).strip():
                raise bad(f"{field} is empty.", field)
        if not _YEAR.search(self.source):
            raise bad("the source must name a year (a date of publication).", "source")


def _row(raw: dict[str, Any]) -> Measurement:
    unknown = set(raw) - _KNOWN_KEYS
    if unknown:
        raise EngineError(
            f"Measurement {raw.get('id')!r}: unknown keys {', '.join(sorted(unknown))}.", "key"
        )
    task = raw.get("task")
    needed: tuple[str, ...] = (_SERVE_KEYS if task == "serve" else _TRAIN_KEYS
                               if task == "train" else ())
    if str(raw.get("metric")) in LOAD_METRICS:
        needed = tuple(k for k in needed if k != "batch")
    missing = [k for k in ("id", "group", "task", "hardware", "gpus", "metric", "value",
                           "value_text", "stack", "source", *needed) if k not in raw]
    if missing:
        raise EngineError(
            f"Measurement {raw.get('id')!r}: missing {', '.join(missing)}.", missing[0]
        )
    params = raw.get("params")
    return Measurement(
        id=str(raw["id"]),
        group=str(raw["group"]),
        task=str(task),
        model=str(raw["model"]) if "model" in raw else None,
        params=float(params) if params is not None else None,
        model_note=str(raw.get("model_note", "")),
        hardware=str(raw["hardware"]),
        hardware_note=str(raw.get("hardware_note", "")),
        gpus=int(raw["gpus"]),
        metric=str(raw["metric"]),
        scope=str(raw.get("scope", "system")),
        value=float(raw["value"]),
        value_text=str(raw["value_text"]),
        stack=str(raw["stack"]),
        source=str(raw["source"]),
        note=str(raw.get("note", "")),
        weight_format=str(raw.get("weight_format", "bf16")),
        kv_format=str(raw.get("kv_format", "bf16")),
        batch=int(raw.get("batch", 1)),
        prompt_tokens=int(raw.get("prompt_tokens", 1)),
        output_tokens=int(raw.get("output_tokens", 1)),
        tokens=float(raw.get("tokens", 0.0)),
        seq_len=int(raw.get("seq_len", 0)),
        tp=int(raw.get("tp", 1)),
        pp=int(raw.get("pp", 1)),
        sharding=str(raw.get("sharding", "none")),
        micro_batch=int(raw.get("micro_batch", 1)),
        recompute=str(raw.get("recompute", "selective")),
        interleave=int(raw.get("interleave", 1)),
        global_batch_tokens=(float(raw["global_batch_tokens"]) if "global_batch_tokens" in raw
                             else None),
        cp=int(raw.get("cp", 1)),
        precision=str(raw.get("precision", "bf16")),
        kernels=str(raw.get("kernels", "fused")),
        kernels_basis=str(raw.get("kernels_basis", "")),
        attention=str(raw.get("attention", "fa2")),
        attention_basis=str(raw.get("attention_basis", "")),
        tp_comm=str(raw.get("tp_comm", "exposed")),
        tp_comm_basis=str(raw.get("tp_comm_basis", "")),
        param_gather=str(raw.get("param_gather", "overlapped")),
        param_gather_basis=str(raw.get("param_gather_basis", "")),
        grad_reduce=str(raw.get("grad_reduce", "bf16")),
        grad_reduce_basis=str(raw.get("grad_reduce_basis", "")),
        pipeline_split=str(raw.get("pipeline_split", "layers")),
        pipeline_split_basis=str(raw.get("pipeline_split_basis", "")),
        mfu_attention=str(raw.get("mfu_attention", "causal")),
        mfu_attention_basis=str(raw.get("mfu_attention_basis", "")),
        concurrency=int(raw["concurrency"]) if "concurrency" in raw else None,
        rate=float(raw["rate"]) if "rate" in raw else None,
        requests=int(raw["requests"]) if "requests" in raw else None,
        length_dist=str(raw.get("length_dist", "fixed")),
        length_cv=float(raw["length_cv"]) if "length_cv" in raw else None,
        scheduling=str(raw.get("scheduling", "synchronous")),
    )


def parse(data: dict[str, Any]) -> tuple[Measurement, ...]:
    """Rows from parsed TOML (``{"measurement": [...]}``), checked; ids must be unique."""
    rows = tuple(_row(raw) for raw in data.get("measurement", []))
    seen: set[str] = set()
    for m in rows:
        if m.id in seen:
            raise EngineError(f"Measurement {m.id!r} appears twice.", "id")
        seen.add(m.id)
    if not rows:
        raise EngineError("The measurements file has no [[measurement]] rows.", "measurement")
    return rows


@cache
def load() -> tuple[Measurement, ...]:
    """Every row of ``data/measurements.toml``, in file order."""
    # Imported here: only the build (and tests) read this file; the browser never does.
    import tomllib

    with open(DATA_FILE, "rb") as source:
        return parse(tomllib.load(source))
