"""docs/steps/train-it-anyway.md: launch a training job on the simulated dgx-1 and watch the arithmetic refuse it.

The job goes to :func:`engine.lesson.cluster.launch_training`, which admits or refuses it before it
starts. A refusal shows the arithmetic and the ways out the engine found, each with its
numbers and a button ("Apply way out N") that submits it through
:func:`engine.lesson.cluster.try_way_out`. The widget shares the store ``session:dgx-1`` with the
dgx-1 panel, so both show the same simulated server.
"""

from __future__ import annotations

from engine.lesson import cluster, dgx_view
from engine.numbers import memory
from engine.numbers.catalog import get_system
from engine.numbers.errors import EngineError
from engine.numbers.training_choices import SHARDINGS
from engine.render.charts import memory_bar
from engine.render.fields import Choice, one_of
from engine.render.html import esc, tag
from engine.render.options import catalog_model_field, noting_your_model
from engine.render.secondary import secondary_list
from engine.render.widget import Action, Rendered, Values, Widget
from engine.words.format import format_GB
from engine.words.labels import SHARDING_LABELS

MAX_WAYS_OUT = 6  # the engine proposes at most six (other GPUs, two ZeRO-3 counts, ...)
ENGINE_FIELDS = {"model_id": "model", "gpus": "gpus", "sharding": "sharding"}
SAME_ANSWER = "Same inputs, same arithmetic, same answer."
REFUSED = "Refused before it starts"  # the verdict heading; the engine's message opens with it


def _without_heading(message: str) -> str:
    """The engine's message without the words the heading above it already says:
    'Refused before it starts: training ...' -> 'Training ...'."""
    if message.startswith(REFUSED + ": "):
        rest = message[len(REFUSED) + 2 :]
        return rest[:1].upper() + rest[1:]
    return message


def gpu_choices(count: int) -> dict[str, tuple[int, ...]]:
    """GPU sets offered by the select: one, two, the first half, the second half, all."""
    half = count // 2
    out = {"0": (0,), "0-1": (0, 1), f"0-{half - 1}": tuple(range(half))}
    out[f"{half}-{count - 1}"] = tuple(range(half, count))
    out[f"0-{count - 1}"] = tuple(range(count))
    return out


def _gpu_label(key: str, gpus: tuple[int, ...], count: int) -> str:
    if len(gpus) == 1:
        return f"GPU {gpus[0]}"
    if len(gpus) == count:
        return f"all {count} GPUs"
    return f"GPUs {key}"


def _gpu_options() -> tuple[tuple[str, str], ...]:
    count = get_system(dgx_view.SYSTEM).gpu_count
    return tuple((k, _gpu_label(k, g, count)) for k, g in gpu_choices(count).items())


def _arithmetic(lines: tuple[str, ...]) -> str:
    items = "".join(tag("li", esc(line)) for line in lines)
    return tag("p", esc("The arithmetic:"), class_="launch-heading") + tag(
        "ol", items, class_="launch-arithmetic"
    )


def _memory_chart(result: cluster.ActionResult) -> str:
    """The job's memory per GPU, part by part, against one GPU's capacity."""
    job = result.job
    if job is None or job.kind != "train":
        return ""
    system = result.state.system
    mem = memory.training_memory(
        cluster.model_named(job.model_id),
        system.gpu,
        gpus=len(job.gpus),
        sharding=job.sharding,
        optimizer=job.optimizer,
        recompute=job.recompute,
        seq_len=job.seq_len,
        micro_batch=job.micro_batch,
    )
    where = "one GPU" if len(job.gpus) == 1 else f"each of {len(job.gpus)} GPUs"
    return memory_bar(
        mem.parts, mem.capacity_bytes, label=f"Training memory on {where}"
    )


def _ways_out(ways: tuple[cluster.WayOut, ...]) -> str:
    if not ways:
        return ""
    items = []
    for i, way in enumerate(ways[:MAX_WAYS_OUT]):
        head = tag("strong", esc(f"Way out {i + 1}: {way.label}."))
        text = " " + esc(way.text)
        if way.action:
            press = tag("em", esc(f" Press “Apply way out {i + 1}” to submit it."))
            items.append(tag("li", head + text + press, data_way_out=i))
        else:
            items.append(tag("li", head + text))
    intro = "What would work, each checked by the same arithmetic:"
    return tag("p", esc(intro), class_="launch-heading") + tag(
        "ol", "".join(items), class_="launch-ways"
    )


def _assumptions(result: cluster.ActionResult) -> str:
    if not result.assumptions:
        return ""
    return secondary_list("Assumptions", result.assumptions)


def result_html(result: cluster.ActionResult, note: str = "") -> str:
    """What an action did: verdict, the engine's message, the arithmetic, the ways out."""
    if result.accepted:
        verdict = tag("p", esc("Accepted: the job starts."), class_="widget-verdict fits")
        after = (
            "Watch it on the dgx-1 panel: its GPUs now hold its memory, and advancing the clock "
            "moves the training on."
        )
    else:
        verdict = tag("p", esc(REFUSED + "."), class_="widget-verdict refused")
        after = ""
    out = verdict + tag("p", esc(_without_heading(result.message)), class_="launch-message")
    if note:
        out += tag("p", esc(note), class_="launch-note")
    out += _arithmetic(result.arithmetic) + _memory_chart(result) + _ways_out(result.ways_out)
    if after:
        out += tag("p", esc(after))
    return out + _assumptions(result)


def _retry_note(result: cluster.ActionResult, previous: cluster.LogEntry | None) -> str:
    if result.accepted:
        return (
            "Accepted on this try because something changed since the last one (the inputs, "
            "or memory freed on the GPUs): retrying the same job on the same GPUs never "
            "changes the answer."
        )
    if previous is not None and previous.message == result.message:
        return (
            f"Retried: refused again, word for word. {SAME_ANSWER} The job never started, "
            "so there was nothing to fail by chance."
        )
    return f"Refused. {SAME_ANSWER} Press Retry to see it."


def _last_refusal(state: cluster.ClusterState) -> cluster.LogEntry | None:
    for entry in reversed(state.log):
        if entry.kind == "refused":
            return entry
    return None


def _preview(state: cluster.ClusterState, model_id: str, gpus: tuple[int, ...]) -> str:
    """Before any button: the memory free on the job's GPUs now (the form above names the
    model, GPUs and sharding)."""
    cluster.model_named(model_id)  # a model it does not know is refused here, by name
    free = min(state.free_bytes()[g] for g in gpus)
    where = f"GPU {gpus[0]}" if len(gpus) == 1 else f"GPUs {gpus[0]}-{gpus[-1]}"
    free_words = (
        f"{where} has {format_GB(free)} free"
        if len(gpus) == 1
        else f"{where} have at least {format_GB(free)} free each"
    )
    text = f"Not submitted yet: {free_words}."
    return tag("p", esc(text), class_="launch-ready")


def _way_out_index(action: str) -> int:
    digits = action.removeprefix("way-out-")
    if not digits.isdigit() or int(digits) >= MAX_WAYS_OUT:
        raise EngineError(f"There is no button {action[:40]!r}.", "action")
    return int(digits)


MODEL = catalog_model_field(library=True)
GPUS = Choice("gpus", "GPUs to use", "0", options=_gpu_options())
SHARDING = one_of("sharding", "Sharding", "none", SHARDINGS, SHARDING_LABELS)


def render(values: Values) -> Rendered:
    state = dgx_view.load_state(values[dgx_view.state_field()])
    model_id = values[MODEL]
    gpus = gpu_choices(state.system.gpu_count)[values[GPUS]]
    sharding = values[SHARDING]
    action = values.action
    try:
        if action in ("launch", "retry"):
            previous = _last_refusal(state)
            result = cluster.launch_training(state, model_id, gpus, sharding)
            note = _retry_note(result, previous) if action == "retry" else ""
            return Rendered(result_html(result, note), {"state": dgx_view.dump_state(result.state)})
        if action.startswith("way-out-"):
            index = _way_out_index(action)
            dry = cluster.launch_training(state, model_id, gpus, sharding)  # state discarded
            if dry.accepted:
                raise EngineError(
                    "This job fits as it is set, so there is no way out to apply: press "
                    "“Launch training”.",
                    "action",
                )
            ways = dry.ways_out
            if index >= len(ways) or not ways[index].action:
                raise EngineError(
                    f"There is no way out {index + 1} to apply for this job now; the list "
                    "shows the ones there are.",
                    "action",
                )
            result = cluster.try_way_out(state, ways[index])
            note = f"Applied way out {index + 1}: {ways[index].label}."
            return Rendered(result_html(result, note), {"state": dgx_view.dump_state(result.state)})
    except EngineError as error:
        raise dgx_view.with_field(error, ENGINE_FIELDS) from None
    return Rendered(_preview(state, model_id, gpus))


WIDGET = Widget(
    name="launch_training",
    title="Launch a training job on dgx-1",
    fields=(MODEL, GPUS, SHARDING, dgx_view.state_field()),
    actions=(
        Action("launch", "Launch training", primary=True),
        Action("retry", "Retry"),
        *(Action(f"way-out-{i}", f"Apply way out {i + 1}", hidden=True)
          for i in range(MAX_WAYS_OUT)),
    ),
    render=noting_your_model(render, MODEL),
    store=dgx_view.STORE,
    summary="Submit a training job to the simulated dgx-1: admitted or refused before it "
    "starts, by arithmetic; a refusal lists the ways out, each with its numbers.",
)
