"""Choices offered by widget controls, taken from the catalogue (never typed twice)."""

from __future__ import annotations

from engine.numbers import quantities
from engine.numbers.catalog import ModelSpec, list_hardware, list_models, resolve_model
from engine.numbers.formats import FORMATS
from engine.render.fields import Amount, Choice, Count, Values

CUSTOM_MODEL = "custom"
CUSTOM_MODEL_LABEL = "A parameter count I type"


def model_options(*, with_custom: bool = True) -> tuple[tuple[str, str], ...]:
    options = [(m.id, m.name) for m in list_models()]
    if with_custom:
        options.append((CUSTOM_MODEL, CUSTOM_MODEL_LABEL))
    return tuple(options)


def catalog_model_field(default: str = "llama-3.1-8b") -> Choice:
    """The "Model" select over the catalogue's lesson models (no typed parameter count)."""
    return Choice("model", "Model", default, options=model_options(with_custom=False))


MODEL = Choice("model", "Model", "llama-3.1-8b", options=model_options())
PARAMS = Count(
    "params",
    "Parameter count",
    "7e9",
    unit="parameters",
    hint=f"Used when the model is '{CUSTOM_MODEL_LABEL}'.",
    quantity=quantities.PARAMS,
)


def model_fields(*, hint_aside: str = "") -> tuple[Choice, Count]:
    """The "model" select (the catalogue, or a typed count) and the "params" count it uses.

    ``hint_aside`` is added to the count's hint, before its full stop (e.g. examples).
    """
    return MODEL, PARAMS.but(hint=f"Used when the model is '{CUSTOM_MODEL_LABEL}'{hint_aside}.")


def model_from(values: Values, *, check_params: bool = False) -> ModelSpec:
    """The model the fields of :func:`model_fields` name: the chosen catalogue model, or
    a generic one from the typed parameter count (EngineError naming "model" or "params").

    ``check_params``: check the typed count even when a catalogue model is chosen (an
    address carries it all the same).
    """
    model_id = values[MODEL]
    if model_id == CUSTOM_MODEL or check_params:
        params = values[PARAMS]
        if model_id == CUSTOM_MODEL:
            return resolve_model(params=params)
    return resolve_model(model_id=model_id)


def hardware_field(label: str = "GPU", *, gpus_only: bool = True) -> Choice:
    """The hardware select: GPUs (and TPUs) only, or every device of the catalogue."""
    options = gpu_options() if gpus_only else hardware_options()
    return Choice("hardware", label, "h100-sxm", options=options)


def gpu_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware() if h.kind in ("gpu", "tpu"))


def hardware_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware())


def format_options(*ids: str) -> tuple[tuple[str, str], ...]:
    chosen = ids or tuple(FORMATS)
    return tuple((f, FORMATS[f].label) for f in chosen)


SERVING_WEIGHT_FORMATS = ("fp32", "bf16", "fp8", "int8", "int4")


def weight_format_field() -> Choice:
    """The "Weights stored as" select of the serving widgets: bf16 unless the reader picks."""
    return Choice(
        "format", "Weights stored as", "bf16", options=format_options(*SERVING_WEIGHT_FORMATS)
    )


# The inputs several widgets share, each declared once (a widget may relabel one with
# ``.but(label=...)`` or narrow its range with ``.within(...)``; the quantity stays the same).
CONTEXT = Count(
    "context", "Context per request", "8192", unit="tokens", quantity=quantities.CONTEXT_TOKENS
)
BATCH = Count("batch", "Concurrent requests", "1", quantity=quantities.BATCH)
PROMPT_TOKENS = Count(
    "prompt_tokens", "Prompt length", "1000", unit="tokens", quantity=quantities.PROMPT_TOKENS
)
OUTPUT_TOKENS = Count(
    "output_tokens", "Answer length", "300", unit="tokens", quantity=quantities.OUTPUT_TOKENS
)
GPUS = Count("gpus", "GPU count", "1", quantity=quantities.GPUS)
MFU = Amount("mfu", "MFU", "0.4", hint="0.4 means 40 %", quantity=quantities.MFU)
TRAINING_TOKENS = Amount(
    "tokens", "Training tokens", "15.6e12", quantity=quantities.TRAINING_TOKENS
)
TARGET_DAYS = Amount("target_days", "Target", "90", unit="days", quantity=quantities.TARGET_DAYS)
MICRO_BATCH = Count(
    "micro_batch", "Micro-batch", "1", unit="sequences", quantity=quantities.MICRO_BATCH
)
SEQ_LEN = Count("seq_len", "Sequence length", "4096", unit="tokens", quantity=quantities.SEQ_LEN)
TENSOR_PARALLEL = Count("tp", "Tensor parallel", "1", unit="GPUs", quantity=quantities.TENSOR_PARALLEL)
ELAPSED = Amount(
    "elapsed",
    "Elapsed (simulated seconds)",
    "0",
    control_kind="hidden",
    quantity=quantities.ELAPSED_SECONDS,
)


def speed_field(options: tuple[tuple[str, str], ...], default: str) -> Amount:
    """The "Speed" select of a clock widget: simulated seconds per real second."""
    return Amount(
        "speed",
        "Speed",
        default,
        control_kind="select",
        options=options,
        quantity=quantities.SIMULATION_SPEED,
    )
