"""How the lesson says each sharding of the training state ('none', 'zero1', 'zero2',
'zero3', the ids of :data:`engine.numbers.training_choices.SHARDINGS`) and the tensor and pipeline
parallelism beside it: the one phrasebook for every sentence, label and table cell that
names a sharding, so that ZeRO-3 is written one way everywhere.

ZeRO is Rajbhandari et al. 2020: stage 1 splits the optimiser states over the data-parallel
GPUs, stage 2 the gradients too, stage 3 the weights too.
"""

from __future__ import annotations

from engine.words.format import plural

_NAMES: dict[str, str] = {"none": "not sharded", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3"}
_SPLIT: dict[str, str] = {
    "zero1": "optimiser states",
    "zero2": "optimiser states and gradients",
    "zero3": "optimiser states, gradients and weights",
}
_NOT_SHARDED_LABEL = "None: every GPU holds the whole state"


def sharding_name(sharding: str) -> str:
    """The sharding's name, as a table cell or inside a sentence: 'ZeRO-1', 'ZeRO-2',
    'ZeRO-3'; 'not sharded' for 'none'."""
    return _NAMES[sharding]


def what_is_split(sharding: str) -> str:
    """What the sharding splits over the data-parallel GPUs: 'optimiser states',
    'optimiser states and gradients', 'optimiser states, gradients and weights'; 'nothing'
    for 'none'."""
    return _SPLIT.get(sharding, "nothing")


def sharding_label(sharding: str) -> str:
    """A choice's label in a form: 'ZeRO-1: optimiser states split', 'None: every GPU
    holds the whole state'."""
    if sharding == "none":
        return _NOT_SHARDED_LABEL
    return f"{sharding_name(sharding)}: {what_is_split(sharding)} split"


def state_sharding(sharding: str) -> str:
    """The training state's sharding in a summary: 'state sharded with ZeRO-3', 'state not
    sharded'."""
    if sharding == "none":
        return "state not sharded"
    return f"state sharded with {sharding_name(sharding)}"


def sharding_over(sharding: str, gpus: int) -> str:
    """Where the training state sits on ``gpus`` data-parallel GPUs, after a figure: 'ZeRO-3
    over the 8 GPUs', 'on each GPU (not sharded)', 'on one GPU'."""
    if gpus == 1:
        return "on one GPU"
    if sharding == "none":
        return "on each GPU (not sharded)"
    return f"{sharding_name(sharding)} over the {gpus:,} GPUs"


def sharding_setting(sharding: str, gpus: int) -> str:
    """The sharding as a setting's value (a drill's 'Sharding' row): 'ZeRO-3 over the 8
    GPUs', 'none: plain data parallelism, a full copy on each GPU', 'none (one GPU)'."""
    if gpus == 1:
        return "none (one GPU)"
    if sharding == "none":
        return "none: plain data parallelism, a full copy on each GPU"
    return sharding_over(sharding, gpus)


def tensor_parallel(tp: int) -> str:
    """'tensor parallel 8'."""
    return f"tensor parallel {tp:,}"


def parallel_layout(sharding: str, tp: int = 1, pp: int = 1) -> str:
    """The sharding with the tensor- and pipeline-parallel sizes beside it (those above 1),
    for a sentence: 'ZeRO-3', 'ZeRO-3 and tensor parallel 8', 'ZeRO-1, tensor parallel 4
    and 12 pipeline stages'; 'replicated state' for 'none'."""
    parts = ["replicated state" if sharding == "none" else sharding_name(sharding)]
    if tp > 1:
        parts.append(tensor_parallel(tp))
    if pp > 1:
        parts.append(plural(pp, "pipeline stage"))
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]
