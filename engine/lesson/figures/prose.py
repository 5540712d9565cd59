"""Named numbers for prose: `{{ figure("weights", model="llama-3.1-8b") }}` in a page.

Each figure is a function of keyword arguments (text or numbers, as an author writes them)
returning the number formatted for reading. Prose that uses them cannot drift from the engine.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.lesson.figures.claims import CLAIM_FIGURES
from engine.lesson.figures.decode import DECODE_FIGURES
from engine.lesson.figures.load_curve import LOAD_CURVE_FIGURES
from engine.lesson.figures.network import NETWORK_FIGURES
from engine.lesson.figures.worked import WORKED_FIGURES, state_gpu_count
from engine.lesson.tables.finetune import FINETUNE_FIGURES
from engine.numbers import memory, quantities
from engine.numbers.architecture import layer_components
from engine.numbers.catalog import get_hardware, resolve_model
from engine.numbers.compute import (
    DEFAULT_MFU,
    DEFAULT_TRAINING_SEQ_LEN,
    GOOD_MFU_HIGH,
    GOOD_MFU_LOW,
    training_flops_per_token,
    training_seconds,
)
from engine.numbers.compute import flops_per_token as _flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format, parse_format
from engine.numbers.serving import decode_step, request_timeline, weight_bytes_read
from engine.numbers.training_choices import (
    CONVENTIONS,
    OPTIMIZERS,
    Convention,
    Optimizer,
    checked,
)
from engine.numbers.training_runs import run_tokens as run_tokens_count
from engine.numbers.training_runs import tokens_or_run
from engine.numbers.units import GiB
from engine.words.format import (
    format_bandwidth,
    format_bytes,
    format_count,
    format_flops,
    format_flops_per_byte,
    format_GB,
    format_percent,
    format_percent_range,
    format_seconds,
    format_TFLOP_per_s,
    format_tokens_per_s,
)

Figure = Callable[..., str]


def params(model: str) -> str:
    """'8.03 billion'."""
    return format_count(resolve_model(model_id=model).params)


def params_exact(model: str) -> str:
    """'8,030,261,248'."""
    return f"{resolve_model(model_id=model).params:,}"


def weights(model: str, format: str = "bf16") -> str:
    """Size of the weights: '16.06 GB'."""
    return format_GB(memory.weights_bytes(resolve_model(model_id=model).params, parse_format(format)))


def format_quality(format: str) -> str:
    """The published quality cost of a number format, as the catalogue's sentence with its
    source (EngineError for a format that has none recorded)."""
    quality = get_format(format).quality
    if not quality:
        raise EngineError(f"The format {format!r} has no published quality cost in the "
                          "catalogue.", "format")
    return quality


def capacity(hardware: str) -> str:
    """A chip's memory, the bytes a program can allocate: '84.94 GB' for an '80 GB' H100."""
    return format_GB(get_hardware(hardware).memory_bytes)


def capacity_name(hardware: str) -> str:
    """The capacity in the card's name, as sold: '80 GB' for the H100 (binary gigabytes, GiB)."""
    return f"{get_hardware(hardware).memory_marketed_GB:,g} GB"


def capacity_name_GiB(hardware: str) -> str:
    """The capacity in the card's name with its true unit: '80 GiB' for an '80 GB' H100."""
    return f"{get_hardware(hardware).memory_marketed_GB:,g} GiB"


def capacity_name_bytes(hardware: str) -> str:
    """The name's capacity read as GiB, in GB of 10^9 bytes: '85.9 GB' for an '80 GB' H100."""
    return format_GB(get_hardware(hardware).memory_marketed_GB * GiB)


def capacity_GiB(hardware: str) -> str:
    """The bytes a program can allocate, in GiB: '79.11 GiB' for an H100."""
    return f"{get_hardware(hardware).memory_bytes / GiB:,.2f} GiB"


def serve_total(
    model: str,
    hardware: str = "h100-sxm",
    format: str = "bf16",
    approx: bool = False,
) -> str:
    """The default serving plan's memory on one GPU: '18.79 GB', or '19 GB' with ``approx``."""
    plan = memory.serving_memory(
        resolve_model(model_id=model), get_hardware(hardware), weight_format=parse_format(format)
    )
    if approx:
        return f"{round(plan.per_gpu_bytes / 1e9):,} GB"
    return format_GB(plan.per_gpu_bytes)


def flops_per_token(model: str) -> str:
    """'16.1 billion FLOPs'."""
    return f"{format_count(_flops_per_token(resolve_model(model_id=model)))} FLOPs"


def kv_per_token(model: str, format: str = "bf16") -> str:
    """'131,072 bytes (131.1 kB)'."""
    n = memory.kv_cache_bytes_per_token(resolve_model(model_id=model), parse_format(format))
    return f"{n:,.0f} bytes ({format_bytes(n)})"


def layers(model: str) -> str:
    """'32'."""
    return f"{resolve_model(model_id=model).layers:,}"


def layer_params(model: str) -> str:
    """Parameters of one layer (the model's usual kind): '218 million'."""
    return format_count(sum(c.params for c in layer_components(resolve_model(model_id=model))))


def _recipe(optimizer: str, convention: str) -> tuple[Optimizer, Convention]:
    """An author's optimiser and precision convention, checked."""
    return (checked(optimizer, "optimizer", OPTIMIZERS),
            checked(convention, "convention", CONVENTIONS))


def train_bytes_per_param(optimizer: str = "adam", convention: str = "mixed-16") -> str:
    """Training state per parameter: '16 bytes'."""
    per_param = memory.training_bytes_per_param(*_recipe(optimizer, convention))
    return f"{per_param:g} bytes"


def train_state(model: str, optimizer: str = "adam", convention: str = "mixed-16") -> str:
    """Training state of the whole model before activations: '128.5 GB'."""
    per_param = memory.training_bytes_per_param(*_recipe(optimizer, convention))
    return format_GB(resolve_model(model_id=model).params * per_param)


def time_per_token(
    model: str, hardware: str = "h100-sxm", prompt_tokens: int = 1000, output_tokens: int = 300
) -> str:
    """Mean decode-step time of one request: '4.84 ms'."""
    run = request_timeline(
        resolve_model(model_id=model),
        get_hardware(hardware),
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
    )
    return format_seconds(run.tpot_seconds)


def _model_training_flops(model: str, tokens: float | str,
                          seq_len: int = DEFAULT_TRAINING_SEQ_LEN) -> float:
    """Model FLOPs of a run (``tokens`` a count or a run's name, 'demo' or 'llama-3.1') on
    sequences of ``seq_len`` tokens: about 6 x active parameters x tokens, plus attention."""
    s = quantities.SEQ_LEN.check_integer(seq_len, "seq_len", "Sequence length")
    return training_flops_per_token(resolve_model(model_id=model), s).model * tokens_or_run(tokens)


def run_tokens(run: str) -> str:
    """A named run's tokens: '15 trillion' for 'llama-3.1' (every size, the model
    card's count), '15.6 trillion' for 'llama-3.1-405b' (the paper's), '1 trillion' for 'demo'."""
    return f"{run_tokens_count(run) / 1e12:g} trillion"


def train_flops(model: str, tokens: float | str, seq_len: int = DEFAULT_TRAINING_SEQ_LEN) -> str:
    """Training FLOPs, about 6 x parameters x tokens plus attention at ``seq_len``:
    '3.94 × 10^25 FLOPs' for Llama 3.1 405B's 15.6 trillion tokens of 8,192."""
    return format_flops(_model_training_flops(model, tokens, seq_len))


def train_time(
    model: str, tokens: float | str, gpus: int = 1, hardware: str = "h100-sxm",
    mfu: float = DEFAULT_MFU, seq_len: int = DEFAULT_TRAINING_SEQ_LEN,
) -> str:
    """Wall-clock time to train at ``mfu`` on ``gpus`` GPUs (bf16 peak): '67.8 days'."""
    total = _model_training_flops(model, tokens, seq_len)
    peak = get_hardware(hardware).peak_flops_per_s("bf16")
    g = quantities.GPUS.check_integer(gpus, "gpus", "GPU count")
    u = quantities.MFU.check(mfu, "mfu", "MFU")
    return format_seconds(training_seconds(total, g, peak, u))


def state_gpus_train_time(
    model: str, tokens: float | str, hardware: str = "h100-sxm", mfu: float = DEFAULT_MFU,
    seq_len: int = DEFAULT_TRAINING_SEQ_LEN,
) -> str:
    """:func:`train_time` on the fewest GPUs that hold the training state before
    activations (worked.state_gpu_count): '40.9 years' for Llama 3.1 405B's 15.6 trillion
    tokens in sequences of 8,192 on 77 H100s at 40 % MFU."""
    return train_time(model, tokens, state_gpu_count(model, hardware), hardware, mfu, seq_len)


def mfu_assumed() -> str:
    """The MFU the lesson assumes when none is given: '40 %'."""
    return format_percent(DEFAULT_MFU)


def mfu_good_band() -> str:
    """The MFU well-tuned large training runs reach: '35 to 55 %'."""
    return format_percent_range(GOOD_MFU_LOW, GOOD_MFU_HIGH)


def bandwidth(hardware: str) -> str:
    """A chip's memory bandwidth: '3.35 TB/s'."""
    return format_bandwidth(get_hardware(hardware).bandwidth_bytes_per_s)


def peak(hardware: str, format: str = "bf16") -> str:
    """A chip's dense peak for maths in ``format``: '989.4 TFLOP/s'."""
    return format_TFLOP_per_s(get_hardware(hardware).peak_flops_per_s(format))


def ridge(hardware: str = "h100-sxm", format: str = "bf16") -> str:
    """A chip's ridge point, peak FLOP/s / bandwidth: '295 FLOP/byte'."""
    from engine.numbers.roofline import ridge_point

    return format_flops_per_byte(ridge_point(get_hardware(hardware), parse_format(format)))


def decode_weight_bytes(model: str, format: str = "bf16") -> str:
    """Weight bytes one single-user decode step reads: every weight but an untied input
    embedding, of which one row: '15.01 GB'."""
    fmt = get_format(parse_format(format))
    return format_GB(weight_bytes_read(resolve_model(model_id=model), fmt.bytes_per_number, 1))


def decode_time(model: str, hardware: str = "h100-sxm", format: str = "bf16") -> str:
    """One single-user decode step reading only the weights (no context yet): '4.48 ms'."""
    step = decode_step(resolve_model(model_id=model), get_hardware(hardware),
                       weight_format=parse_format(format))
    return format_seconds(step.seconds)


def decode_ceiling(model: str, hardware: str = "h100-sxm", format: str = "bf16") -> str:
    """The most tokens/s one user can get, weights read once per token: '223 tokens/s'."""
    step = decode_step(resolve_model(model_id=model), get_hardware(hardware),
                       weight_format=parse_format(format))
    return format_tokens_per_s(step.tokens_per_s_per_user)


def cloud_price(hardware: str = "h100-sxm") -> str:
    """The catalogue's default cloud price: '$2.99 per GPU-hour (Lambda, 2024-09-01)'."""
    from engine.numbers.catalog import prices
    from engine.words.format import format_usd

    offer = prices().default_cloud(get_hardware(hardware).id)
    return f"{format_usd(offer.usd_per_gpu_hour)} per GPU-hour ({offer.provider}, {offer.date})"


def purchase_price(hardware: str = "h100-sxm") -> str:
    """The catalogue's default purchase estimate (for dgx-1: the whole 8-GPU server):
    '$270,000 (2023-05 estimate)'."""
    from engine.numbers.catalog import prices
    from engine.words.format import format_usd

    buy = prices().default_purchase(get_hardware(hardware).id)
    return f"{format_usd(buy.usd)} ({buy.date} estimate)"


def break_even(hardware: str = "h100-sxm", years: object = None) -> str:
    """Utilisation above which owning beats renting at catalogue prices: '34%' or 'never'."""
    from engine.numbers.cost import DEFAULT_YEARS, rent_vs_own_from_catalog

    r = rent_vs_own_from_catalog(
        hardware_id=hardware,
        years=(DEFAULT_YEARS if years is None
               else quantities.YEARS.check(years, "years", "Years of use")),
    )
    u = r.break_even_utilisation
    return "never" if u is None else format_percent(u)


FIGURES: dict[str, Figure] = {
    f.__name__: f
    for f in (
        params,
        params_exact,
        weights,
        format_quality,
        decode_weight_bytes,
        capacity,
        capacity_name,
        capacity_name_GiB,
        capacity_name_bytes,
        capacity_GiB,
        serve_total,
        flops_per_token,
        kv_per_token,
        layers,
        layer_params,
        train_bytes_per_param,
        train_state,
        time_per_token,
        train_flops,
        train_time,
        state_gpus_train_time,
        run_tokens,
        mfu_assumed,
        mfu_good_band,
        bandwidth,
        peak,
        ridge,
        decode_time,
        decode_ceiling,
        cloud_price,
        purchase_price,
        break_even,
        *NETWORK_FIGURES,
        *CLAIM_FIGURES,
        *FINETUNE_FIGURES,
        *DECODE_FIGURES,
        *LOAD_CURVE_FIGURES,
        *WORKED_FIGURES,
    )
}


def get_figure(name: object) -> Figure:
    if isinstance(name, str) and name in FIGURES:
        return FIGURES[name]
    raise EngineError(
        f"Unknown figure {str(name)[:40]!r}; known figures: {', '.join(sorted(FIGURES))}.", "figure"
    )
