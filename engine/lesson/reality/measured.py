"""Published measurements beside the engine's bound and expected value.

For every row of :mod:`engine.lesson.reality.measurements` the engine is asked for the same quantity
through ``plan_to_dict(plan(...))``, the contract ``python -m engine plan ... --json`` gives:

- the **bound** from today's fields (``serve.ttft_seconds``, ``serve.prefill_seconds`` for a
  batch of prompts arriving together, ``serve.decode_seconds_per_token``,
  ``serve.output_tokens_per_s``; for training, ``train.seconds`` and ``train.mfu`` of
  ``--mfu 1 --recompute none``: the model's FLOPs at the raw dense peak), which no real
  system may beat;
- the **expected** value from ``serve.expected`` / ``train.expected`` (a well-tuned stack), or
  None ("pending") while the engine gives none.

A row under a stated load (a concurrency or a request rate, ``load_*`` metrics) is asked
through ``plan ... --concurrency N`` (or ``--rate R``) ``--json``: its expected value is
``serve.load`` (the simulated continuous-batching server), and its bound is the idle server's
(see :func:`load_bound`).

The error of each is ``engine / measured - 1``. A measurement that beats its bound (a shorter
time or a higher speed) is flagged, never hidden: it is a bug in the bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.lesson.plans.plan_json import plan_to_dict
from engine.lesson.reality.measurements import (
    GROUPS,
    LOAD_STATISTICS,
    METRICS,
    SERVING_GROUPS,
    Measurement,
    load,
)
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.compute import full_attention_training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.load.load_request import load_request, serve_load
from engine.numbers.plan import plan
from engine.numbers.serve_request import serve_request
from engine.numbers.units import SECONDS_PER_DAY, SECONDS_PER_HOUR
from engine.render.html import column_heads, esc, table_box, tag
from engine.words.format import format_percent

BEATEN = "The measurement beats this bound: a bug in the engine's bound, reported."

# The training precisions the engine models: BF16 matmuls, and FP8 ones as Transformer Engine
# runs them (the plan's 'fp8' convention).
MODELLED_TRAIN_PRECISIONS = ("bf16", "fp8")
NOT_MODELLED = "not modelled yet"
NOT_MODELLED_REASON = ("Not modelled yet: the engine trains with BF16 and FP8 matmuls only, so "
                       "it gives a run in this precision no bound and no expected value.")

# How far a serving row's expected value may sit from its measurement and still count as agreeing (±25 %).
WITHIN = 0.25


@dataclass(frozen=True, slots=True)
class Checked:
    """One measurement run through the engine. ``bound``/``expected`` are in its metric's unit;
    ``expected`` is None while the engine gives no expected value; ``problem`` says why a row
    could not be computed (then ``bound`` is None too); ``warnings``, what the engine changed or
    assumed to compute the expected value (its plan's ``train.warnings``: idle ranks, a batch
    rounded up); ``modelled`` is False for a row the engine does not model yet (an FP8
    training run), shown without a bound; ``reading``, how the engine's figures were put on
    the source's basis (an MFU counted with full attention)."""

    measurement: Measurement
    bound: float | None
    expected: float | None
    problem: str = ""
    warnings: tuple[str, ...] = ()
    modelled: bool = True
    reading: str = ""

    @property
    def bound_error(self) -> float | None:
        """bound / measured - 1."""
        return None if self.bound is None else self.bound / self.measurement.value - 1.0

    @property
    def expected_error(self) -> float | None:
        """expected / measured - 1."""
        return None if self.expected is None else self.expected / self.measurement.value - 1.0

    @property
    def beats_bound(self) -> bool:
        """True when the measurement is faster than the engine says anything can be."""
        if self.bound is None:
            return False
        if METRICS[self.measurement.metric][1] == "time":
            return self.measurement.value < self.bound
        return self.measurement.value > self.bound

    @property
    def within(self) -> bool:
        """The expected value within ±25 % of the measurement."""
        e = self.expected_error
        return e is not None and abs(e) <= WITHIN

    def to_dict(self) -> dict[str, object]:
        m = self.measurement
        return {
            "id": m.id, "group": m.group, "metric": m.metric, "scope": m.scope,
            "measured": m.value, "bound": self.bound, "expected": self.expected,
            "bound_error": self.bound_error, "expected_error": self.expected_error,
            "beats_bound": self.beats_bound, "problem": self.problem, "modelled": self.modelled,
            "reading": self.reading, "source": m.source,
        }


def _serve_value(m: Measurement, serve: dict[str, object]) -> float | None:
    """The row's metric from a ``serve`` (or ``serve.expected``) dict of the CLI contract."""
    # The bound on the expected value's basis: a request joining the batch's others.
    ttft = serve.get("ttft_at_batch_seconds", serve.get("ttft_seconds"))
    tpot = serve.get("decode_seconds_per_token")
    if not isinstance(ttft, float | int) or not isinstance(tpot, float | int):
        return None
    if m.metric == "ttft_seconds":
        return float(ttft)
    if m.metric == "decode_seconds_per_token":
        return float(tpot)
    if m.metric in ("prefill_seconds", "prefill_tokens_per_s"):
        # The batch's prompts all arriving together, in one pass.
        prefill = serve.get("prefill_seconds")
        if not isinstance(prefill, float | int):
            return None
        if m.metric == "prefill_seconds":
            return float(prefill)
        return m.batch * m.prompt_tokens / float(prefill)
    if m.metric == "decode_tokens_per_s":
        return m.batch / float(tpot)
    rate = serve.get("output_tokens_per_s")
    if not isinstance(rate, float | int):
        # The contract's definition, for an engine that does not give the field yet.
        total = serve.get("total_seconds")
        if not isinstance(total, float | int):
            return None
        rate = m.batch * m.output_tokens / float(total)
    if m.metric == "request_seconds":
        return m.batch * m.output_tokens / float(rate)
    return float(rate) / (m.gpus if m.scope == "per_gpu" else 1)


def _train_value(m: Measurement, train: dict[str, object],
                 mfu_scale: float = 1.0) -> float | None:
    """The row's metric from a ``train`` (or ``train.expected``) dict of the CLI contract;
    an MFU times ``mfu_scale`` (:func:`full_attention_mfu_scale`)."""
    key = {"train_mfu": "mfu", "train_tokens_per_s_per_gpu": "tokens_per_s"}.get(
        m.metric, "seconds")
    value = train.get(key)
    if not isinstance(value, float | int):
        return None
    if m.metric == "train_gpu_hours":
        return float(value) * m.gpus / SECONDS_PER_HOUR
    if m.metric == "train_days":
        return float(value) / SECONDS_PER_DAY
    if m.metric == "train_tokens_per_s_per_gpu":
        return float(value) / m.gpus
    if m.metric == "train_mfu":
        return float(value) * mfu_scale
    return float(value)


def full_attention_mfu_scale(m: Measurement, train: dict[str, object]) -> float:
    """What an MFU on the engine's count (causal attention) is multiplied by to be read on a
    source's count of full attention: (matmul + full attention) / (matmul + causal
    attention) FLOPs per token, the matmul and causal parts from the plan's
    ``train.flops_per_token``. 1 for a row counted as the engine counts."""
    if m.mfu_attention == "causal" or m.model is None:
        return 1.0
    flops = train.get("flops_per_token")
    assert isinstance(flops, dict)
    matmul, causal = float(flops["matmul"]), float(flops["attention"])
    full = full_attention_training_flops_per_token(get_model(m.model), m.seq_len)
    return (matmul + full) / (matmul + causal)


def _fp8_bound(at_bf16_peak: dict[str, object], train: dict[str, object]) -> dict[str, object]:
    """An FP8 run's bound as ``train``'s ``bound_seconds`` gives it (its matmul FLOPs at the
    FP8 dense peak, attention at the BF16 peak): the BF16 peak alone is none for it, NeMo's
    GPT-3 175B in FP8 running at 87 % of it. ``at_bf16_peak``: the same run at 100 % MFU,
    whose seconds over the bound's scale its MFU (still counted on the BF16 peak)."""
    seconds, rate, full = (train.get("bound_seconds"), train.get("bound_tokens_per_s"),
                           at_bf16_peak.get("seconds"))
    if not all(isinstance(x, float | int) for x in (seconds, rate, full)):
        return {}
    assert isinstance(seconds, float | int) and isinstance(full, float | int)
    return {"seconds": seconds, "tokens_per_s": rate, "mfu": float(full) / float(seconds)}


def contract(**inputs: object) -> dict[str, object]:
    """``plan(**inputs)`` as ``python -m engine plan ... --json`` prints it: the one place the
    reality check meets the engine."""
    return plan_to_dict(plan(**inputs))


def contract_under_load(load: dict[str, object], **inputs: object) -> dict[str, object]:
    """``plan(**inputs)`` with a server under ``load`` (:func:`load_request`'s keywords), as
    ``python -m engine plan ... --concurrency N --json`` prints it: ``serve.load`` added."""
    result = plan(**inputs)
    data = plan_to_dict(result)
    serve = data["serve"]
    assert isinstance(serve, dict)
    checked_load = load_request(**load)  # type: ignore[arg-type]
    assert checked_load is not None
    request = serve_request(result.model, result.hardware, gpus=result.gpus, serve_tp=None,
                            batch=inputs.get("batch", 1),
                            weight_format=inputs["weight_format"],
                            kv_format=inputs["kv_format"],
                            context_tokens=inputs["context_tokens"],
                            prompt_tokens=inputs["prompt_tokens"],
                            output_tokens=inputs["output_tokens"], ep=inputs.get("ep"))
    serve["load"] = serve_load(request, checked_load).to_dict()
    return data


def _number(d: dict[str, object], key: str) -> float:
    value = d.get(key)
    if not isinstance(value, float | int):
        raise EngineError(f"The contract gives no {key}.", key)
    return float(value)


def _load_value(m: Measurement, run: dict[str, object]) -> float:
    """The row's ``load_*`` metric from ``serve.load``."""
    if m.metric == "load_output_tokens_per_s":
        key = "output_tokens_per_s_per_gpu" if m.scope == "per_gpu" else "output_tokens_per_s"
        return _number(run, key)
    if m.metric == "load_requests_per_s":
        return _number(run, "requests_per_s")
    _, latency, stat, _ = m.metric.split("_")
    spread = run.get(f"{latency}_seconds")
    assert isinstance(spread, dict)
    return _number(spread, stat)


def load_bound(m: Measurement) -> float:
    """A load row's bound, from the idle server's bound (``serve`` of ``plan ... --json``):

    - a latency: one request alone on an idle server (batch 1): TTFT its own prefill, TPOT and
      ITL one decode step of batch 1, end-to-end the whole request; no load makes any shorter;
    - a throughput: the batch the load reaches at most, N (the concurrency; for a rate, every
      request at once), and no more than the KV cache holds at prompt_tokens + 1 each
      (``max_concurrent_requests``): at most N tokens per decode step of batch N, and by
      Little's law at most N requests in flight, each taking at least the idle server's whole
      request; the smaller of the two.
    """
    alone = _plan(m)["serve"]
    assert isinstance(alone, dict)
    _, latency, *_ = m.metric.split("_")
    if latency in ("ttft", "tpot", "itl", "e2e"):
        key = {"ttft": "ttft_seconds", "e2e": "total_seconds"}.get(
            latency, "decode_seconds_per_token")
        return _number(alone, key)
    shortest = _plan(m, context_tokens=m.prompt_tokens + 1)["serve"]
    assert isinstance(shortest, dict)
    most = m.concurrency if m.concurrency is not None else m.requests
    assert most is not None
    n = max(1, min(most, int(_number(shortest, "max_concurrent_requests"))))
    batched = _plan(m, batch=n)["serve"]
    assert isinstance(batched, dict)
    tokens_per_s = min(n / _number(batched, "decode_seconds_per_token"),
                       n * m.output_tokens / _number(alone, "total_seconds"))
    if m.metric == "load_requests_per_s":
        return tokens_per_s / m.output_tokens
    return tokens_per_s / (m.gpus if m.scope == "per_gpu" else 1)


def _load_inputs(m: Measurement) -> dict[str, object]:
    return {"concurrency": m.concurrency, "rate": m.rate, "requests": m.requests,
            "length_dist": m.length_dist, "length_cv": m.length_cv,
            "scheduling": m.scheduling}


def _serve_inputs(m: Measurement, **extra: object) -> dict[str, object]:
    """The row's ``plan()`` keywords (``extra`` overriding them)."""
    common: dict[str, object] = {"model": m.model, "params": m.params, "hardware": m.hardware,
                                 "gpus": m.gpus, "task": m.task}
    if m.task == "serve":
        common.update(weight_format=m.weight_format, kv_format=m.kv_format,
                      batch=1 if m.under_load else m.batch,
                      prompt_tokens=m.prompt_tokens, output_tokens=m.output_tokens,
                      context_tokens=m.prompt_tokens + m.output_tokens)
    else:
        common.update(tokens=m.tokens, seq_len=m.seq_len, tp=m.tp, sharding=m.sharding,
                      micro_batch=m.micro_batch, recompute=m.recompute)
        common.update(pp=m.pp, interleave=m.interleave,
                      global_batch_tokens=m.global_batch_tokens, cp=m.cp, kernels=m.kernels,
                      attention=m.attention, tp_comm=m.tp_comm,
                      param_gather=m.param_gather, grad_reduce=m.grad_reduce,
                      pipeline_split=m.pipeline_split)
        if m.precision == "fp8":
            common.update(convention="fp8")
    return {**common, **extra}


def _plan(m: Measurement, **extra: object) -> dict[str, object]:
    return contract(**_serve_inputs(m, **extra))


def check(m: Measurement) -> Checked:
    """The engine's bound and expected value for one measurement."""
    if m.task == "train" and m.precision not in MODELLED_TRAIN_PRECISIONS:
        return Checked(m, None, None, NOT_MODELLED_REASON, modelled=False)
    try:
        if m.under_load:
            under = contract_under_load(_load_inputs(m), **_serve_inputs(m))["serve"]
            assert isinstance(under, dict)
            run = under["load"]
            assert isinstance(run, dict)
            return Checked(m, load_bound(m), _load_value(m, run))
        if m.task == "serve":
            serve = _plan(m)["serve"]
            assert isinstance(serve, dict)
            expected = serve.get("expected")
            return Checked(m, _serve_value(m, serve),
                           _serve_value(m, expected) if isinstance(expected, dict) else None)
        # The bound is the run's model FLOPs at the raw dense peak: 100 % MFU and nothing
        # recomputed (recomputation only adds FLOPs). The expected value is the engine's own
        # estimate, so no MFU is given for it.
        bound_train = _plan(m, mfu=1.0, recompute="none")["train"]
        train = _plan(m)["train"]
        assert isinstance(bound_train, dict) and isinstance(train, dict)
        if m.precision == "fp8":
            bound_train = _fp8_bound(bound_train, train)
        expected = train.get("expected")
        warned = train.get("warnings")
        scale = full_attention_mfu_scale(m, train)
        reading = "" if scale == 1.0 else (
            "The source's MFU counts attention over the whole sequence "
            f"({m.mfu_attention_basis}); the engine counts it causal, so its bound and expected "
            f"MFU are multiplied by {scale:.3f} to be read on the source's count.")
        return Checked(m, _train_value(m, bound_train, scale),
                       _train_value(m, expected, scale) if isinstance(expected, dict) else None,
                       warnings=tuple(str(w) for w in warned) if isinstance(warned, list) else (),
                       reading=reading)
    except EngineError as e:
        return Checked(m, None, None, f"The engine cannot compute this row yet: {e}")


@cache
def checked() -> tuple[Checked, ...]:
    """Every measurement, checked, in file order."""
    return tuple(check(m) for m in load())


def rows(group: object = "") -> tuple[Checked, ...]:
    """The checked rows of one group (all when empty)."""
    if group not in ("", None) and group not in GROUPS:
        raise EngineError(
            f"Unknown group {str(group)[:40]!r}; choose one of: {', '.join(GROUPS)}.", "group"
        )
    return tuple(c for c in checked() if not group or c.measurement.group == group)


@dataclass(frozen=True, slots=True)
class Summary:
    """What the page says in one paragraph, counted by the engine."""

    rows: int
    computed: int
    serving: int
    serving_with_expected: int
    serving_within: int
    training: int
    training_with_expected: int
    training_within: int
    beaten: tuple[str, ...]
    not_modelled: int = 0
    # This project's own measurements (its source starts "This project"), counted in the
    # figures above too: how many, and of its serving rows, how many and how many within.
    own: int = 0
    own_serving: int = 0
    own_serving_within: int = 0

    @property
    def serving_within_share(self) -> float | None:
        if not self.serving_with_expected:
            return None
        return self.serving_within / self.serving_with_expected

    @property
    def training_within_share(self) -> float | None:
        if not self.training_with_expected:
            return None
        return self.training_within / self.training_with_expected


def summary() -> Summary:
    """Counts over every row: computed, within ±25 % (serving, training), bounds beaten, and
    the rows not modelled yet (shown, counted in none of the others)."""
    all_rows = checked()
    done = [c for c in all_rows if c.bound is not None]
    serving = [c for c in done if c.measurement.group in SERVING_GROUPS]
    training = [c for c in done if c.measurement.group == "train"]
    return Summary(
        rows=len(all_rows),
        computed=len(done),
        serving=len(serving),
        serving_with_expected=sum(c.expected is not None for c in serving),
        serving_within=sum(c.within for c in serving),
        training=len(training),
        training_with_expected=sum(c.expected is not None for c in training),
        training_within=sum(c.within for c in training),
        beaten=tuple(c.measurement.id for c in done if c.beats_bound),
        not_modelled=sum(not c.modelled for c in all_rows),
        own=sum(is_own(c.measurement) for c in all_rows),
        own_serving=sum(is_own(c.measurement) and c.expected is not None for c in serving),
        own_serving_within=sum(is_own(c.measurement) and c.within for c in serving),
    )


def is_own(m: Measurement) -> bool:
    """Whether this project measured ``m`` itself (bench/, its source says so) rather than
    reading it from a publication."""
    return m.source.startswith("This project")


# ---------------------------------------------------------------- words and tables


def format_measure(value: float, metric: str, scope: str = "system") -> str:
    """A value in its metric's unit, about 3 significant figures."""
    if metric == "request_seconds":
        return f"{value:,.3g} s" if value < 100 else f"{value:,.0f} s"
    if metric == "load_requests_per_s":
        return f"{value:,.3g} requests/s"
    if metric.startswith("load_") and metric.endswith("_seconds") and value >= 10:
        return f"{value:,.3g} s" if value < 100 else f"{value:,.0f} s"
    if metric in ("ttft_seconds", "prefill_seconds", "decode_seconds_per_token") or (
            metric.startswith("load_") and metric.endswith("_seconds")):
        ms = value * 1e3
        return f"{ms:,.3g} ms" if ms < 100 else f"{ms:,.0f} ms"
    if metric.endswith(("tokens_per_s", "tokens_per_s_per_gpu")):
        per = " per GPU" if scope == "per_gpu" or metric.endswith("per_gpu") else ""
        return (f"{value:,.1f}" if value < 100 else f"{value:,.0f}") + f" tokens/s{per}"
    if metric == "train_mfu":
        return format_percent(value)
    if metric == "train_gpu_hours":
        if value < 1e6:
            return f"{value:,.0f} GPU-hours"
        millions = value / 1e6
        return f"{millions:,.{2 if millions < 10 else 1 if millions < 100 else 0}f}M GPU-hours"
    if metric == "train_days":
        return f"{value:,.1f} days"
    raise EngineError(f"Unknown metric {metric!r}.", "metric")


def format_error(error: float | None) -> str:
    """'+24.5 %', '−15.7 %' (a true minus sign), '0.0 %'; 'pending' when there is none."""
    if error is None:
        return "pending"
    text = f"{error * 100:+.1f} %"
    if text in ("+0.0 %", "-0.0 %"):
        return "0.0 %"
    return text.replace("-", "\u2212")


def expected_error_text(c: Checked) -> str:
    """The expected error as the table shows it: 'not modelled yet' for a row the engine does
    not model, else :func:`format_error`."""
    return format_error(c.expected_error) if c.modelled else NOT_MODELLED


METRIC_LABELS: dict[str, str] = {
    "ttft_seconds": "time to first token",
    "prefill_seconds": "prefill of prompts arriving together",
    "decode_seconds_per_token": "time per output token",
    "output_tokens_per_s": "output tokens/s",
    "prefill_tokens_per_s": "prompt processing",
    "decode_tokens_per_s": "generation speed",
    "request_seconds": "time of the whole request",
    "train_mfu": "MFU",
    "train_gpu_hours": "GPU-hours",
    "train_days": "days",
    "train_tokens_per_s_per_gpu": "tokens/s per GPU",
    **{f"load_{q}_{stat}_seconds": f"{name} under load ({'mean' if stat == 'mean' else stat})"
       for q, name in (("ttft", "time to first token"), ("tpot", "time per output token"),
                       ("itl", "inter-token latency"), ("e2e", "time of the whole request"))
       for stat in LOAD_STATISTICS},
    "load_output_tokens_per_s": "output tokens/s under load",
    "load_requests_per_s": "requests/s under load",
}


def _load_text(m: Measurement) -> str:
    """A row's load in words: 'concurrency 25, 1,500 requests' or 'Poisson arrivals at 4
    requests/s, 1,200 requests', and the lengths' spread when they are not fixed and the
    scheduling when it is overlapped."""
    load = (f"concurrency {m.concurrency:,}" if m.concurrency is not None
            else f"Poisson arrivals at {m.rate:g} requests/s")
    lengths = "" if m.length_dist == "fixed" else (
        f", {m.length_dist} lengths" + (f" (cv {m.length_cv:g})" if m.length_cv else ""))
    scheduling = "" if m.scheduling == "synchronous" else f", {m.scheduling} scheduling"
    return f"{load}, {m.requests or 0:,} requests{lengths}{scheduling}"


def workload(m: Measurement) -> str:
    """The workload as published, in one line."""
    model = get_model(m.model).name if m.model else m.model_note.split(" (")[0]
    hw = get_hardware(m.hardware).name
    chips = f"{m.gpus:,} × {hw}" if m.gpus > 1 else hw
    if m.task == "serve":
        fmt = m.weight_format.upper().replace("_", "_")
        load = _load_text(m) if m.under_load else f"batch {m.batch:,}"
        return (f"{model}, {chips}, {fmt} weights, {m.kv_format.upper()} KV, {load}, "
                f"{m.prompt_tokens:,} in / {m.output_tokens:,} out")
    par = f"TP {m.tp}" + (f", PP {m.pp}" if m.pp > 1 else "")
    fp = f", {m.precision.upper()}" if m.precision != "bf16" else ""
    return (f"{model}, {chips}, {par}{fp}, {m.tokens / 1e12:,.3g}T tokens, "
            f"sequences of {m.seq_len:,}")


def _title(m: Measurement) -> str:
    model = get_model(m.model).name if m.model else m.model_note.split(" (")[0]
    return f"{model}: {METRIC_LABELS[m.metric]}"


def table(group: str = "") -> str:
    """One group's rows (all when empty) as an HTML table, every cell escaped."""
    found = rows(group)
    caption = GROUPS[group] if group else "Published measurements beside the engine"
    head = column_heads((
        "Workload as published", "Measured", "Bound", "Bound error", "Expected",
        "Expected error", "Source"))
    body = []
    for c in found:
        m = c.measurement
        notes = " ".join(n for n in (m.model_note, m.hardware_note, m.note, c.reading,
                                     c.problem, *c.warnings) if n)
        what = (esc(_title(m)) + tag("span", esc(workload(m)), class_="reality-inputs")
                + (tag("span", esc(notes), class_="reality-reading") if notes else ""))
        if c.beats_bound:
            what += tag("span", esc(BEATEN), class_="reality-beaten")
        bound = "—" if c.bound is None else format_measure(c.bound, m.metric, m.scope)
        missing = "pending" if c.modelled else NOT_MODELLED
        expected = missing if c.expected is None else format_measure(
            c.expected, m.metric, m.scope)
        beaten = "yes" if c.beats_bound else "no"
        cells = (
            tag("th", what, scope="row"),
            tag("td", esc(m.value_text), class_="reality-published"),
            tag("td", esc(bound), class_="reality-bound"),
            tag("td", esc(format_error(c.bound_error)) if c.bound is not None else "—",
                class_="reality-diff", data_beaten=beaten),
            tag("td", esc(expected), class_="reality-expected"),
            tag("td", esc(expected_error_text(c)), class_="reality-diff"),
            tag("td", esc(f"{m.stack}. {m.source}"), class_="reality-source"),
        )
        body.append(tag("tr", "".join(cells), data_measurement=m.id, data_group=m.group))
    return table_box(head, "".join(body), caption=caption, extra_class="reality reality-measured")


def summary_html() -> str:
    """The summary paragraph, every number counted from the rows."""
    s = summary()
    own = (f" ({s.rows - s.own} published by others, {s.own} made for this lesson)"
           if s.own else "")
    parts = [
        f"{s.rows} measurements{own}; the engine computes {s.computed} of them "
        f"({s.serving} serving, {s.training} training)."
    ]
    if s.not_modelled:
        parts.append(f"{s.not_modelled} training runs are shown but not modelled yet (the "
                     "engine trains in BF16 and FP8 only).")
    if s.beaten:
        names = "; ".join(_title(c.measurement) for c in checked() if c.measurement.id in s.beaten)
        parts.append(f"Bounds beaten: {len(s.beaten)} ({names}), each a bug in the engine's "
                     "bound, reported.")
    else:
        parts.append("Bounds beaten: none.")
    share = s.serving_within_share
    if share is None:
        parts.append("Expected values: pending (the engine gives none yet).")
    else:
        training = s.training_within_share
        others = s.serving_with_expected - s.own_serving
        without_own = (f"; {s.serving_within - s.own_serving_within} of the {others} others"
                       f", {format_percent((s.serving_within - s.own_serving_within) / others)}"
                       if s.own_serving and others else "")
        parts.append(f"Expected value within ±25 % of the measurement: {s.serving_within} of "
                     f"{s.serving_with_expected} serving rows ({format_percent(share)}"
                     + (f"; {s.own_serving_within} of this lesson's {s.own_serving}"
                        if s.own_serving else "") + without_own + "), "
                     f"{s.training_within} of {s.training_with_expected} training rows"
                     + (f" ({format_percent(training)})" if training is not None else "") + ".")
    return tag("p", esc(" ".join(parts)), class_="reality-summary")
