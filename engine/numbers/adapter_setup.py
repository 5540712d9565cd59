"""What an adapter fine-tuning run trains: the method, the rank, the matrices that get an
adapter, and the trainable parameters that makes. A record of choices only, so that the
memory, the operations and the words can all carry it (engine.numbers.adapters computes it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from engine.numbers.records import Record

Method = Literal["lora", "qlora"]
METHODS: tuple[Method, ...] = get_args(Method)
Targets = Literal["attention-qv", "attention", "mlp", "all-linear"]
# Which matrices of each layer get an adapter: the LoRA paper's main choice (query and value
# projections, section 7.1), every attention projection, every MLP matrix, or every linear
# matrix (the QLoRA paper's, section 4).
TARGETS: dict[Targets, tuple[str, ...]] = {
    "attention-qv": ("attention.q", "attention.v"),
    "attention": ("attention.q", "attention.k", "attention.v", "attention.o"),
    "mlp": ("mlp.gate", "mlp.up", "mlp.down"),
    "all-linear": ("attention.q", "attention.k", "attention.v", "attention.o",
                   "mlp.gate", "mlp.up", "mlp.down"),
}

# The command line's and the playground's short names for them.
PLAN_TARGETS: dict[str, Targets] = {"attn": "attention", "mlp": "mlp", "all": "all-linear"}
# The plan's adapter choice: none (full training) or a method.
ADAPTER_CHOICES = ("none", *METHODS)


@dataclass(frozen=True, slots=True)
class AdapterSetup(Record):
    """Adapters of ``rank`` on each layer's ``targets`` matrices, ``trainable_params`` in
    all; every other weight (embeddings and output head included) frozen."""

    method: Method
    rank: int
    targets: Targets
    trainable_params: int

    @property
    def matrices(self) -> tuple[str, ...]:
        """The component names (engine.numbers.model_shapes) that carry an adapter."""
        return TARGETS[self.targets]

    @property
    def forward_flops_per_token(self) -> float:
        """An adapter's forward pass on one token: X A (2 k r) then (X A) B (2 r d), so 2 x
        its r (d + k) parameters, summed over every adapter."""
        return 2.0 * self.trainable_params
