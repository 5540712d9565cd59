"""Going further: dgx-1 grows into a pod of servers. A training job for Llama 3.1 70B or 405B
split by the reader into data, tensor and pipeline parallelism; the engine gives the step
time split into compute, exposed communication and pipeline bubble, the MFU that results,
and refuses splits that cannot work.
"""

from __future__ import annotations

from typing import Any

from engine.lesson.plans.fields import plan_commands
from engine.numbers import quantities
from engine.numbers.catalog import get_model, get_system
from engine.numbers.catalog.efficiency import training_defaults
from engine.numbers.memory import TrainingMemory
from engine.numbers.parallelism import pipeline_cut
from engine.numbers.plan import plan
from engine.render.cluster_fields import PP, SEQ_LEN, SERVERS, SHARDING, SYSTEM, TP
from engine.render.fields import Amount, Choice, Count
from engine.render.html import definition_list, esc, tag
from engine.render.secondary import secondary_list
from engine.render.step_bar import step_bar
from engine.render.widget import Command, Values, Widget
from engine.words.expected import BOUND_WORDS, EXPECTED_TRAINING_WORDS, at_best_and_expected
from engine.words.format import (
    format_bandwidth,
    format_count,
    format_GB,
    format_percent,
    format_seconds,
    plural,
)
from engine.words.sharding import tensor_parallel
from engine.words.training import train_warnings_words

MODELS = ("llama-3.1-70b", "llama-3.1-405b")
STEP_PARTS = (("compute", "part-0"), ("exposed communication", "part-4"),
              ("pipeline bubble", "part-5"), ("optimiser step", "part-2"))

MODEL = Choice("model", "Model", "llama-3.1-70b",
               options=tuple((m, get_model(m).name) for m in MODELS))
INTERLEAVE = Count("interleave", "Chunks per GPU", "1", unit="chunks", control_kind="select",
                   options=(("1", "1 (plain 1F1B)"), ("2", "2 (interleaved)"),
                            ("4", "4 (interleaved)")),
                   quantity=quantities.PIPELINE_CHUNKS)
CP = Count("cp", "Context parallel", "1", unit="GPUs", control_kind="select",
           options=(("1", "1 (none)"), ("2", "2"), ("4", "4"), ("8", "8"), ("16", "16")),
           quantity=quantities.CONTEXT_PARALLEL,
           hint="GPUs sharing each sequence (Llama 3 405B at 128K: 16).")
PRECISION = Choice("precision", "Matmuls", "bf16",
                   options=(("bf16", "BF16"), ("fp8", "FP8 (Transformer Engine)")))
# The run's length: it sets no figure shown here (a step's time and MFU are per step).
TOKENS = 1e12
GLOBAL_BATCH = Amount("global_batch", "Global batch", str(training_defaults().global_batch_tokens),
                      unit="tokens", quantity=quantities.GLOBAL_BATCH_TOKENS,
                      hint="Llama 3 405B: 4M, later 16M.")


def job(values: Values) -> dict[str, Any]:
    """plan()'s keywords for the job (the model aside): the MFU is the expected step's."""
    return {"hardware": get_system(SYSTEM).gpu.id, "task": "train", "nodes": values[SERVERS],
            "tp": values[TP], "pp": values[PP], "interleave": values[INTERLEAVE],
            "global_batch_tokens": values[GLOBAL_BATCH], "seq_len": SEQ_LEN,
            "sharding": SHARDING, "tokens": TOKENS, "cp": values[CP],
            "convention": "fp8" if values[PRECISION] == "fp8" else "mixed-16"}


def command(values: Values) -> Command:
    return plan_commands(values, MODEL, job(values))


def render(values: Values) -> str:
    model = get_model(values[MODEL])
    servers = values[SERVERS]
    p = plan(model=model, **job(values))
    t = p.train
    mem = p.memory
    assert t is not None and isinstance(mem, TrainingMemory)
    e = t.expected
    step = e.step
    split = (f"{mem.dp:,} data-parallel {'copy' if mem.dp == 1 else 'copies'} × "
             f"{tensor_parallel(mem.tp)} × {plural(mem.pp, 'pipeline stage')}"
             + (f" × {mem.cp} context-parallel GPUs per sequence" if mem.cp > 1 else ""))
    verdict = tag("p", esc(
        f"{plural(p.gpus, 'GPU')} in {plural(servers, 'server')} as {split}: one step of "
        f"{format_count(e.tokens_per_step)} tokens takes "
        f"{at_best_and_expected(t.bound_seconds_per_step, step.seconds)}; MFU {format_percent(e.mfu)}."),
        class_="widget-verdict " + ("fits" if mem.fits else "refused"))
    bar = step_bar([(name, css, s) for (name, css), s in zip(
        STEP_PARTS, (step.compute_seconds, step.exposed_communication_seconds,
                     step.bubble_seconds, step.optimizer_seconds), strict=True)],
        label=f"One training step of {model.name} on {plural(p.gpus, 'GPU')}, expected")
    stage_layers = pipeline_cut(model.layers, mem.pp, mem.pipeline_split).stage_places
    micro = e.accumulation
    facts = definition_list([
        ("Memory per GPU", f"{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)}"
         + (", it fits" if mem.fits else ", it does not fit: more stages or servers")),
        ("Layers per stage", f"{stage_layers} of {model.layers}"),
        ("Micro-batches per step, each pipeline",
         f"{micro:,}, each one sequence of {SEQ_LEN:,} tokens"),
        ("Pipeline idle (the bubble)",
         f"{format_percent(step.bubble_seconds / step.seconds)} of the step" if step.seconds else "none"),
        ("All communication per step (hidden or not)",
         format_seconds(e.communication_seconds_per_step)),
        ("MFU (model FLOPs ÷ the GPUs' dense peak)", format_percent(e.mfu)),
    ])
    words = (*train_warnings_words(e.warnings), BOUND_WORDS, EXPECTED_TRAINING_WORDS,
             f"Sequences of {SEQ_LEN:,} tokens, optimiser state sharded over the data-parallel "
             "GPUs (as Llama 3 was trained); the 1F1B pipeline schedule, interleaved when a "
             "GPU holds more than one chunk.",
             *(f"{b.name}: {format_bandwidth(b.value)}" for b in e.basis if "link" in b.name))
    notes = secondary_list("Assumptions", words)
    return verdict + bar + facts + notes


WIDGET = Widget(
    name="cluster_training",
    title="dgx-1 grows into a cluster",
    fields=(MODEL, SERVERS, TP, PP, INTERLEAVE, GLOBAL_BATCH, CP, PRECISION),
    render=render,
    command=command,
    summary="A training job on a pod of dgx-1 servers, split by the reader into data, tensor, "
    "pipeline and context parallelism, its matmuls in BF16 or FP8: the step time as compute, exposed communication and pipeline "
    "bubble, and the MFU.",
)
