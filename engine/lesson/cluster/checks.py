"""Checks of an action's arguments, as the browser sends them: the state (a ClusterState, or
a dict checked by :meth:`ClusterState.from_dict`), GPU indexes on this system, a catalogue
model and a context length it reads. Bad input raises EngineError naming its field.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.lesson.cluster.state import MAX_BATCH, ClusterState
from engine.numbers import quantities, validate
from engine.numbers.catalog import ModelSpec, SystemSpec, get_model
from engine.numbers.errors import EngineError
from engine.words.format import plural


def _check_state(state: object) -> ClusterState:
    if isinstance(state, ClusterState):
        return state
    if isinstance(state, Mapping):
        return ClusterState.from_dict(state)
    raise EngineError("Expected a cluster state (from new_cluster or a previous action).",
                      "state")


def _check_gpu_indexes(gpus: object, system: SystemSpec) -> tuple[int, ...]:
    count = system.gpu_count
    where = f"{system.id} has GPUs 0-{count - 1}"
    items: list[object]
    if isinstance(gpus, int | str) and not isinstance(gpus, bool):
        items = [gpus]
    elif isinstance(gpus, list | tuple):
        items = list(gpus)
    else:
        raise EngineError(f"GPUs must be a list of GPU numbers; {where}.", "gpus")
    if not items:
        raise EngineError(f"Choose at least one GPU; {where}.", "gpus")
    if len(items) > count:
        raise EngineError(f"{plural(len(items), 'GPU')} asked for; {where}.", "gpus")
    out: list[int] = []
    for item in items:
        if isinstance(item, str) and not item.strip().isdigit():
            raise EngineError(f"There is no GPU {item[:20]!r}: {where}.", "gpus")
        try:
            g = validate.integer(item, "gpus", label="GPU number", minimum=0, maximum=count - 1)
        except EngineError:
            shown = str(item)[:20]
            raise EngineError(f"There is no GPU {shown}: {where}.", "gpus") from None
        if g in out:
            raise EngineError(f"GPU {g} is listed twice.", "gpus")
        out.append(g)
    return tuple(sorted(out))


def _check_model(model_id: object) -> ModelSpec:
    if not isinstance(model_id, str):
        raise EngineError("Model must be a catalogue model id such as 'llama-3.1-8b'.",
                          "model_id")
    model = get_model(model_id)
    if model.reference_only:
        raise EngineError(f"{model.name} is in the catalogue only to check the engine against "
                          "published figures; choose one of the lesson's models.", "model_id")
    return model


# The simulation's ranges: the lesson's quantities, narrowed where dgx-1's simulation stops.
SERVE_BATCH = quantities.BATCH.within(
    maximum=MAX_BATCH, reason=f"one deployment here serves at most {MAX_BATCH:,} requests at once"
)
TRAIN_MICRO_BATCH = quantities.MICRO_BATCH.within(
    maximum=1024, reason="the simulation trains at most 1,024 sequences per micro-batch"
)
TRAIN_TOKENS = quantities.TRAINING_TOKENS.within(
    maximum=1e15, reason="the simulation runs at most 1e15 tokens"
)


def _check_context(model: ModelSpec, context_tokens: object) -> int:
    return quantities.context_for(model).check_integer(
        context_tokens, "context_tokens", "Context (tokens)"
    )


def _check_training_numbers(
    model: ModelSpec, seq_len: object, micro_batch: object, tokens: object, mfu: object
) -> tuple[int, int, float, float]:
    """A training job's sequence length, micro-batch, token budget and MFU, each in range."""
    seq_q = quantities.context_for(model, quantities.SEQ_LEN)
    seq = seq_q.check_integer(seq_len, "seq_len", "Sequence length")
    mb = TRAIN_MICRO_BATCH.check_integer(micro_batch, "micro_batch", "Micro-batch")
    budget = TRAIN_TOKENS.check(tokens, "tokens", "Token budget")
    eff = quantities.MFU.check(mfu, "mfu", "MFU")
    return seq, mb, budget, eff
