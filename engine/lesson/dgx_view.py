"""The simulated dgx-1 as its operator sees it (per-GPU memory and utilisation, the jobs
running, the job log, newest first), shared by the three widgets that act on it: dgx_panel,
launch_training and deploy_model.

The simulation state travels as JSON text in the hidden input ``state``, kept in this tab's
``sessionStorage`` under ``session:dgx-1`` and shared with every widget that acts on the same
server (launch_training, deploy_model), across pages. :func:`load_state` treats it as
untrusted input: anything broken or foreign is refused with the engine's message, naming the
field ``state``.
"""

from __future__ import annotations

import json

from engine.lesson import cluster
from engine.lesson.dgx_load import busy_shares
from engine.numbers import bounded_json
from engine.numbers.errors import EngineError
from engine.numbers.expected_training import expected_train
from engine.render.fields import Text, hidden
from engine.render.html import esc, tag
from engine.render.plot import stacked_bar
from engine.render.svg import rect, svg
from engine.words.format import format_count, format_GB, format_percent, format_seconds
from engine.words.sharding import sharding_name

STORE = "session:dgx-1"
SYSTEM = "dgx-1"
ADVANCE_SECONDS = 3600.0
RECENT_LOG = 3  # log entries shown before the "older entries" fold
BAR_WIDTH = 160
BAR_HEIGHT = 14
THIN_BAR_HEIGHT = 5  # the bars of a row that stands for several GPUs, stacked


# ------------------------------------------------------------------- state as page text


def dump_state(state: cluster.ClusterState) -> str:
    """The state as compact JSON text, the same in CPython and Pyodide."""
    return json.dumps(state.to_dict(), separators=(",", ":"), sort_keys=True)


MAX_STATE_CHARS = 100_000  # a full state (16 jobs, 64 log entries) is about 20,000
MAX_STATE_DEPTH = 8  # the state's own nesting is 4 levels


def load_state(text: str) -> cluster.ClusterState:
    """The state from the page's hidden input; EngineError (field 'state') if it is not one."""
    if not text.strip():
        return cluster.new_cluster(SYSTEM)
    try:
        data = bounded_json.loads(
            text, what="The saved dgx-1 state", field="state", max_chars=MAX_STATE_CHARS,
            max_depth=MAX_STATE_DEPTH,
        )
    except EngineError as error:
        raise EngineError(
            f"{error.message[:-1]}, so the simulation starts again from a fresh dgx-1.", "state"
        ) from None
    return cluster.state_from_dict(data)


DEFAULT_STATE = dump_state(cluster.new_cluster(SYSTEM))


STATE = hidden("state", "dgx-1 state", DEFAULT_STATE)


def state_field() -> Text:
    """The hidden input that carries the simulated dgx-1 (JSON text, kept in the store)."""
    return STATE


def with_field(error: EngineError, fields: dict[str, str]) -> EngineError:
    """The engine's error renamed to the widget's input (model_id -> model, ...)."""
    field = fields.get(error.field or "", error.field)
    return EngineError(error.message, field)


# ------------------------------------------------------------------------- small pieces


def clock_text(seconds: float) -> str:
    """Simulated time as an operator's clock: '0:00', '1:00', '26:30' (hours:minutes)."""
    minutes = int(seconds // 60)
    return f"{minutes // 60:,}:{minutes % 60:02d}"


def _job_words(job: cluster.Job) -> str:
    model = cluster.model_named(job.model_id).name
    if job.kind == "serve":
        return (
            f"serving {model} ({job.weight_format} weights, {job.batch:,} × "
            f"{job.context_tokens:,} tokens of context)"
        )
    return f"training {model} ({sharding_name(job.sharding)}, {format_count(job.tokens)} tokens)"


def _bar(segments: list[tuple[str, float, str]], total: float, label: str, gpu: int,
         height: int = BAR_HEIGHT) -> str:
    """A small horizontal bar of GPU ``gpu``: (css class, value, title) segments on a
    0..total track."""
    track = rect(0, 0, BAR_WIDTH, height, class_="track", rx=2)
    bar = stacked_bar(
        segments,
        x=0,
        y=0,
        height=height,
        units_per_value=BAR_WIDTH / total if total > 0 else 0.0,
        limit=BAR_WIDTH,
    )
    return svg(
        track + bar,
        css="dgx-bar",
        width=BAR_WIDTH,
        height=height,
        label=label,
        data={"gpu": str(gpu)},
        fixed_size=True,
    )


def _job_colours(state: cluster.ClusterState) -> dict[str, str]:
    """Each running job's colour class, the same in the bars and the jobs table."""
    return {j.id: f"part-{i % 6}" for i, j in enumerate(state.running_jobs())}


# ---------------------------------------------------------------------------- the panel


def _table(caption: str, columns: tuple[str, ...], rows: list[str], class_: str,
           *, stack: bool = True) -> str:
    """A panel table: ``caption``, a head row of ``columns``, the ``rows`` (whole ``<tr>``s),
    in a ``<div>`` of ``class_``; ``stack=False``: it fits a phone as it is, rows unstacked
    (engine/render/table_labels.py)."""
    head = "".join(tag("th", esc(h), scope="col") for h in columns)
    return tag(
        "div",
        tag(
            "table",
            tag("caption", esc(caption)) + tag("thead", tag("tr", head)) + tag("tbody", "".join(rows)),
            class_="dgx-table",  # a class: the theme leaves it unwrapped, same live and built
            data_stack=None if stack else "never",
        ),
        class_=class_,
    )


def _gpu_rows(state: cluster.ClusterState,
              busy: dict[str, float]) -> list[list[cluster.GpuView]]:
    """The GPUs grouped by what an operator reads in their row (memory in use, utilisation,
    what runs there), in GPU order: eight idle GPUs are one row, not eight."""
    groups: dict[tuple[float, float, str], list[cluster.GpuView]] = {}
    for gpu in state.gpus(busy):
        groups.setdefault((gpu.used_bytes, gpu.utilisation, gpu.activity), []).append(gpu)
    return list(groups.values())


def _gpu_table(state: cluster.ClusterState, busy: dict[str, float]) -> str:
    """One row per group of GPUs in the same state; the bars stay one per GPU."""
    colours = _job_colours(state)
    jobs = {j.id: j for j in state.running_jobs()}
    rows = []
    for group in _gpu_rows(state, busy):
        first = group[0]
        memory_text = f"{format_GB(first.used_bytes)} of {format_GB(first.capacity_bytes)}"
        busy_text = format_percent(first.utilisation)
        memory_bars = busy_bars = ""
        height = BAR_HEIGHT if len(group) == 1 else THIN_BAR_HEIGHT
        for gpu in group:
            segments = [
                (colours[jid], jobs[jid].bytes_per_gpu,
                 f"{jid}: {format_GB(jobs[jid].bytes_per_gpu)}")
                for jid in gpu.jobs
            ]
            memory_bars += _bar(segments, gpu.capacity_bytes,
                                f"GPU {gpu.index} memory: {memory_text}", gpu.index, height)
            busy_bars += _bar([("part-1", gpu.utilisation, f"busy {busy_text}")], 1.0,
                              f"GPU {gpu.index} utilisation: {busy_text}", gpu.index, height)
        rows.append(
            tag(
                "tr",
                tag("th", esc(cluster.gpu_list([g.index for g in group])), scope="row")
                + tag("td", tag("span", memory_bars, class_="dgx-bars")
                      + tag("span", esc(memory_text)))
                + tag("td", tag("span", busy_bars, class_="dgx-bars")
                      + tag("span", esc(busy_text)))
                + tag("td", esc(first.activity)),
                data_gpus=" ".join(str(g.index) for g in group),
            )
        )
    system = state.system
    return _table(
        f"{state.system_id}: {system.gpu_count} × {system.gpu.name}",
        ("GPU", "Memory in use", "Utilisation", "What runs there"),
        rows,
        "dgx-gpus chart",
        stack=False,  # a few short rows of bars: the grid is the picture
    )


def _expected_words(state: cluster.ClusterState, job: cluster.Job) -> str:
    """'; a well-tuned stack: about N tokens/s (M% MFU)', the engine's expected speed of the
    job beside the MFU it was launched with; empty if the engine cannot model the job."""
    try:
        e = expected_train(cluster.model_named(job.model_id), state.system.gpu, tokens=job.tokens,
                           gpus=len(job.gpus), sharding=job.sharding, recompute=job.recompute,
                           micro_batch=job.micro_batch, seq_len=job.seq_len)
    except EngineError:
        return ""
    return f"; a well-tuned stack: about {e.tokens_per_s:,.0f} tokens/s ({format_percent(e.mfu)} MFU)"


def _jobs_table(state: cluster.ClusterState, busy: dict[str, float]) -> str:
    running = state.running_jobs()
    if not running:
        return tag("p", esc("No job is running."), class_="dgx-jobs-empty")
    colours = _job_colours(state)
    rows = []
    for job in running:
        progress = state.progress(job)
        rate = state.traffic_rate(job)
        if job.kind == "serve" and rate is not None:
            status = (f"serving {rate:g} requests/s, busy {format_percent(busy[job.id])} of "
                      "the time")
        elif job.kind == "serve":
            status = "serving, idle: no requests sent to it"
        else:
            status = (
                f"{progress.phase}, {format_percent(progress.progress)} done, "
                f"{progress.tokens_per_s:,.0f} tokens/s at {format_percent(job.mfu)} MFU, about "
                f"{format_seconds(progress.seconds_left)} left" + _expected_words(state, job)
            )
        swatch = tag("span", "", class_=f"swatch {colours[job.id]}", aria_hidden="true")
        rows.append(
            tag(
                "tr",
                tag("th", swatch + esc(job.id), scope="row")
                + tag("td", esc(_job_words(job)))
                + tag("td", esc(cluster.gpu_list(job.gpus)))
                + tag("td", esc(format_GB(job.bytes_per_gpu)))
                + tag("td", esc(status)),
                data_job=job.id,
            )
        )
    return _table(
        "Jobs running", ("Job", "What", "Where", "Memory per GPU", "Status"), rows, "dgx-jobs chart"
    )


def _log_item(entry: cluster.LogEntry) -> str:
    return tag(
        "li",
        tag("span", esc(clock_text(entry.time_seconds)), class_="dgx-log-time")
        + " "
        + tag("span", esc(entry.kind), class_=f"dgx-log-kind dgx-log-{entry.kind}")
        + " "
        + tag("span", esc(entry.message), class_="dgx-log-message"),
        data_kind=entry.kind,
    )


def _log(state: cluster.ClusterState) -> str:
    newest_first = list(reversed(state.log))
    recent = "".join(_log_item(e) for e in newest_first[:RECENT_LOG])
    out = tag("p", esc("Job log, newest first"), class_="dgx-log-title")
    out += tag("ul", recent, class_="dgx-log")
    older = newest_first[RECENT_LOG:]
    if older:
        out += tag(
            "details",
            tag("summary", esc(f"{len(older):,} older entries"))
            + tag("ul", "".join(_log_item(e) for e in older), class_="dgx-log"),
            class_="dgx-log-older",
        )
    return out


def panel_html(state: cluster.ClusterState, note: str = "") -> str:
    """The whole panel for ``state``; ``note`` says what the last button did."""
    system = state.system
    gpus = state.gpus()
    in_use = sum(1 for g in gpus if g.used_bytes > 0)
    # Each GPU's memory is in the table below; the total is the job log's first line.
    summary = (
        f"Simulated time {clock_text(state.clock_seconds)} (hours:minutes); {in_use} of "
        f"{system.gpu_count} GPUs hold memory."
    )
    out = tag("p", esc(summary), class_="dgx-summary")
    if note:
        out += tag("p", esc(note), class_="dgx-note")
    busy = busy_shares(state)
    return out + _gpu_table(state, busy) + _jobs_table(state, busy) + _log(state)
