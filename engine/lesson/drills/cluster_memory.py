"""Drill ("Going further"): the training state each GPU of a pod holds when a model is split
by tensor and pipeline parallelism and its optimiser states are sharded over the
data-parallel copies (ZeRO-1), and whether it fits.

Questions are drawn from a seed as in the other drills (:mod:`engine.lesson.drills.core`);
every number comes from :func:`engine.numbers.memory.training_memory`. The answer is the
training state per GPU (weights, gradients, optimiser states, Adam in mixed precision),
activations and runtime overhead left out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine.lesson.drills.core import (
    TOLERANCE,
    QuestionBase,
    Slip,
    first_drawn,
    parse_seed,
)
from engine.lesson.drills.training_memory import Feedback, check_answer
from engine.numbers import memory
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware, get_model
from engine.numbers.training_choices import Convention, Optimizer
from engine.words.format import format_GB

MISTAKES = {
    "forgot_pp": "divided by the tensor-parallel GPUs only, not the pipeline stages",
    "forgot_tp": "divided by the pipeline stages only, not the tensor-parallel GPUs",
    "not_sharded": "did not shard the optimiser states over the data-parallel copies",
    "sharded_all": "sharded the weights and gradients too (that is ZeRO-3, not ZeRO-1)",
    "all_gpus": "divided the whole state by every GPU of the pod",
    "gib": "answered in GiB instead of GB",
    "bytes_not_GB": "answered in bytes instead of GB",
    "wrong_verdict": "right memory, wrong verdict on whether it fits",
    "unknown": "no typical slip matches",
}

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-2-70b")
GPUS = ("h100-sxm", "h200", "a100-80gb", "b200")
TPS = (1, 2, 4, 8)
PPS = (1, 2, 4, 8, 16)
SERVERS = (1, 2, 4, 8, 16, 32, 64, 128)
OPTIMIZER: Optimizer = "adam"
CONVENTION: Convention = "mixed-16"
VERDICT_MARGIN = 0.06
ANSWER_RANGE = (0.05, 8.0)  # answer / capacity
_MAX_DRAWS = 200
_OPTIMIZER_PARTS = ("master_weights", "first_moment", "second_moment")


@dataclass(frozen=True, slots=True)
class PodMemoryQuestion(QuestionBase):
    """One question: ``memory`` is the engine's TrainingMemory of the split (tp x pp x dp,
    ZeRO-1); the answer is its training state per GPU."""

    seed: int
    model: ModelSpec
    hardware: HardwareSpec
    servers: int
    memory: memory.TrainingMemory
    tolerance: float = TOLERANCE

    @property
    def answer_bytes(self) -> float:
        return self.memory.state_bytes

    @property
    def capacity_bytes(self) -> float:
        return self.hardware.memory_bytes

    @property
    def fits(self) -> bool:
        """The state alone against the GPU's memory (activations are not asked)."""
        return self.memory.state_bytes <= self.hardware.memory_bytes

    @property
    def lead(self) -> str:
        m = self.memory
        return (f"You train {self.model.name} ({self.model.params:,} parameters, "
                f"{self.model.layers} layers) on {self.servers} "
                f"server{'s' if self.servers > 1 else ''} of {m.gpus // self.servers} × "
                f"{self.hardware.name} ({m.gpus:,} GPUs, {format_GB(self.capacity_bytes)} each).")

    @property
    def ask(self) -> str:
        return ("How many GB of training state (weights, gradients, optimiser states) does "
                "each GPU hold? Leave out activations and runtime overhead. And does it fit?")

    def givens(self) -> list[tuple[str, str]]:
        m = self.memory
        bpp = dict(m.bytes_per_param)
        opt = sum(v for k, v in bpp.items() if k in _OPTIMIZER_PARTS)
        return [
            ("Split", f"tensor parallel {m.tp} × {m.pp} pipeline stage"
                      f"{'s' if m.pp > 1 else ''} × {m.dp:,} data-parallel "
                      f"cop{'ies' if m.dp > 1 else 'y'}"),
            ("Optimiser and precision", f"Adam, mixed precision: {m.bytes_per_param_total:g} "
                                        f"bytes per parameter, {opt:g} of them optimiser states"),
            ("Sharding", "ZeRO-1: the optimiser states split over the data-parallel copies"),
        ]

    def _per_gpu(self, divide_params: float, divide_opt: float, divide_rest: float = 1.0
                 ) -> float:
        bpp = dict(self.memory.bytes_per_param)
        opt = sum(v for k, v in bpp.items() if k in _OPTIMIZER_PARTS)
        rest = sum(bpp.values()) - opt
        share = self.model.params / divide_params
        return share * (rest / divide_rest + opt / divide_opt)

    def working(self) -> tuple[str, ...]:
        m = self.memory
        bpp = dict(m.bytes_per_param)
        opt = sum(v for k, v in bpp.items() if k in _OPTIMIZER_PARTS)
        rest = m.bytes_per_param_total - opt
        held = self.model.params / (m.tp * m.pp)
        return (
            f"Each GPU holds 1/{m.tp} of the matrices of 1/{m.pp} of the layers: "
            f"{self.model.params:,} ÷ ({m.tp} × {m.pp}) = {held:,.0f} parameters.",
            f"Weights and gradients, {rest:g} bytes each: {format_GB(held * rest)}.",
            f"Optimiser states, {opt:g} bytes each, split over {m.dp:,} copies: "
            f"{format_GB(held * opt / m.dp)}.",
            f"Together: {format_GB(self.answer_bytes)} per GPU.",
            self.verdict_line(),
        )

    def typical_wrong_answers(self) -> list[Slip]:
        m = self.memory
        tp, pp, dp = m.tp, m.pp, m.dp
        out: list[Slip] = [
            ("forgot_pp", self._per_gpu(tp, dp),
             f"The {pp} pipeline stages split the layers too: each GPU holds 1/{pp} of them."),
            ("forgot_tp", self._per_gpu(pp, dp),
             f"Tensor parallelism splits each layer's matrices over {tp} GPUs as well."),
            ("not_sharded", self._per_gpu(tp * pp, 1),
             f"ZeRO-1 splits the optimiser states over the {dp:,} data-parallel copies."),
            ("sharded_all", self._per_gpu(tp * pp, dp, dp),
             "ZeRO-1 shards only the optimiser states; every copy keeps its weights and "
             "gradients whole."),
            ("all_gpus", self.model.params * m.bytes_per_param_total / m.gpus,
             "Only the optimiser states are divided among the copies; the rest is divided "
             f"by tensor parallel × stages ({tp * pp}) alone."),
            self.gib_slip(),
            self.bytes_slip(),
        ]
        return self.told_apart(out)


def _draw(rng: random.Random, seed: int) -> PodMemoryQuestion | None:
    model = get_model(rng.choice(MODELS))
    hardware = get_hardware(rng.choice(GPUS))
    tp, pp, servers = rng.choice(TPS), rng.choice(PPS), rng.choice(SERVERS)
    gpus = servers * hardware.link_spec().chips_per_server
    if model.layers % pp or gpus % (tp * pp) or model.heads % tp:
        return None
    mem = memory.training_memory(model, hardware, gpus=gpus, tp=tp, pp=pp, sharding="zero1",
                                 optimizer=OPTIMIZER, convention=CONVENTION)
    q = PodMemoryQuestion(seed, model, hardware, servers, mem)
    needed = {"gib"} | ({"forgot_pp"} if pp > 1 else set()) | (
        {"forgot_tp"} if tp > 1 else set()) | ({"not_sharded"} if mem.dp > 1 else set())
    return q if q.well_posed(ANSWER_RANGE, VERDICT_MARGIN, needed) else None


def _fallback(seed: int) -> PodMemoryQuestion:
    """Llama 3.1 70B on 4 H100 servers, tensor parallel 8 × 2 stages × 2 copies."""
    model, hardware = get_model("llama-3.1-70b"), get_hardware("h100-sxm")
    mem = memory.training_memory(model, hardware, gpus=32, tp=8, pp=2, sharding="zero1",
                                 optimizer=OPTIMIZER, convention=CONVENTION)
    return PodMemoryQuestion(seed, model, hardware, 4, mem)


def pod_memory_question(seed: object) -> PodMemoryQuestion:
    """Question number ``seed`` (1 to MAX_SEED): the same number always gives the same one."""
    s = parse_seed(seed)
    return first_drawn(random.Random(s), s, _draw, _fallback, _MAX_DRAWS)


__all__ = ["MISTAKES", "Feedback", "PodMemoryQuestion", "check_answer", "pod_memory_question"]
