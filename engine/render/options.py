"""Choices offered by widget controls, taken from the catalogue (never typed twice)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.numbers import quantities
from engine.numbers.catalog import ModelSpec, get_model, list_hardware, list_models, resolve_model
from engine.numbers.catalog.config_library import is_library_id, library_model, library_options
from engine.numbers.catalog.hf_config import MAX_CONFIG_CHARS, ConfigModel, model_from_config
from engine.numbers.formats import FORMAT_ALIASES, FORMATS, FormatId
from engine.numbers.training_runs import LLAMA_3_1_405B_PRETRAINING_TOKENS
from engine.render.fields import Amount, Choice, Count, OneOf, Text, Values, one_of
from engine.render.html import esc, tag
from engine.render.widget import Rendered
from engine.words.format import format_count

CUSTOM_MODEL = "custom"
CUSTOM_MODEL_LABEL = "A parameter count I type"
YOUR_MODEL = "config"
YOUR_MODEL_LABEL = "Your model (paste a config.json)"
# The page address (docs/js/address.js, which reads these from js/runtime-config.js, written
# by the build): a value up to ADDRESS_MAX_CHARS long travels as typed, a longer one (a pasted
# config.json) compressed, as long as the whole address stays within ADDRESS_MAX_LINK_CHARS;
# one that does not fit even so is kept in the tab's sessionStorage, and the page says so
# beside its "Copy link". 8,000 characters: GitHub Pages is served through Fastly, which
# refuses a request whose URL exceeds 8 KB (Chromium itself takes 2 MB).
ADDRESS_MAX_CHARS = 2000
ADDRESS_MAX_LINK_CHARS = 8000


# The model selects' groups (<optgroup> labels): the lesson's models, the reader's own (a typed
# count, a pasted config.json), then the config library, one group per family.
LESSON_MODELS_GROUP = "In this lesson"
YOUR_OWN_GROUP = "Your own model"
LIBRARY_GROUP = "Library: {family}"


def model_options(*, with_custom: bool = True) -> tuple[tuple[str, str], ...]:
    options = [(m.id, m.name) for m in list_models()]
    if with_custom:
        options.append((CUSTOM_MODEL, CUSTOM_MODEL_LABEL))
    return tuple(options)


def grouped_model_field(f: Choice, own: tuple[tuple[str, str], ...] = ()) -> Choice:
    """``f`` offering the lesson's models, then ``own`` (the reader's own choices), then every
    model of the config library, grouped by family."""
    lesson = model_options(with_custom=False)
    library = library_options()
    return f.but(
        options=(*lesson, *own, *((o.id, o.id) for o in library)),
        option_groups=((LESSON_MODELS_GROUP,) * len(lesson) + (YOUR_OWN_GROUP,) * len(own)
                       + tuple(LIBRARY_GROUP.format(family=o.family) for o in library)),
    )


def catalog_model_field(default: str = "llama-3.1-8b", *, your_model: bool = False,
                        library: bool = False) -> Choice:
    """The "Model" select over the catalogue's lesson models (no typed parameter count); with
    ``library`` the config library's models too, and with ``your_model`` the reader's own
    config.json as well (the widget then also takes :data:`CONFIG` and reads the model with
    :func:`chosen_model`)."""
    f = Choice("model", "Model", default, options=model_options(with_custom=False))
    if your_model:
        return grouped_model_field(f, ((YOUR_MODEL, YOUR_MODEL_LABEL),))
    return grouped_model_field(f) if library else f


MODEL = Choice("model", "Model", "llama-3.1-8b", options=model_options())
# The same, with the reader's own config.json and the config library as further choices.
MODEL_OR_CONFIG = grouped_model_field(
    MODEL, ((CUSTOM_MODEL, CUSTOM_MODEL_LABEL), (YOUR_MODEL, YOUR_MODEL_LABEL)))
# The pasted config.json: its box is shown (and read) only while "your model" is chosen
# (docs/css/lesson.css hides it otherwise).
CONFIG = Text(
    "config", "Your config.json", "", control_kind="textarea",
    hint="A Hugging Face config.json; it stays in your browser.",
    max_chars=MAX_CONFIG_CHARS,
)


def pasted_config(values: Values, model_field: Choice) -> ConfigModel | None:
    """The model read from the pasted config.json when the reader chose it, else None
    (EngineError naming 'config' when the text is not a config the engine can read)."""
    if values[model_field] != YOUR_MODEL:
        return None
    return model_from_config(values[CONFIG])


def library_read(values: Values, model_field: Choice) -> ConfigModel | None:
    """The config library's model the reader chose, as read from its config.json, else None."""
    model_id = values[model_field]
    return library_model(model_id) if is_library_id(model_id) else None


def chosen_model(values: Values, model_field: Choice) -> ModelSpec:
    """The catalogue model ``model_field`` names, a library model, or the reader's own from
    its config.json."""
    read = pasted_config(values, model_field) or library_read(values, model_field)
    return read.model if read else get_model(values[model_field])


def your_model_note(values: Values, model_field: Choice) -> str:
    """A line saying which model a widget computed for, when it is the reader's own or one of
    the config library (else '')."""
    read = pasted_config(values, model_field)
    from_library = read is None
    read = read or library_read(values, model_field)
    if read is None:
        return ""
    m = read.model
    count = format_count(m.params) + " parameters"
    if m.is_moe:
        count += f", {format_count(m.active_params)} active per token"
    if from_library:
        words = (f"Figures for {values[model_field]}, as its published config.json describes it "
                 f"({m.family}, {count}).")
    else:
        words = (f"Figures for the model your config.json describes ({m.family}, {count}), "
                 "read here in your browser.")
    guesses = len(read.assumed) + len(read.left_out)
    if guesses:
        words += (f" The engine assumed {guesses} thing{'s' if guesses > 1 else ''} the config "
                  "does not say; the playground lists each.")
    return tag("p", esc(words), class_="widget-note your-model-note")


def noting_your_model(render: Callable[[Values], str | Rendered],
                      model_field: Choice) -> Callable[[Values], str | Rendered]:
    """``render`` with :func:`your_model_note` above its result (a widget's declaration)."""
    def rendered(values: Values) -> str | Rendered:
        note = your_model_note(values, model_field)
        result = render(values)
        if isinstance(result, Rendered):
            return replace(result, html=note + result.html)
        return note + result
    rendered.__doc__ = render.__doc__
    return rendered


PARAMS = Count(
    "params",
    "Parameter count",
    "7e9",
    unit="parameters",
    hint=f"For '{CUSTOM_MODEL_LABEL}'.",
    quantity=quantities.PARAMS,
)


def model_fields(*, hint_aside: str = "") -> tuple[Choice, Count, Text]:
    """The "model" select (the catalogue, a typed count or the reader's config.json), the
    "params" count and the "config" text it uses.

    ``hint_aside`` is added to the count's hint, before its full stop (e.g. examples).
    """
    return (MODEL_OR_CONFIG,
            PARAMS.but(hint=f"For '{CUSTOM_MODEL_LABEL}'{hint_aside}."),
            CONFIG)


def model_from(values: Values, *, check_params: bool = False) -> ModelSpec:
    """The model the fields of :func:`model_fields` name: the chosen catalogue or library
    model, a generic one from the typed parameter count, or the reader's own from its config.json
    (EngineError naming "model", "params" or "config").

    ``check_params``: check the typed count even when a catalogue model is chosen (an
    address carries it all the same).
    """
    model_id = values[MODEL_OR_CONFIG]
    if model_id == YOUR_MODEL or is_library_id(model_id):
        return chosen_model(values, MODEL_OR_CONFIG)
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


def format_options(*ids: FormatId) -> tuple[tuple[str, str], ...]:
    chosen = ids or tuple(FORMATS)
    return tuple((f, FORMATS[f].label) for f in chosen)


def format_field(name: str, label: str, default: FormatId, *ids: FormatId,
                 hint: str = "") -> OneOf[FormatId]:
    """A select of number formats (``ids``, or every format), read as a format id."""
    chosen = ids or tuple(FORMATS)
    aliases = tuple((a, f) for a, f in FORMAT_ALIASES.items() if f in chosen)
    return one_of(name, label, default, chosen, {f: FORMATS[f].label for f in chosen}, hint=hint,
                  aliases=aliases)


SERVING_WEIGHT_FORMATS: tuple[FormatId, ...] = ("fp32", "bf16", "fp8", "int8", "int4")


def weight_format_field() -> OneOf[FormatId]:
    """The "Weights stored as" select of the serving widgets: bf16 unless the reader picks."""
    return format_field("format", "Weights stored as", "bf16", *SERVING_WEIGHT_FORMATS)


# The inputs several widgets share, each declared once (a widget may relabel one with
# ``.but(label=...)`` or narrow its range with ``.within(...)``; the quantity stays the same).
CONTEXT = Count(
    "context", "Context per request", "8192", unit="tokens", quantity=quantities.CONTEXT_TOKENS
)
BATCH = Count("batch", "Concurrent requests", "1", quantity=quantities.BATCH)
PROMPT_TOKENS = Count(
    "prompt_tokens", "Prompt length", str(quantities.TYPICAL_PROMPT_TOKENS), unit="tokens", quantity=quantities.PROMPT_TOKENS
)
OUTPUT_TOKENS = Count(
    "output_tokens", "Answer length", str(quantities.TYPICAL_OUTPUT_TOKENS), unit="tokens", quantity=quantities.OUTPUT_TOKENS
)
GPUS = Count("gpus", "GPU count", "1", quantity=quantities.GPUS)
MFU = Amount("mfu", "MFU", "0.4", hint="0.4 means 40 %", quantity=quantities.MFU)


def tokens_text(tokens: float) -> str:
    """A token count as a field's default, in trillions: '15.6e12', '1e12'."""
    return f"{tokens / 1e12:g}e12"


# The 405B's count: training_at_scale, whose default model it is, starts from it.
TRAINING_TOKENS = Amount(
    "tokens", "Training tokens", tokens_text(LLAMA_3_1_405B_PRETRAINING_TOKENS),
    quantity=quantities.TRAINING_TOKENS,
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
