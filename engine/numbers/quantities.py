"""The lesson's quantities, each declared once: kind, unit, sensible range and why.

One :class:`Quantity` per thing a reader or a caller can give the engine (a context length,
a GPU count, an MFU, a price...). Its range is what makes sense for the lesson, with the
reason in words a reader understands; the message for a value outside it states the range
and the reason. Widgets' fields (``engine.render.fields``), the command line and the
engine's public entry points all check against these same records, so a limit is written
in one place only.

Every range is finite and starts above zero where zero or a tiny value would divide by
nothing (an MFU of 1e-320 gives an infinite time): the products and quotients of values in
range stay finite floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine.numbers.catalog.models import GENERIC_MAX_PARAMS, GENERIC_MIN_PARAMS, ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.validate import show_number, to_float

KINDS = ("integer", "number")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A kind of value (``integer`` or ``number``) in ``unit`` from ``minimum`` to ``maximum``.

    ``reason`` says why that range (shown with a refusal, in brackets); ``unit`` is the word
    after a number in that message ("tokens", "GPUs"), empty for a plain share.
    """

    kind: str
    unit: str
    minimum: float
    maximum: float
    reason: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"quantity kind must be one of {KINDS}")
        if not (math.isfinite(self.minimum) and math.isfinite(self.maximum)):
            raise ValueError("a quantity's range must be finite")
        if self.minimum > self.maximum:
            raise ValueError("a quantity's minimum must not exceed its maximum")

    def within(self, *, minimum: float | None = None, maximum: float | None = None,
               reason: str | None = None) -> Quantity:
        """The same quantity over a narrower range (e.g. up to the chosen model's context)."""
        return replace(
            self,
            minimum=self.minimum if minimum is None else minimum,
            maximum=self.maximum if maximum is None else maximum,
            reason=self.reason if reason is None else reason,
        )

    def range_words(self) -> str:
        """'from 1 to 10,000,000 tokens'."""
        unit = f" {self.unit}" if self.unit else ""
        return f"from {show(self.minimum)} to {show(self.maximum)}{unit}"

    def check(self, value: object, field: str, label: str) -> float:
        """``value`` (a number, or text as typed) as a float in range; EngineError naming
        ``field`` otherwise (integers: see :meth:`check_integer`)."""
        number = to_float(value, field, label, f"type one {self.range_words()}.")
        if self.kind == "integer" and math.isfinite(number) and number != math.floor(number):
            raise EngineError(f"{label} must be a whole number {self.range_words()}.", field)
        for wrong, relation in ((number > self.maximum, "large"), (number < self.minimum, "small")):
            if wrong:
                raise EngineError(
                    f"{label}: {_given(value)} is too {relation}; give a value "
                    f"{self.range_words()} ({self.reason}).",
                    field,
                )
        return number

    def check_integer(self, value: object, field: str, label: str) -> int:
        """``value`` as an int in range (the quantity must be of kind ``integer``)."""
        if self.kind != "integer":
            raise ValueError("check_integer needs an integer quantity")
        return int(self.check(value, field, label))



def _given(value: object) -> str:
    """What the reader gave, as they typed it (cut short: 400 digits help no one)."""
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, float) and math.isinf(value):
        text = "infinity" if value > 0 else "minus infinity"
    elif isinstance(value, float):
        text = show(value)
    else:
        text = str(value)
    return text if len(text) <= 20 else text[:20] + "..."


def show(x: float) -> str:
    """A bound as a reader reads it: 1, 0.01, 8,192, 1,000,000,000, 1e16."""
    return show_number(x)


# The lesson's quantities. Each bound is far from any default and any case the lesson shows.
LONGEST_CATALOGUE_CONTEXT = 131_072  # Llama 3.1 (models.toml): the longest context here

CONTEXT_TOKENS = Quantity(
    "integer", "tokens", 1, 10_000_000,
    "the longest context of a model here is 131,072 tokens; "
    "up to ten million shows what a longer one would need",
)
PROMPT_TOKENS = CONTEXT_TOKENS.within(reason="a prompt is read into a context of the same size")
OUTPUT_TOKENS = CONTEXT_TOKENS.within(reason="an answer is at least one token and fits a context")
# The request the lesson follows unless a reader changes it: request_timeline, the plan widgets, the CLI.
TYPICAL_PROMPT_TOKENS = 1024
TYPICAL_OUTPUT_TOKENS = 256
SEQ_LEN = CONTEXT_TOKENS.within(reason="a training sequence is a context of that length")
DECODE_CONTEXT_TOKENS = CONTEXT_TOKENS.within(
    minimum=0, reason="0: a decode step that reads the weights alone, its ceiling")
BATCH = Quantity(
    "integer", "requests", 1, 1_000_000,
    "one request at a time up to a million at once, far beyond one server",
)
MICRO_BATCH = Quantity(
    "integer", "sequences", 1, 1_000_000,
    "at least one sequence per step; a million is far beyond any GPU's memory",
)
LORA_RANK = Quantity(
    "integer", "", 1, 4096,
    "an adapter's rank: 4 to 64 in the LoRA and QLoRA papers; 4,096 is as wide as a small "
    "model's layers",
)
GPUS = Quantity(
    "integer", "GPUs", 1, 10_000_000,
    "one GPU up to ten million, hundreds of times the largest clusters built",
)
TENSOR_PARALLEL = Quantity(
    "integer", "GPUs", 1, 1024,
    "tensor parallelism splits each layer over 1 to 1,024 GPUs; in practice 8 in one server",
)
PIPELINE_STAGES = Quantity(
    "integer", "stages", 1, 1024,
    "pipeline parallelism cuts the layers into 1 to 1,024 stages; a stage holds at least one "
    "layer",
)
GPU_LAYERS = Quantity(
    "integer", "layers", 0, 10_000,
    "the layers kept on the GPU, as llama.cpp's -ngl: 0 leaves every layer in host memory, "
    "the model's own layer count none; a config.json may give up to 10,000 layers",
)
EXPERT_PARALLEL = Quantity(
    "integer", "GPUs", 1, 1024,
    "expert parallelism spreads a mixture's experts over 1 to 1,024 GPUs (DeepSeek-V3: 64)",
)
CONTEXT_PARALLEL = Quantity(
    "integer", "GPUs", 1, 64,
    "context parallelism splits each sequence over 1 to 64 GPUs (Llama 3 405B at 128K: 16)",
)
PIPELINE_CHUNKS = Quantity(
    "integer", "chunks", 1, 64,
    "the interleaved schedule gives each GPU a few chunks of layers (Megatron-LM: 2 to 8)",
)
SERVERS = Quantity(
    "integer", "servers", 1, 1_000_000,
    "one server up to a million, far beyond the largest clusters built",
)
GLOBAL_BATCH_TOKENS = Quantity(
    "number", "tokens", 1, 1e10,
    "tokens per optimiser step: millions in published runs (Llama 3 405B: 4M to 16M)",
)
PARAMS = Quantity(
    "integer", "parameters", GENERIC_MIN_PARAMS, GENERIC_MAX_PARAMS,
    "the engine infers a model's shapes from 20 million parameters up to 1e15, "
    "a thousand times the largest models built",
)
MFU = Quantity(
    "number", "", 0.01, 1.0,
    "MFU is the share of peak a run achieves: 0.4 means 40 %, 1 means every cycle useful; "
    "good runs reach 0.35 to 0.55",
)
TRAINING_TOKENS = Quantity(
    "number", "tokens", 1e6, 1e16,
    "from a million tokens to 1e16, hundreds of times the largest training sets (15 trillion)",
)
TOKENS_PER_S = Quantity(
    "number", "tokens/s", 1, 1e15,
    "at least one token a second; 1e15 is far beyond any cluster",
)
TARGET_DAYS = Quantity(
    "number", "days", 0.01, 100_000,
    "from a quarter of an hour (0.01 days) to about 270 years",
)
USD_PER_GPU_HOUR = Quantity(
    "number", "USD", 0.01, 10_000,
    "cloud GPUs rent for about 1 to 10 dollars an hour",
)
SIMULATION_SPEED = Quantity(
    "number", "× real time", 0.001, 1e9,
    "from a thousandth of real time (slow motion) to a billion simulated seconds per second",
)
ELAPSED_SECONDS = Quantity(
    "number", "seconds", 0, 1e15,
    "simulated time starts at 0 and a run ends long before 1e15 seconds",
)
TOKENS_PER_STEP = Quantity(
    "number", "tokens", 1, 1e9,
    "at least one token per step; a billion is far beyond any batch",
)
PURCHASE_USD = Quantity(
    "number", "USD", 1, 1e12,
    "from a dollar to a trillion, more than the largest data centre built",
)
YEARS = Quantity(
    "number", "years", 0.1, 100,
    "from about a month to a century; servers are usually written off over 3 to 5 years",
)
POWER_W = Quantity(
    "number", "W", 0, 1e9,
    "from no power at all to a gigawatt, more than any data centre draws",
)
PUE = Quantity(
    "number", "", 1, 5,
    "power per watt of IT load: 1 means no cooling at all; good data centres reach 1.1 to 1.5",
)
USD_PER_KWH = Quantity(
    "number", "USD per kWh", 0, 100,
    "from free power to a hundred dollars; electricity costs cents per kWh",
)
UTILISATION_PERCENT = Quantity(
    "number", "%", 0.1, 100,
    "the share of hours the GPUs are busy, from 0.1 % to every hour",
)
OVERHEAD_PERCENT_PER_YEAR = Quantity(
    "number", "% of the purchase a year", 0, 100,
    "facility, network and staff cost from nothing to the price of the servers every year",
)
PURCHASE_GPUS = Quantity(
    "integer", "GPUs", 1, 1_000_000,
    "a purchase holds at least one GPU; a million is more than any one buyer owns",
)
CHIPS_COMPARED = Quantity(
    "integer", "chips", 1, 64,
    "a server holds 1 to 8 GPUs and 1 to 8 CPU sockets; 64 leaves room to compare more",
)

# The same quantities narrowed for one widget's question.
TENSOR_PARALLEL_IN_SERVER = TENSOR_PARALLEL.within(
    maximum=8, reason="tensor parallelism stays inside one server's eight GPUs"
)
POD_SERVERS = SERVERS.within(
    maximum=4096, reason="up to 4,096 servers (32,768 GPUs), twice the largest Llama 3 run"
)
CLUSTER_GPUS = GPUS.within(maximum=1_000_000, reason="a million GPUs is beyond any cluster built")
JOB_GPUS = GPUS.within(
    maximum=100_000, reason="a hundred thousand GPUs is more than any one job here needs"
)
SIMULATED_TRAINING_TOKENS = TRAINING_TOKENS.within(
    maximum=1e15, reason="the simulation runs at most 1e15 tokens"
)
# The simulated dgx-1's jobs (engine.lesson.cluster): the lesson's quantities, narrowed where
# the simulation stops.
DEPLOYMENT_BATCH = BATCH.within(
    maximum=4096, reason="one deployment here serves at most 4,096 requests at once"
)
SIMULATED_MICRO_BATCH = MICRO_BATCH.within(
    maximum=1024, reason="the simulation trains at most 1,024 sequences per micro-batch"
)

# The training side's quantities (engine.numbers.train_request, the figures).
MICRO_BATCHES_PER_STEP = Quantity(
    "integer", "micro-batches", 1, 100_000_000,
    "one optimiser step accumulates at least one micro-batch; a hundred million is far beyond "
    "any global batch",
)


# A training run you can watch (engine.numbers.training_run): what its inputs may be.
RUN_SECONDS = Quantity(
    "number", "seconds", 0, 1e14,
    "from none to 1e14 seconds (about 3 million years), the longest run the simulation handles",
)
CHECKPOINT_INTERVAL_SECONDS = RUN_SECONDS.within(
    minimum=1, reason="at least a second of training between checkpoints, and a run ends "
    "before 1e14 seconds",
)
RUN_TOKENS = TRAINING_TOKENS.within(
    minimum=1, reason="a run trains on at least one token; 1e16 is hundreds of times the "
    "largest training sets",
)
PEAK_FLOPS_PER_S = Quantity(
    "number", "FLOP/s", 1, 1e18,
    "one GPU's peak: an H100 does 989e12 in bf16; 1e18 is a thousand times that",
)
GPU_UTILISATION = Quantity(
    "number", "", 0.01, 1,
    "the share of time the GPUs are busy: 1 means always, a healthy run shows about 0.95",
)
FLOPS_PER_PARAM_PER_TOKEN = Quantity(
    "number", "", 1, 100,
    "6 for training (2 forward, 4 backward), 2 for a forward pass alone",
)
FLOPS_PER_TOKEN = Quantity(
    "number", "FLOPs", 0, 1e18,
    "0 means the factor times the parameters; 1e18 is far beyond any model",
)
VOCAB = Quantity(
    "integer", "tokens", 2, 100_000_000,
    "a vocabulary holds at least two tokens; Llama 3's holds 128,256",
)

# A server under load (engine.numbers.load): its traffic and the simulation's size.
CONCURRENCY = Quantity(
    "integer", "requests", 1, 100_000,
    "at least one request in flight; a hundred thousand is far beyond one deployment's batch",
)
REQUEST_RATE = Quantity(
    "number", "requests/s", 0.001, 1_000_000,
    "from one request in about 17 minutes to a million a second, beyond any service",
)
SIMULATED_REQUESTS = Quantity(
    "integer", "requests", 1, 100_000,
    "at least one; past a hundred thousand the percentiles move no more and the run is slow",
)
TYPICAL_SIMULATED_REQUESTS = 1000  # enough for p99 to rest on ten requests
LENGTH_CV = Quantity(
    "number", "", 0.01, 4,
    "the spread as a fraction of the mean: from almost fixed to four times the mean",
)
SEED = Quantity(
    "integer", "", 0, 2**31 - 1,
    "any whole number from 0 to 2,147,483,647 picks one run of the random draws",
)
LATENCY_TARGET_SECONDS = Quantity(
    "number", "s", 1e-6, 3600,
    "a microsecond to an hour covers every service-level target",
)
SPEC_DRAFT_TOKENS = Quantity(
    "integer", "tokens", 1, 16,
    "at least one draft token a step; past 16 almost no draft is accepted whole",
)
SPEC_ACCEPTANCE = Quantity(
    "number", "", 0, 1,
    "the chance that each draft token is accepted, from never to always",
)
PREFIX_TOKENS = CONTEXT_TOKENS.within(reason="a shared prefix is part of a prompt")
PREFIX_HIT = Quantity(
    "number", "", 0, 1,
    "the share of requests that start with the shared prefix, from none to all",
)
# A chip of a user's own hardware spec (the CLI's --hardware-spec).
CHIP_MEMORY_GB = Quantity(
    "number", "GB", 0.1, 100_000,
    "small accelerators hold a few GB and the largest chips under 300 GB; 100 TB is far "
    "beyond any",
)
CHIP_BANDWIDTH_TB_PER_S = Quantity(
    "number", "TB/s", 0.001, 1_000,
    "a laptop's memory moves about 0.1 TB/s and a B200's 8 TB/s; 1,000 is far beyond any chip",
)
CHIP_PEAK_TFLOP_PER_S = Quantity(
    "number", "TFLOP/s", 0.001, 1_000_000,
    "a CPU core reaches under 1 TFLOP/s and a B200 about 9,000 dense in FP4; a million is far "
    "beyond any chip",
)
CHIP_POWER_W = Quantity(
    "number", "W", 1, 100_000,
    "a phone's chip draws a few watts and a GB200 superchip 2,700 W",
)
CHIPS_PER_SERVER = Quantity(
    "integer", "GPUs", 1, 100_000,
    "one card up to a TPU pod's 9,216 chips on one scale-up network",
)
LINK_GB_PER_S = Quantity(
    "number", "GB/s", 0.001, 100_000,
    "a 1 Gb/s network moves 0.125 GB/s each way and NVLink 5 900 GB/s",
)


def context_for(model: ModelSpec, quantity: Quantity = CONTEXT_TOKENS) -> Quantity:
    """``quantity`` (a context, a prompt, a training sequence) up to what ``model`` reads."""
    return quantity.within(
        maximum=min(quantity.maximum, model.max_context),
        reason=f"{model.name} reads at most {model.max_context:,} tokens",
    )


# ---------------------------------------------------------------- serving and the shared edge


def check_multiple_of_tp(gpus: int, tp: int, field: str = "tp") -> int:
    """The replicas (``gpus`` / ``tp``) when ``tp`` tensor-parallel GPUs divide ``gpus``;
    EngineError naming ``field`` otherwise. The one check of that rule, for every entry point
    that takes both a GPU count and a tensor-parallel size."""
    if gpus % tp:
        raise EngineError(f"GPU count ({gpus:,}) must be a multiple of the tensor-parallel size "
                          f"({tp}).", field)
    return gpus // tp
