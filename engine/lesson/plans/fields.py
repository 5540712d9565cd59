"""The inputs of :func:`engine.lesson.plans.plan_json.plan`, each declared once as a field.

One table, :data:`PLAN_FIELDS` (plan's keyword -> field), builds the playground's controls and
its address state (the field names), the command line's flags (``--context``, ``--kv-format``:
the same names) and parses both into the typed values :func:`plan` takes. A widget that asks
only some of these questions (five_questions) reuses the same fields, relabelled, and
:func:`plan_command` writes any of them back as the command line that gives the same plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from engine.numbers import quantities
from engine.numbers.adapter_setup import ADAPTER_CHOICES, PLAN_TARGETS
from engine.numbers.adapters import DEFAULT_RANK
from engine.numbers.catalog.efficiency import training_defaults
from engine.numbers.compute import DEFAULT_MFU
from engine.numbers.errors import EngineError
from engine.numbers.formats import FormatId
from engine.numbers.memory import (
    CONVENTIONS,
    OPTIMIZERS,
    RECOMPUTE,
    SHARDINGS,
    ServingMemory,
    TrainingMemory,
)
from engine.numbers.plan import CHINCHILLA_TOKENS_PER_PARAM, TASKS, Plan
from engine.numbers.training_choices import (
    ATTENTION_KERNELS,
    GRAD_REDUCES,
    KERNELS,
    PARAM_GATHERS,
    PIPELINE_SPLITS,
    TP_COMMS,
)
from engine.render.fields import Choice, Count, Field, OptionalAmount, Values
from engine.render.options import (
    BATCH,
    CONFIG,
    CONTEXT,
    CUSTOM_MODEL,
    GPUS,
    MFU,
    MICRO_BATCH,
    MODEL,
    MODEL_OR_CONFIG,
    PARAMS,
    SEQ_LEN,
    TENSOR_PARALLEL,
    TRAINING_TOKENS,
    YOUR_MODEL,
    format_field,
    hardware_field,
)
from engine.render.widget import Command
from engine.words.adapters_explained import ADAPTER_CHOICE_LABELS, PLAN_TARGET_LABELS
from engine.words.field_notes import context_beyond_note, unused_input_note
from engine.words.labels import (
    ATTENTION_KERNEL_LABELS,
    CONVENTION_LABELS,
    GRAD_REDUCE_LABELS,
    KERNEL_LABELS,
    OPTIMIZER_LABELS,
    PARAM_GATHER_LABELS,
    PIPELINE_SPLIT_LABELS,
    RECOMPUTE_LABELS,
    SHARDING_LABELS,
    TASK_LABELS,
    TP_COMM_LABELS,
)

# The KV cache formats some runtime offers (each format's kv_cache says which).
KV_FORMATS: tuple[FormatId, ...] = ("fp32", "bf16", "fp16", "fp8", "int8", "q8_0", "q4_0")

TRAINING = "Training."
SERVING = "Serving."


def _choice(name: str, label: str, default: str, labels: dict[str, str], keys: tuple[str, ...],
            hint: str = TRAINING) -> Choice:
    """A select over the engine's ``keys``, each shown with its words from ``labels``."""
    return Choice(name, label, default, options=tuple((k, labels[k]) for k in keys), hint=hint)


# plan()'s keyword -> the field that asks for it (its name is the address key and CLI flag).
PLAN_FIELDS: dict[str, Field[Any]] = {
    "model": MODEL,
    "params": PARAMS,
    "hardware": hardware_field("Hardware", gpus_only=False),
    "gpus": GPUS.but(label="GPUs (or chips)"),
    "task": Choice("task", "Task", "serve", options=tuple((t, TASK_LABELS[t]) for t in TASKS)),
    "weight_format": format_field("format", "Weights stored as", "bf16", hint=SERVING),
    "kv_format": format_field("kv_format", "KV cache stored as", "bf16", *KV_FORMATS,
                              hint=SERVING),
    "context_tokens": CONTEXT.but(hint=SERVING),
    "batch": BATCH.but(label="Concurrent requests (batch)", hint=SERVING),
    "prompt_tokens": Count(
        "prompt", "Prompt length", str(quantities.TYPICAL_PROMPT_TOKENS), unit="tokens", hint=SERVING,
        quantity=quantities.PROMPT_TOKENS,
    ),
    "output_tokens": Count(
        "output", "Answer length", str(quantities.TYPICAL_OUTPUT_TOKENS), unit="tokens", hint=SERVING,
        quantity=quantities.OUTPUT_TOKENS,
    ),
    "gpu_layers": OptionalAmount(
        "gpu_layers", "Layers on the GPU", "", unit="layers", quantity=quantities.GPU_LAYERS,
        hint="Serving. Empty: all. Fewer leaves the rest in host memory, read over the host "
             "link every pass (llama.cpp's -ngl).",
    ),
    "tokens": OptionalAmount(
        "tokens",
        "Training tokens",
        "",
        unit="tokens",
        hint=f"Training. Empty: {CHINCHILLA_TOKENS_PER_PARAM} per parameter.",
        quantity=TRAINING_TOKENS.quantity,
    ),
    "mfu": MFU.but(default=str(DEFAULT_MFU), hint="Training. On the CLI, omit it to model MFU."),
    "target_days": OptionalAmount(
        "target_days", "Finish within", "", unit="days", hint="Training. Optional.",
        quantity=quantities.TARGET_DAYS,
    ),
    "sharding": _choice("sharding", "Sharding", "none", SHARDING_LABELS, SHARDINGS),
    "tp": TENSOR_PARALLEL.but(
        hint="Training: divides the GPU count. Serving: all GPUs unless given."
    ),
    "pp": Count("pp", "Pipeline stages", "1", unit="stages", quantity=quantities.PIPELINE_STAGES,
                hint=TRAINING),
    "interleave": Count(
        "interleave", "Pipeline chunks per GPU", "1", unit="chunks",
        quantity=quantities.PIPELINE_CHUNKS,
        hint="Training: above 1, interleaved.",
    ),
    "ep": OptionalAmount(
        "ep", "Expert parallel size", "", unit="GPUs", quantity=quantities.EXPERT_PARALLEL,
        hint="Mixtures of experts. Serving: the routed experts in that many groups of each "
             "replica's GPUs (divides the experts and the replica's GPUs; empty: 1, tensor "
             "parallel only). Training: empty is min(experts, data-parallel size).",
    ),
    "cp": Count("cp", "Context parallel size", "1", unit="GPUs",
                quantity=quantities.CONTEXT_PARALLEL,
                hint="Training: GPUs sharing each sequence (GPUs = dp x tp x pp x cp)."),
    "adapter": _choice(
        "adapter", "Fine-tune with adapters", "none", ADAPTER_CHOICE_LABELS, ADAPTER_CHOICES,
        hint="Training: LoRA or QLoRA adapters on a frozen base, data parallel only.",
    ),
    "rank": Count("rank", "Adapter rank", str(DEFAULT_RANK), unit="", quantity=quantities.LORA_RANK,
                  hint="Training with adapters."),
    "targets": _choice("targets", "Adapters on", "all", PLAN_TARGET_LABELS,
                       tuple(PLAN_TARGETS), hint="Training with adapters."),
    "global_batch_tokens": OptionalAmount(
        "global_batch", "Global batch", "", unit="tokens", quantity=quantities.GLOBAL_BATCH_TOKENS,
        hint=f"Training. Empty: {training_defaults().global_batch_tokens:,}.",
    ),
    "nodes": OptionalAmount(
        "nodes", "Servers", "", unit="servers", quantity=quantities.SERVERS,
        hint="Empty: the GPU count as given.",
    ),
    "optimizer": _choice("optimizer", "Optimiser", "adam", OPTIMIZER_LABELS, OPTIMIZERS),
    "convention": _choice(
        "convention", "Precision convention", "mixed-16", CONVENTION_LABELS, CONVENTIONS,
        hint="Training. fp8: the layers' matmuls in fp8, as Transformer Engine runs them.",
    ),
    "recompute": _choice(
        "recompute", "Activation recomputation", "selective", RECOMPUTE_LABELS, RECOMPUTE
    ),
    "kernels": _choice(
        "kernels", "Kernel stack", "fused", KERNEL_LABELS, KERNELS,
        hint="Training: how the norms, rotary embedding and activation run.",
    ),
    "micro_batch": MICRO_BATCH.but(hint=TRAINING),
    "seq_len": SEQ_LEN.but(hint=TRAINING),
    "usd_per_gpu_hour": OptionalAmount(
        "price",
        "Price per GPU-hour",
        "",
        unit="USD",
        hint="Empty: the catalogue's cloud price.",
        quantity=quantities.USD_PER_GPU_HOUR,
    ),
}
SERVE_ONLY = ("weight_format", "kv_format", "context_tokens", "batch", "prompt_tokens",
              "output_tokens", "gpu_layers")
TRAIN_ONLY = ("tokens", "mfu", "target_days", "sharding", "tp", "optimizer", "convention",
              "recompute", "micro_batch", "seq_len", "pp", "interleave", "global_batch_tokens",
              "cp", "adapter", "rank", "targets", "kernels")
# The command line's plan fields: PLAN_FIELDS, and a stack's choices the lesson's pages do not
# ask about (the playground and its address keep PLAN_FIELDS), each read for training only.
CLI_ONLY_FIELDS: dict[str, Field[Any]] = {
    "attention": _choice(
        "attention", "Attention kernel", "fa2", ATTENTION_KERNEL_LABELS, ATTENTION_KERNELS,
        hint="Training: the stack's attention kernel, timed at its measured rates (triton: "
             "the Triton port of FlashAttention that LLM Foundry's MPT ran; cudnn: cuDNN's "
             "fused attention, Transformer Engine's on Hopper).",
    ),
    "tp_comm": _choice(
        "tp_comm", "Tensor-parallel communication", "exposed", TP_COMM_LABELS, TP_COMMS,
        hint="Training: overlapped runs the tensor-parallel collectives under the GEMMs "
             "(Megatron-LM's --tp-comm-overlap).",
    ),
    "grad_reduce": _choice(
        "grad_reduce", "Gradient reduction", "bf16", GRAD_REDUCE_LABELS, GRAD_REDUCES,
        hint="Training: the format the gradients cross the data-parallel network in "
             "(fp32: Megatron-LM's and torchtitan's default for BF16 training).",
    ),
    "param_gather": _choice(
        "param_gather", "Parameter gather", "overlapped", PARAM_GATHER_LABELS,
        PARAM_GATHERS,
        hint="Training, ZeRO-1/2: where the updated weights are gathered, beside the next "
             "forward pass or after the step (DeepSpeed).",
    ),
    "pipeline_split": _choice(
        "pipeline_split", "Pipeline split", "layers", PIPELINE_SPLIT_LABELS, PIPELINE_SPLITS,
        hint="Training, pipelines: embedding-and-loss gives the embedding and the loss one "
             "layer's place each in the cut, as the Llama 3 405B run did.",
    ),
}
CLI_PLAN_FIELDS: dict[str, Field[Any]] = {**PLAN_FIELDS, **CLI_ONLY_FIELDS}


def task_field_names(task: str) -> frozenset[str]:
    """The names a form may give the inputs only ``task`` ("serve" or "train") reads: each
    plan field's name and its plan keyword (the five questions name theirs by keyword). A
    form with a task select shows these only while that task is chosen."""
    keys = {"serve": SERVE_ONLY, "train": TRAIN_ONLY}[task]
    return frozenset(keys) | {PLAN_FIELDS[key].name for key in keys if key in PLAN_FIELDS}


def plan_arguments(values: Values, fields: Mapping[str, Field[Any]] = PLAN_FIELDS,
                   *, every_task: bool = True) -> dict[str, Any]:
    """plan()'s keyword arguments, typed, from the fields given (plan keyword -> field).

    ``model``/``params``: the model field's choice, the typed count when it is 'custom'.
    ``every_task``: also parse the other task's fields (a link must not carry junk);
    otherwise those are left out and plan() uses its defaults.
    """
    task = values[fields["task"]] if "task" in fields else "serve"
    skipped = () if every_task else ((*TRAIN_ONLY, *CLI_ONLY_FIELDS) if task == "serve"
                                     else SERVE_ONLY)
    out: dict[str, Any] = {}
    for key, f in fields.items():
        if key in skipped or key in ("model", "params"):
            continue
        out[key] = values[f]
    return out


def unused_task_notes(values: Values, fields: Mapping[str, Field[Any]] = PLAN_FIELDS
                      ) -> dict[str, str]:
    """Field name -> a note, for each of the other task's fields whose text that task would
    refuse: the value is kept (it waits for the switch), and the reader is told beside it."""
    task = values[fields["task"]] if "task" in fields else "serve"
    other = "train" if task == "serve" else "serve"
    notes: dict[str, str] = {}
    for key in TRAIN_ONLY if task == "serve" else SERVE_ONLY:
        if key not in fields:
            continue
        try:
            values[fields[key]]
        except EngineError as refused:
            notes[fields[key].name] = unused_input_note(task, other, refused.message)
    return notes


def context_notes(p: Plan, fields: Mapping[str, Field[Any]] = PLAN_FIELDS) -> dict[str, str]:
    """Field name -> a note, for each length of the plan beyond its model's maximum context
    (the serving context and prompt, the training sequence): accepted, and said beside it."""
    lengths: list[tuple[str, int]] = []
    if p.serve is not None and isinstance(p.memory, ServingMemory):
        lengths = [("context_tokens", p.memory.context_tokens),
                   ("prompt_tokens", p.serve.prompt_tokens)]
    elif isinstance(p.memory, TrainingMemory):
        lengths = [("seq_len", p.memory.seq_len)]
    most = p.model.max_context
    return {fields[key].name: context_beyond_note(tokens, p.model.name, most)
            for key, tokens in lengths if key in fields and tokens > most}


COMMAND = ("python", "-m", "engine", "plan")
# A pasted config.json reaches the command line as a file: the reader saves it under this name.
CONFIG_FILE = "config.json"
# The playground's own chip (a hardware choice) reaches it as a spec file of this name.
OWN_CHIP = "own"
CHIP_FILE = "my-chip.json"
# What a POSIX shell reads as one plain word (shlex.quote's set): anything else is quoted.
# shell_quote is shlex.quote written out: the browser's trimmed runtime does not ship shlex
# (macros/runtime_imports.py), and importing it for one function would add it to every visit.
_SHELL_PLAIN = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


def cli_flag(name: str) -> str:
    """The command line's flag for the field ``name``: ``kv_format`` -> ``--kv-format``."""
    return "--" + name.replace("_", "-")


def shell_quote(word: str) -> str:
    """``word`` as one word of a POSIX shell command line (single-quoted unless plain)."""
    if _SHELL_PLAIN.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def flag_text(value: object) -> str:
    """A parsed value as the text its field parses back to the same value."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def model_flags(values: Values, model_field: Field[Any] = MODEL_OR_CONFIG
                ) -> tuple[list[str], tuple[tuple[str, str], ...]]:
    """The command line's words for the model ``model_field`` names (a catalogue or config
    library id, a typed parameter count or a pasted config.json, named as the file :data:`CONFIG_FILE`),
    and the files they read: (:data:`CONFIG_FILE`, the pasted text) for a pasted config."""
    model = values.text(model_field.name)
    if model == YOUR_MODEL:
        return ["--config", CONFIG_FILE], ((CONFIG_FILE, values.text(CONFIG.name)),)
    if model == CUSTOM_MODEL:
        return [cli_flag(PARAMS.name), flag_text(values[PARAMS])], ()
    return [cli_flag(MODEL.name), values[model_field]], ()


def plan_line(model: list[str], **keywords: object) -> str:
    """The ``python -m engine plan ...`` line for the model's words (:func:`model_flags`)
    and plan()'s keywords as plan() takes them (typed; None: left out, the command line's
    default). ``serve_tp`` is serving's ``--tp``."""
    words = list(model)
    for key, value in keywords.items():
        if value is not None:
            name = PLAN_FIELDS["tp" if key == "serve_tp" else key].name
            words += [cli_flag(name), flag_text(value)]
    return " ".join((*COMMAND, *(shell_quote(w) for w in words)))


def serving_keywords(mem: ServingMemory) -> dict[str, object]:
    """plan()'s keywords for the serving plan whose memory ``mem`` is (the model aside)."""
    return {"hardware": mem.hardware.id, "gpus": mem.gpus, "task": "serve",
            "weight_format": mem.weight_format, "kv_format": mem.kv_format,
            "context_tokens": mem.context_tokens, "batch": mem.batch}


def plan_commands(values: Values, model_field: Field[Any], *plans: Mapping[str, object]
                  ) -> Command:
    """A widget's command: one :func:`plan_line` for each of its ``plans`` (plan()'s
    keywords), all for the model ``model_field`` names, with the file a pasted config is."""
    model, files = model_flags(values, model_field)
    return Command(tuple(plan_line(model, **keywords) for keywords in plans), files)


def plan_command(values: Values, fields: Mapping[str, Field[Any]] = PLAN_FIELDS) -> str:
    """The ``python -m engine plan ...`` line that answers the plan these values describe.

    Reads the values as :func:`plan_arguments` does for a widget (only the chosen task's
    fields), so the command line gives the numbers the widget shows. Every flag the plan
    reads is written out, defaults included, so the line keeps its meaning if a default
    changes, except an empty optional amount (the command line's default is also empty).
    ``--mfu`` is always given for training: without it the expected figures model the MFU.
    A pasted config.json is named as the file :data:`CONFIG_FILE`, the reader's own chip as
    :data:`CHIP_FILE`.
    """
    words = [w for flag, text in plan_flags(values, fields) if text is not None
             for w in (flag, text)]
    return " ".join((*COMMAND, *(shell_quote(w) for w in words)))


def plan_flags(values: Values, fields: Mapping[str, Field[Any]] = PLAN_FIELDS
               ) -> list[tuple[str, str | None]]:
    """The flags :func:`plan_command` writes, each with its text, in order: the model's
    first, then every flag of the chosen task; None for an empty optional amount (left out
    of the line: the command line's default is also empty)."""
    model, _ = model_flags(values)
    out: list[tuple[str, str | None]] = [(model[0], model[1])]
    for key, value in plan_arguments(values, fields, every_task=False).items():
        if key == "hardware" and value == OWN_CHIP:
            out.append(("--hardware-spec", CHIP_FILE))
        else:
            out.append((cli_flag(PLAN_FIELDS[key].name),
                        None if value is None else flag_text(value)))
    return out


def plan_widget_command(fields: Mapping[str, Field[Any]]) -> Callable[[Values], Command]:
    """The command of a widget whose inputs are plan fields (``fields``, as
    :func:`plan_command` reads them): its one plan line, with the files it reads."""
    def command(values: Values) -> Command:
        _, files = model_flags(values)
        return Command((plan_command(values, fields),), files)
    return command
