"""Choices offered by widget controls, taken from the catalogue (never typed twice)."""

from __future__ import annotations

from engine.numbers import validate
from engine.numbers.catalog import ModelSpec, list_hardware, list_models, resolve_model
from engine.numbers.formats import FORMATS
from engine.render.widget import Control, Inputs

CUSTOM_MODEL = "custom"
CUSTOM_MODEL_LABEL = "A parameter count I type"
# In the catalogue for the vLLM paper's worked example (KV cache of OPT-13B), and still drawn
# by the drills, but not offered in pickers: its 2,048-token context trips most widgets'
# defaults.
REFERENCE_ONLY_MODELS = frozenset({"opt-13b"})


def model_options(*, with_custom: bool = True) -> tuple[tuple[str, str], ...]:
    options = [(m.id, m.name) for m in list_models() if m.id not in REFERENCE_ONLY_MODELS]
    if with_custom:
        options.append((CUSTOM_MODEL, CUSTOM_MODEL_LABEL))
    return tuple(options)


def catalog_model_control(default: str = "llama-3.1-8b") -> Control:
    """The "Model" select over the catalogue's lesson models (no typed parameter count)."""
    return Control("model", "Model", "select", default, options=model_options(with_custom=False))


def model_controls(*, hint_aside: str = "") -> tuple[Control, Control]:
    """The "model" select (the catalogue, or a typed count) and the "params" count it uses.

    ``hint_aside`` is added to the count's hint, before its full stop (e.g. examples).
    """
    return (
        Control("model", "Model", "select", "llama-3.1-8b", options=model_options()),
        Control(
            "params",
            "Parameter count",
            "number",
            "7e9",
            unit="parameters",
            hint=f"Used when the model is '{CUSTOM_MODEL_LABEL}'{hint_aside}.",
        ),
    )


def model_from(
    inputs: Inputs, model_id: str | None = None, *, check_params: bool = False
) -> ModelSpec:
    """The model the controls of :func:`model_controls` name: the chosen catalogue model, or
    a generic one from the typed parameter count (EngineError naming "model" or "params").

    ``model_id``: the "model" input already checked by the caller (by default, it is checked
    here against :func:`model_options`). ``check_params``: check the typed count even when a
    catalogue model is chosen (an address carries it all the same).
    """
    if model_id is None:
        model_id = validate.choice(inputs["model"], "model", [v for v, _ in model_options()])
    if model_id == CUSTOM_MODEL or check_params:
        params = validate.number(inputs["params"], "params", label="Parameter count")
        if model_id == CUSTOM_MODEL:
            return resolve_model(params=params)
    return resolve_model(model_id=model_id)


def gpu_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware() if h.kind in ("gpu", "tpu"))


def hardware_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware())


def format_options(*ids: str) -> tuple[tuple[str, str], ...]:
    chosen = ids or tuple(FORMATS)
    return tuple((f, FORMATS[f].label) for f in chosen)


SERVING_WEIGHT_FORMATS = ("fp32", "bf16", "fp8", "int8", "int4")
# The words of the selects several widgets share (value -> label).
TASK_LABELS = {"serve": "Serve it (answer requests)", "train": "Train it"}
OPTIMIZER_LABELS = {
    "adam": "Adam",
    "adamw": "AdamW",
    "adam-8bit": "8-bit Adam",
    "sgd-momentum": "SGD with momentum",
    "sgd": "Plain SGD",
}


def weight_format_control() -> Control:
    """The "Weights stored as" select of the serving widgets: bf16 unless the reader picks."""
    return Control(
        "format",
        "Weights stored as",
        "select",
        "bf16",
        options=format_options(*SERVING_WEIGHT_FORMATS),
    )
