"""Checks of an action's arguments, as the browser sends them: GPU indexes on this system, a
model of the lesson or the config library, a context length it reads and a training job's numbers (the state itself is
checked by :mod:`engine.lesson.cluster.from_dict`). Bad input raises EngineError naming its
field.
"""

from __future__ import annotations

from engine.lesson.cluster.models import model_named
from engine.numbers import quantities, validate
from engine.numbers.catalog import ModelSpec, SystemSpec
from engine.numbers.errors import EngineError
from engine.words.format import plural


def check_gpu_indexes(gpus: object, system: SystemSpec) -> tuple[int, ...]:
    """GPU numbers on ``system`` (one, or a list; each at most once), sorted."""
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


def check_model(model_id: object) -> ModelSpec:
    """A catalogue model the lesson uses (not one kept only as a reference) or a model of the
    config library, by its id."""
    if not isinstance(model_id, str):
        raise EngineError("Model must be a model id such as 'llama-3.1-8b' or "
                          "'openai/gpt-oss-20b'.", "model_id")
    model = model_named(model_id)
    if model.reference_only:
        raise EngineError(f"{model.name} is in the catalogue only to check the engine against "
                          "published figures; choose one of the lesson's models.", "model_id")
    return model


# The simulation's ranges, declared with the lesson's other quantities.
SERVE_BATCH = quantities.DEPLOYMENT_BATCH
TRAIN_MICRO_BATCH = quantities.SIMULATED_MICRO_BATCH
TRAIN_TOKENS = quantities.SIMULATED_TRAINING_TOKENS


def check_context(model: ModelSpec, context_tokens: object) -> int:
    """A context length (tokens) within what ``model`` reads."""
    return quantities.context_for(model).check_integer(
        context_tokens, "context_tokens", "Context (tokens)"
    )


def check_training_numbers(
    model: ModelSpec, seq_len: object, micro_batch: object, tokens: object, mfu: object
) -> tuple[int, int, float, float]:
    """A training job's sequence length, micro-batch, token budget and MFU, each in range."""
    seq_q = quantities.context_for(model, quantities.SEQ_LEN)
    seq = seq_q.check_integer(seq_len, "seq_len", "Sequence length")
    mb = TRAIN_MICRO_BATCH.check_integer(micro_batch, "micro_batch", "Micro-batch")
    budget = TRAIN_TOKENS.check(tokens, "tokens", "Token budget")
    eff = quantities.MFU.check(mfu, "mfu", "MFU")
    return seq, mb, budget, eff
