"""Checks of an action's arguments, as the browser sends them: the state (a ClusterState, or
a dict checked by :meth:`ClusterState.from_dict`), GPU indexes on this system, a catalogue
model and a context length it reads. Bad input raises EngineError naming its field.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.lesson.cluster.state import ClusterState
from engine.numbers import validate
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
    return get_model(model_id)


def _check_context(model: ModelSpec, context_tokens: object) -> int:
    ctx = validate.integer(context_tokens, "context_tokens", label="Context (tokens)",
                           maximum=100_000_000)
    if ctx > model.max_context:
        raise EngineError(f"{model.name} reads at most {model.max_context:,} tokens of context; "
                          f"{ctx:,} asked for.", "context_tokens")
    return ctx
