"""docs/steps/playground.md: the playground. Every input of :func:`engine.numbers.plan.plan` at once, over the whole
catalogue, with the full plan: the five answers, memory against capacity, the serving
timeline or the training time, and the cost.

Every visible input is mirrored in the page address (``url_state``), so the address bar is
a link to the exact state on screen. Inputs that apply only to the other task are still
checked: one that task would refuse is kept as typed, with a note beside it saying so.

"Your model (paste a config.json)" reads the pasted text with
:mod:`engine.numbers.catalog.hf_config` (here, in the reader's browser: nothing is sent
anywhere) and every figure follows the model it describes. The text box is shown, and read,
only when that choice is made; the address carries it compressed when it is long, or, past
:data:`~engine.render.options.ADDRESS_MAX_LINK_CHARS`, the tab keeps it (the page says so
beside "Copy link"). "Pin as A" keeps the inputs on screen as plan A (in the address too),
and until "Unpin A" the result sets A beside the plan on screen, figure by figure
(:mod:`engine.lesson.plans.pinned`). "Your own chip (type its figures)" in the hardware select
likewise shows a small form (memory, bandwidth, dense peaks by format; the price is the plan's
own field), read as the command line reads ``--hardware-spec``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.lesson.plans.compare_view import comparison_to_dict
from engine.lesson.plans.config_model import config_notes, library_source, shape_rows
from engine.lesson.plans.fields import (
    CHIP_FILE,
    PLAN_FIELDS,
    context_notes,
    model_flags,
    plan_arguments,
    plan_command,
    plan_flags,
    unused_task_notes,
)
from engine.lesson.plans.own_chip import CHIP_FIELDS, HARDWARE_OR_OWN, own_chip, spec_text
from engine.lesson.plans.pinned import (
    PINNED,
    Side,
    compare_command,
    comparison_html,
    pin_text,
    pinned_inputs,
    refused_words,
)
from engine.lesson.plans.plan_json import plan_json
from engine.numbers.catalog import ModelSpec
from engine.numbers.catalog.config_library import is_library_id, library_entry
from engine.numbers.catalog.hf_config import ConfigModel
from engine.numbers.catalog.user_hardware import FIGURES_ARE_THE_USERS
from engine.numbers.compare import compare_plans
from engine.numbers.errors import EngineError
from engine.numbers.expected_training import expected_train
from engine.numbers.memory import ServingMemory, TrainingMemory
from engine.numbers.plan import CHINCHILLA_TOKENS_PER_PARAM, Plan, plan
from engine.numbers.serving import request_timeline
from engine.render.charts import memory_bar, timeline
from engine.render.html import definition_list, esc, tag
from engine.render.options import (
    CONFIG,
    MODEL,
    MODEL_OR_CONFIG,
    library_read,
    model_from,
    pasted_config,
)
from engine.render.secondary import plain_list, secondary
from engine.render.widget import Action, Command, Rendered, Values, Widget
from engine.words import format as fmt
from engine.words.answers import QUESTIONS, answers
from engine.words.expected import (
    BOUND_WORDS,
    EXPECTED_SERVING_WORDS,
    EXPECTED_TRAINING_WORDS,
    at_best_and_expected,
    together_words,
    ttft_basis_words,
)
from engine.words.memory_explained import memory_assumptions
from engine.words.training import train_warnings_words


def chosen_model(values: Values) -> tuple[ModelSpec, ConfigModel | None]:
    """The model the inputs name, and the config it was read from when it was pasted or is
    the config library's.

    The pasted config is read only when its choice is made (the box is hidden otherwise);
    the typed count is checked even when unused, as the address carries it all the same.
    """
    read = pasted_config(values, MODEL_OR_CONFIG) or library_read(values, MODEL_OR_CONFIG)
    if read is not None:
        return read.model, read
    return model_from(values), None


def _config_part(read: ConfigModel, model_id: str) -> str:
    """What the config reader read of the pasted config.json, or of the library model
    ``model_id``'s (with where that config.json was found)."""
    notes = config_notes(read)
    items = tag("ul", "".join(tag("li", esc(n)) for n in notes), class_="widget-notes") \
        if notes else ""
    if is_library_id(model_id):
        heading = f"{model_id}, as read from its config.json"
        where = tag("p", esc(library_source(library_entry(model_id))), class_="config-source")
    else:
        heading, where = "Your model, as read from its config.json", ""
    return (tag("h2", esc(heading), class_="playground-heading") + where
            + definition_list(shape_rows(read)) + items)


def _chip_part(values: Values) -> str:
    note = (f"{FIGURES_ARE_THE_USERS} The expected values use the default efficiencies (the "
            f"measured ones belong to catalogue chips), and it is one card on a PCIe host link. "
            f"Saved as {CHIP_FILE}, this is what the command line below reads:")
    return (tag("h2", "Your chip", class_="playground-heading") + tag("p", esc(note))
            + tag("pre", tag("code", esc(spec_text(values))), class_="chip-spec"))


# The plan's fields as the playground asks them: the hardware select offers the reader's own.
_PLAN_FIELDS = {**PLAN_FIELDS, "hardware": HARDWARE_OR_OWN}


@dataclass(frozen=True, slots=True)
class Part:
    """The serving or training part of the plan: HTML shown as the page opens (a heading,
    the chart, the headline figures) and HTML for the closed details (the rest)."""

    shown: str
    more: str


def _unit(p: Plan) -> str:
    unit = "GPU" if p.hardware.kind == "gpu" else "chip"
    return f"{p.gpus:,} {unit}{'s' if p.gpus > 1 else ''}"


def _serve_part(p: Plan) -> Part:
    mem = p.memory
    assert isinstance(mem, ServingMemory) and p.serve is not None
    s = p.serve
    run = request_timeline(
        p.model,
        p.hardware,
        prompt_tokens=s.prompt_tokens,
        output_tokens=s.output_tokens,
        batch=mem.batch,
        weight_format=mem.weight_format,
        kv_format=mem.kv_format,
        gpus=p.gpus,
        joining=True,
        offload=s.offload,
    )
    basis = ttft_basis_words(mem.batch)
    chart = timeline(
        [(ph.name, ph.kind, ph.start_seconds, ph.length_seconds) for ph in run.phases],
        label=f"One request of {s.prompt_tokens:,} tokens in, {s.output_tokens:,} out: "
        f"{basis}",
        marker_seconds=run.ttft_seconds,
        marker_label="first token",
    )
    e = s.expected
    headline = definition_list(
        [
            (
                "Time to first token",
                f"{at_best_and_expected(s.ttft_at_batch_seconds, e.ttft_seconds)} "
                f"({s.joining.bound}-bound; {basis}"
                + (f". On an idle server "
                   f"{at_best_and_expected(s.ttft_seconds, e.ttft_idle_seconds)}; "
                   f"{together_words(mem.batch)}, "
                   f"{at_best_and_expected(s.prefill.seconds, e.prefill_seconds)})"
                   if mem.batch > 1 else ")"),
            ),
            (
                "Time per output token",
                f"{at_best_and_expected(s.tpot_seconds, s.expected.decode_seconds_per_token)} "
                f"({s.first_step.bound}-bound)",
            ),
        ]
    )
    more = definition_list(
        [
            ("Tokens/s per user", f"{s.tokens_per_s_per_user:,.1f}"),
            ("Tokens/s, whole batch", f"{mem.batch * s.tokens_per_s_per_user:,.1f}"),
            ("Whole request", fmt.format_seconds(s.request_seconds_at_batch)),
            ("KV cache per token", f"{fmt.format_bytes(mem.kv_cache_bytes_per_token)}"),
            (
                f"Requests of {mem.context_tokens:,} tokens that fit",
                f"{mem.max_concurrent_requests:,}",
            ),
        ]
    )
    notes = plain_list((BOUND_WORDS, EXPECTED_SERVING_WORDS))
    return Part(tag("h2", "Serving timeline", class_="playground-heading") + chart + headline,
                more + notes)


def _train_part(p: Plan) -> Part:
    t = p.train
    assert t is not None
    tokens_words = (
        fmt.format_count(t.tokens)
        if t.tokens_given
        else f"{fmt.format_count(t.tokens)} ({CHINCHILLA_TOKENS_PER_PARAM} per parameter)"
    )
    rows = [
        ("Training tokens", tokens_words),
        ("Training FLOPs (what MFU counts)", fmt.format_flops(t.model_flops)),
    ]
    if t.total_flops > t.model_flops:
        rows.append((f"Executed, with {t.per_token.recompute_mode} recomputation",
                     fmt.format_flops(t.total_flops)))
    rows += [
        (
            "Peak per GPU",
            f"{fmt.format_TFLOP_per_s(t.peak_flops_per_s)} ({t.compute_format}) × {fmt.format_percent(t.mfu)} MFU",
        ),
        ("Training tokens/s", f"{t.tokens_per_s:,.0f}"),
    ]
    if t.gpus_for_target is not None and t.target_days is not None:
        rows.append((f"GPUs to finish in {t.target_days:g} days", f"{t.gpus_for_target:,}"))
    mem = p.memory
    modelled = expected_train(p.model, p.hardware, tokens=t.tokens, gpus=p.gpus, tp=mem.tp,
                              sharding=mem.sharding, micro_batch=mem.micro_batch,
                              seq_len=mem.seq_len, recompute=mem.recompute,
                              compute_format=t.compute_format) \
        if isinstance(mem, TrainingMemory) else t.expected
    rows.append(("MFU a tuned stack reaches here", fmt.format_percent(modelled.mfu)))
    headline = definition_list([
        (f"Training time at {fmt.format_percent(t.mfu)} MFU", fmt.format_seconds(t.seconds)),
        ("Training time with a tuned stack",
         at_best_and_expected(t.bound_seconds, modelled.seconds)),
    ])
    notes = plain_list((BOUND_WORDS, EXPECTED_TRAINING_WORDS,
                        *train_warnings_words(modelled.warnings)))
    return Part(tag("h2", "Training time", class_="playground-heading") + headline,
                definition_list(rows) + notes)


def planned(values: Values) -> tuple[Plan, ConfigModel | None]:
    """The plan the inputs describe, and the config it was read from (pasted or the
    library's)."""
    model, read = chosen_model(values)
    # Only the inputs the current choices show: a field they hide (the typed parameter count
    # beside a catalogue model) is neither read nor checked, so an error never sits where the
    # reader cannot see it. The other task's inputs do not block this one's plan: one that
    # task would refuse is kept as typed, with a note beside it.
    arguments = plan_arguments(values, _PLAN_FIELDS, every_task=False)
    chip = own_chip(values)
    if chip is not None:
        arguments["hardware"] = chip.hardware
    return plan(model=model, **arguments), read


def _pinned_now(values: Values) -> str:
    """Plan A's inputs as this render leaves them: pinned now ("Pin as A"), cleared
    ("Unpin"), or as they were (empty: none pinned)."""
    if values.action == "pin":
        return pin_text(values, _PINNED_INPUTS)
    return "" if values.action == "unpin" else values.text(PINNED.name)


def _pinned_values(text: str) -> Values:
    """Plan A's inputs, checked (:func:`pinned_inputs`)."""
    return Values(pinned_inputs(text, {f.name: f.default for f in FIELDS}))


def _compared(text: str, b: Plan, read_b: ConfigModel | None
              ) -> tuple[str, dict[str, object] | None]:
    """Plan A (pinned as ``text``) against ``b``: the section that shows them, and the JSON
    the compare command prints; where A is refused, a section saying why, naming A's input,
    and no JSON (B's plan stands as it is)."""
    try:
        a, read_a = planned(_pinned_values(text))
    except EngineError as error:
        labels = {f.name: f.label for f in FIELDS}
        return tag("section", tag("p", esc(refused_words(error, labels)),
                                  class_="widget-error-text"),
                   class_="playground-compare", data_pinned="refused"), None
    comparison = compare_plans(a, b)
    html = tag("section", comparison_html(a, b, comparison), class_="playground-compare",
               data_pinned="shown")
    return html, comparison_to_dict(plan_json(a, read_a), plan_json(b, read_b), comparison)


def render(values: Values) -> Rendered:
    p, read = planned(values)
    pinned = _pinned_now(values)
    compared, compared_json = _compared(pinned, p, read) if pinned else ("", None)
    notes = {**unused_task_notes(values), **context_notes(p)}
    mem = p.memory
    what = "Serving" if p.task == "serve" else "Training"
    verdict = (
        f"{what} {p.model.name} on {_unit(p)} ({p.hardware.name}): "
        + ("it fits." if mem.fits else "it does not fit.")
    )
    head = tag(
        "p",
        esc(verdict),
        class_="widget-verdict " + ("fits" if mem.fits else "refused"),
        data_fits="true" if mem.fits else "false",
    )
    bar = memory_bar(
        mem.parts, mem.capacity_bytes, label=f"Memory of one {p.hardware.name}"
    )
    answered = answers(p)
    items = "".join(
        tag("li", tag("strong", esc(question)) + " " + esc(answered[key]), data_question=key)
        for key, question in QUESTIONS
    )
    speed = _serve_part(p) if p.task == "serve" else _train_part(p)
    more = (
        speed.more
        + tag("h3", "The five answers")
        + tag("ol", items, class_="playground-answers")
        + tag("h3", "Assumptions")
        + plain_list(memory_assumptions(mem))
    )
    return Rendered(
        head
        + compared
        + (_config_part(read, values[MODEL_OR_CONFIG]) if read else "")
        + (_chip_part(values) if own_chip(values) is not None else "")
        + tag("h2", "Memory per GPU", class_="playground-heading")
        + bar
        + speed.shown
        + secondary("Figures, answers, assumptions", more),
        set_inputs={PINNED.name: pinned} if values.action in ("pin", "unpin") else {},
        notes=notes,
        result_json=compared_json or plan_json(p, read),
    )


def command(values: Values) -> Command:
    """The plan's line, with the pasted config.json and the reader's chip as the files it
    reads; for training, the same line without ``--mfu`` too (the command line then models
    the MFU, as the tuned stack's figures here do). With a plan pinned as A, the command
    line's ``compare`` of A and this plan instead (for training, again without ``--mfu``)."""
    pinned = _pinned_now(values)
    if pinned:
        try:
            compared = compare_command(_side(_pinned_values(pinned)), _side(values))
        except EngineError:
            pass  # A is refused (the result says why): this plan's own line stands
        else:
            line = compared.lines[0]
            modelled = re.sub(r" --mfu \S+", "", line)
            if modelled.endswith(" --vs"):  # B differed from A by its MFU alone
                modelled += " --task train"
            return Command((line,) if modelled == line else (line, modelled), compared.files)
    files = _side(values).files
    line = plan_command(values, _PLAN_FIELDS)
    modelled = re.sub(r" --mfu \S+", "", line, count=1)
    return Command((line,) if modelled == line else (line, modelled), files)


def _side(values: Values) -> Side:
    """The plan's command-line flags and the files they read (a pasted config, a chip)."""
    _, files = model_flags(values)
    if own_chip(values) is not None:
        files += ((CHIP_FILE, spec_text(values)),)
    return Side(plan_flags(values, _PLAN_FIELDS), files)


# Units that only repeat their field's label ("Pipeline stages: stages"), dropped here.
_LABEL_UNITS = ("stages", "chunks", "servers", "layers")

# Every plan field, without the hints the calculators give one at a time (the page says once
# that the other task's inputs wait); the fields shown for one model choice keep theirs.
FIELDS = (*(
    g for f in PLAN_FIELDS.values()
    for g in ((MODEL_OR_CONFIG,) if f.name == MODEL.name else
              (f, CONFIG) if f.name == "params" else
              (HARDWARE_OR_OWN, *CHIP_FIELDS) if f.name == HARDWARE_OR_OWN.name else
              (f.but(hint="", unit="") if f.unit in _LABEL_UNITS else f.but(hint=""),))
), PINNED)
# The inputs a pinned plan keeps: every input the reader sets.
_PINNED_INPUTS = tuple(f.name for f in FIELDS if f.control_kind != "hidden")

WIDGET = Widget(
    name="playground",
    title="Playground: the whole engine",
    fields=FIELDS,
    render=render,
    command=command,
    # Pin the plan on screen as A, change anything, and A and B are compared side by side.
    actions=(Action("pin", "Pin as A"), Action("unpin", "Unpin A", hidden=True)),
    summary="Every input of the plan at once (model, or your own config.json, hardware, or your own chip, GPUs, serve or train, formats, "
    "context, batch, layers on the GPU (the rest offloaded), tokens, MFU, sharding, tensor, pipeline, expert and context parallel, "
    "optimiser, convention (fp8 among them), recomputation, price): the five answers, memory against capacity, the timeline or "
    "training time, the cost. The page address holds every input.",
    url_state=(*_PINNED_INPUTS, PINNED.name),
)
