"""The fullest pipeline rank's peak activations, taken from a few groups of micro-batches
(activations._peak_layers_held), equal those of the whole step's schedule
(activations._peak_of_schedule): past its warm-up Megatron-LM's schedule repeats group by
group, so a step of millions of micro-batches costs no more to plan than one of a few."""

from __future__ import annotations

import pytest

from engine.numbers.activations import _peak_layers_held, _peak_of_schedule


@pytest.mark.parametrize("pp", [2, 3, 4, 8, 16])
@pytest.mark.parametrize("interleave", [1, 2, 3, 8])
def test_a_few_groups_give_the_whole_steps_peak(pp, interleave):
    for group in sorted({2, pp - 1 or 1, pp, pp + 1}):
        for micro_batches in range(1, 10 * max(pp, group) + 7):
            for rank in sorted({0, 1, pp - 1}):
                layers = [3.0] * interleave
                layers[0] -= rank == 0
                layers[-1] -= rank == pp - 1
                assert _peak_layers_held(pp, rank, interleave, micro_batches, layers, group) \
                    == _peak_of_schedule(pp, rank, interleave, micro_batches, layers, group)
