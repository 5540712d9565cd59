"""How a training job is split over GPUs: data, tensor and pipeline parallelism.

``gpus`` GPUs train as ``dp`` data-parallel copies of one model held by ``tp`` x ``pp`` GPUs:
tensor parallelism splits every layer's matrices over ``tp`` GPUs (which must share a server:
its two all-reduces per layer need the server's fast links), pipeline parallelism cuts the
layers into ``pp`` stages. The checks here refuse splits that cannot work, each with the
reason in words; the arithmetic of what each split costs lives in expected_training.

Stages need not hold equal layers. By default the layers are cut evenly and the embedding
and output layer ride on the first and last stages; the slowest stage, ceil(layers / pp)
layers, sets the pace. The 'embedding-and-loss' split (training_choices.PipelineSplit) gives
each of those two one layer's place instead: the Llama 3 405B run cut 126 layers + 2 into 16
stages of 8 places, its first and last stages one layer short (Llama 3 Herd of Models,
section 3.3.2).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import architecture, quantities
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record
from engine.numbers.rounding import ceil_div
from engine.numbers.training_choices import PipelineSplit


@dataclass(frozen=True, slots=True)
class Split:
    """A checked split: ``gpus`` = ``dp`` x ``tp`` x ``pp``; ``stage_layers`` the places of
    the fullest stage (its layers, except under the 'embedding-and-loss' split with two
    stages: :attr:`most_layers`), of ``layers``; ``chips_per_server`` the GPUs one server holds;
    ``pipeline_split`` how the stages share the model (what the fullest stage holds is
    :func:`fullest_stage`'s)
    (training_choices.PipelineSplit); ``last_stage_layers`` the layers beside the output
    layer on the last stage."""

    gpus: int
    tp: int
    pp: int
    dp: int
    stage_layers: int
    layers: int
    chips_per_server: int
    pipeline_split: PipelineSplit
    last_stage_layers: int

    @property
    def most_layers(self) -> int:
        """The most layers one stage holds (:attr:`PipelineCut.most_layers`): what the
        busiest GPU runs beside the output layer or the embedding, or in a middle stage."""
        return pipeline_cut(self.layers, self.pp, self.pipeline_split).most_layers

    @property
    def layer_share(self) -> float:
        """Share of the model's layers the fullest stage holds (1 without pipelining)."""
        return self.most_layers / self.layers

    @property
    def places(self) -> int:
        """The places the pipeline cut shares out (:func:`pipeline_cut`)."""
        return pipeline_cut(self.layers, self.pp, self.pipeline_split).places


@dataclass(frozen=True, slots=True)
class PipelineCut:
    """How ``stages`` pipeline stages share a model's layers: ``places`` to share (the layers,
    plus the embedding and the output layer where each takes a layer's place),
    ``stage_places`` on the fullest stage, ``last_stage_layers`` beside the output layer on
    the last, and the ``pipeline_split`` that holds (always 'layers' for one stage)."""

    places: int
    stage_places: int
    last_stage_layers: int
    pipeline_split: PipelineSplit
    stages: int = 1

    @property
    def most_layers(self) -> int:
        """The most layers one stage holds: a stage's places, or one fewer where every stage
        is the first or the last (two stages, the embedding and the loss in the cut)."""
        both_ends = self.pipeline_split == "embedding-and-loss" and self.stages == 2
        return self.stage_places - 1 if both_ends else self.stage_places


def pipeline_cut(layers: int, pp: int, pipeline_split: PipelineSplit) -> PipelineCut:
    """``layers`` cut over ``pp`` stages as ``pipeline_split`` says: ceil(places / pp) on the
    fullest stage; the last holds what is left, one place of it the loss's under the
    'embedding-and-loss' split."""
    split: PipelineSplit = pipeline_split if pp > 1 else "layers"
    loss = 1 if split == "embedding-and-loss" else 0
    places = layers + 2 * loss
    stage = ceil_div(places, pp)
    return PipelineCut(places, stage, max(0, places - (pp - 1) * stage - loss), split, pp)


@dataclass(frozen=True, slots=True)
class StageShares:
    """The stage whose GPUs hold the most parameters: its share of the model's parameters
    (``params``, routed experts counted whole) and of its layers (``layers``, and so of a
    mixture's routed experts, taken as spread evenly over the layers)."""

    params: float
    layers: float

    def held_params(self, model: ModelSpec, ep: int) -> float:
        """Parameters of ``model`` on this stage, before tensor parallelism, with its routed
        experts 1/``ep`` on each GPU (the rest on the other expert-parallel GPUs)."""
        return model.params * self.params - model.routed_params * self.layers * (1 - 1 / ep)


def fullest_stage(model: ModelSpec, pp: int, pipeline_split: PipelineSplit,
                  ep: int = 1) -> StageShares:
    """The stage of ``pp`` whose GPUs hold the most parameters, a mixture's routed experts
    1/``ep`` on each. Cut by layers, the embedding and output layer count with the layers
    (stage places / layers of everything); with the embedding and the loss in the cut, the
    fuller of a middle stage (stage places x a layer) and the first or last (one layer
    fewer, plus a vocabulary x hidden table); two stages are both first and last. With many
    expert-parallel GPUs a layer weighs less on each, so the table's stage can be the
    fuller."""
    cut = pipeline_cut(model.layers, pp, pipeline_split)
    if cut.pipeline_split == "layers":
        share = cut.stage_places / model.layers
        return StageShares(share, share)
    table = model.vocab * model.hidden
    per_layer = (model.params - table * (1 if model.tied_embeddings else 2)) / model.layers
    held_per_layer = per_layer - model.routed_params / model.layers * (1 - 1 / ep)
    k = cut.stage_places
    ends = (k - 1, float(table))
    candidates = [ends] if cut.stages == 2 else [(k, 0.0), ends]
    layers, own_table = max(candidates, key=lambda c: c[0] * held_per_layer + c[1])
    return StageShares((own_table + layers * per_layer) / model.params, layers / model.layers)


def stage_params_share(model: ModelSpec, pp: int, pipeline_split: PipelineSplit) -> float:
    """Share of ``model``'s parameters on the fullest of ``pp`` stages (1 for one stage):
    :func:`fullest_stage`'s, experts counted whole."""
    return fullest_stage(model, pp, pipeline_split).params


@dataclass(frozen=True, slots=True)
class StepSplit(Record):
    """One optimiser step (or one decode step), in seconds: ``seconds`` = ``compute_seconds``
    (each GPU's own work: maths, memory reads, kernel launches) +
    ``exposed_communication_seconds`` (collectives not hidden behind that work) +
    ``bubble_seconds`` (pipeline stages idle while the pipeline fills and drains)."""

    seconds: float
    compute_seconds: float
    exposed_communication_seconds: float
    bubble_seconds: float


@dataclass(frozen=True, slots=True)
class Traffic(Record):
    """What one kind of parallelism sends in one optimiser step, per GPU: ``strategy``
    ('data', 'tensor', 'pipeline' or 'expert'), the ``link`` it crosses, the bytes of the
    buffers it hands to collectives (or sends), and the seconds those take (hidden or not)."""

    strategy: str
    link: str
    bytes_per_step: float
    seconds_per_step: float


def gpu_params(model: ModelSpec, split: Split, ep: int) -> float:
    """Parameters one GPU of the fullest stage (:func:`fullest_stage`) holds: the stage's
    share of ``model`` over ``split.tp`` GPUs, of which a mixture's routed experts, those of
    the stage's layers, only 1/``ep``: the rest sit on the other expert-parallel GPUs."""
    return fullest_stage(model, split.pp, split.pipeline_split, ep).held_params(model, ep) \
        / split.tp


def gpus_of_servers(hardware: HardwareSpec, servers: object, gpus: object) -> int:
    """The GPU count of ``servers`` servers of ``hardware`` (its catalogue server size), or
    ``gpus`` when ``servers`` is None/empty. A GPU count that disagrees is refused (1, the
    default, counts as not given)."""
    g = quantities.GPUS.check_integer(gpus, "gpus", "GPU count")
    if servers is None or servers == "":
        return g
    n = quantities.SERVERS.check_integer(servers, "nodes", "Servers")
    per = hardware.link_spec().chips_per_server
    total = n * per
    if g not in (1, total):
        raise EngineError(f"{n:,} servers of {per} × {hardware.name} hold {total:,} GPUs, not "
                          f"{g:,}: give the servers or the GPU count, not both.", "nodes")
    return total


def check_split(model: ModelSpec, hardware: HardwareSpec, gpus: int, tp: int,
                pp: int = 1, pipeline_split: PipelineSplit = "layers") -> Split:
    """``gpus`` split as tensor parallel ``tp`` x pipeline ``pp`` x data parallel, or an
    EngineError saying why it cannot work: tensor parallelism across servers, a ``tp`` that
    does not divide the heads, more stages than layers, a GPU count that ``tp`` x ``pp``
    does not divide. Each of the three counts is at least 1 (checked where it entered).
    ``pipeline_split``: how the stages share the model (training_choices.PipelineSplit)."""
    t, p = tp, pp
    architecture.check_tensor_parallel(model, t, "tp")
    per = hardware.link_spec().chips_per_server
    if t > per:
        raise EngineError(
            f"Tensor parallelism of {t} would cross servers: a server holds {per} × "
            f"{hardware.name}, and the two all-reduces of every layer need the links inside "
            f"one. Keep tensor parallel at {per} or less and add pipeline stages.", "tp")
    if p > model.layers:
        raise EngineError(f"{model.name} has {model.layers} layers: {p} pipeline stages would "
                          "leave some with none.", "pp")
    quantities.check_multiple_of_tp(gpus, t, "tp")
    if gpus % (t * p):
        raise EngineError(
            f"GPU count ({gpus:,}) must be a multiple of tensor parallel × pipeline stages "
            f"({t} × {p} = {t * p:,}).", "pp")
    cut = pipeline_cut(model.layers, p, pipeline_split)
    if cut.pipeline_split == "embedding-and-loss" and cut.places % p:
        fits = ", ".join(f"{d:,}" for d in range(2, cut.places + 1) if cut.places % d == 0)
        raise EngineError(
            f"With the embedding and the loss in the cut, {model.name} has {cut.places} places "
            f"({model.layers} layers + 2): {p} stages cannot share them evenly, as Megatron-LM "
            f"requires. Stages that can: {fits}.", "pp")
    return Split(gpus, t, p, gpus // (t * p), cut.stage_places, model.layers, per,
                 cut.pipeline_split, cut.last_stage_layers)


def check_chunks(model: ModelSpec, split: Split, interleave: int) -> None:
    """EngineError naming ``interleave`` unless each of ``split``'s stages can hold
    ``interleave`` chunks: at most layers / stages of them, and under the
    'embedding-and-loss' split a count dividing a stage's places, as Megatron-LM requires."""
    v, p = interleave, split.pp
    if v == 1:
        return
    if split.pipeline_split == "embedding-and-loss" and split.stage_layers % v:
        raise EngineError(f"With the embedding and the loss in the cut, each of the {p} stages "
                          f"of {model.name} holds {split.stage_layers} places: {v} chunks "
                          "cannot share them evenly, as Megatron-LM requires; chunks per GPU "
                          f"must divide {split.stage_layers}.", "interleave")
    if split.pipeline_split == "layers" and p * v > model.layers:
        raise EngineError(f"{model.name} has {model.layers} layers: {p} stages of {v} chunks "
                          "each would leave some chunks with none; stages × chunks may be at "
                          f"most {model.layers}.", "interleave")


def check_context_split(model: ModelSpec, hardware: HardwareSpec, gpus: int, tp: int,
                        pp: int, cp: int, pipeline_split: PipelineSplit = "layers") -> Split:
    """:func:`check_split` of the ``gpus`` / ``cp`` GPUs that each of ``cp`` context-parallel
    GPUs stands for (gpus = dp x tp x pp x cp): its ``dp`` counts data-parallel ranks, each
    rank ``cp`` GPUs sharing every sequence. EngineError naming ``cp`` when ``cp`` does not
    divide the GPUs left after tensor and pipeline parallelism."""
    if cp > 1 and gpus % (tp * pp * cp):
        raise EngineError(
            f"GPU count ({gpus:,}) must be a multiple of tensor parallel × pipeline stages × "
            f"context parallel ({tp} × {pp} × {cp} = {tp * pp * cp:,}).", "cp")
    return check_split(model, hardware, gpus // cp, tp, pp, pipeline_split)


def default_expert_parallel(model: ModelSpec, dp: int) -> int:
    """The expert-parallel size when none is given: a mixture's experts spread over the
    data-parallel GPUs, min(experts, dp); 1 for a dense model."""
    return min(model.experts, dp) if model.routed_params else 1


def check_expert_parallel(model: ModelSpec, ep: int, dp: int) -> None:
    """EngineError naming ``ep`` unless ``ep`` GPUs can share ``model``'s experts: 1 always;
    above 1 only a mixture of experts, an ``ep`` dividing its expert count and the
    data-parallel size ``dp`` (the expert-parallel GPUs are data-parallel ranks)."""
    if ep == 1:
        return
    if not model.routed_params:
        raise EngineError(f"Expert parallelism needs a mixture of experts; {model.name} is "
                          "dense: leave ep at 1.", "ep")
    if model.experts % ep:
        raise EngineError(f"Expert parallel size ({ep}) must divide {model.name}'s "
                          f"{model.experts} experts.", "ep")
    if dp % ep:
        raise EngineError(f"Expert parallel size ({ep}) must divide the data-parallel size "
                          f"({dp}): the experts are spread over data-parallel ranks.", "ep")


def micro_batches_in(global_batch_tokens: float, micro_batch_tokens: int) -> int:
    """The micro-batches one optimiser step's global batch makes: its tokens over a
    micro-batch's, rounded up (a part-filled micro-batch still takes a rank's turn)."""
    return max(1, ceil_div(global_batch_tokens, micro_batch_tokens))


def busy_gpus(global_batch_tokens: int, seq_len: int, micro_batch: int, tp: int) -> int:
    """The most GPUs one optimiser step gives work to without pipeline stages: the global
    batch (tokens) cut into ``seq_len``-token sequences, ``micro_batch`` of them per
    data-parallel rank, each rank ``tp`` GPUs wide. More GPUs only help with a bigger batch,
    shorter sequences or pipeline stages."""
    return micro_batches_in(global_batch_tokens, seq_len * micro_batch) * tp


@dataclass(frozen=True, slots=True)
class BatchSplit(Record):
    """How one optimiser step's global batch is dealt to the ``dp`` data-parallel ranks.

    The batch is cut into micro-batches of ``micro_batch_tokens``; ``busy_dp`` ranks get
    ``accumulation`` of them each. When the batch has fewer micro-batches than there are
    ranks, the other ``dp - busy_dp`` ranks get none: they hold their share of the state and
    join the gradient reduction, but compute nothing (the batch is not raised to feed them).
    ``tokens_per_step`` is the batch actually trained on: ``requested_tokens`` rounded up to
    whole micro-batches, the same number on every busy rank.
    """

    JSON = JsonShape(derived=("tokens_per_step", "idle_dp"))

    requested_tokens: float
    micro_batch_tokens: int
    dp: int
    busy_dp: int
    accumulation: int

    @property
    def tokens_per_step(self) -> int:
        return self.accumulation * self.busy_dp * self.micro_batch_tokens

    @property
    def idle_dp(self) -> int:
        return self.dp - self.busy_dp


def split_batch(global_batch_tokens: float, micro_batch_tokens: int, dp: int) -> BatchSplit:
    """Deal ``global_batch_tokens`` to ``dp`` ranks in micro-batches of
    ``micro_batch_tokens`` (see :class:`BatchSplit`)."""
    micro_batches = micro_batches_in(global_batch_tokens, micro_batch_tokens)
    busy = min(dp, micro_batches)
    return BatchSplit(global_batch_tokens, micro_batch_tokens, dp, busy,
                      ceil_div(micro_batches, busy))


def seconds_on_busy_gpus(seconds_on_all: float, gpus: int, busy: int) -> float:
    """A run's time when only ``busy`` of ``gpus`` GPUs have work: ``seconds_on_all``
    assumed every GPU busy, and idle ones do not shorten it."""
    return seconds_on_all * max(1.0, gpus / busy)
