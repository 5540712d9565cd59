"""The oldest running requests of a simulated replica while every step decodes each of them
one token, kept as counts instead of one by one: a step of a batch of hundreds then costs
the work of the few requests that prefill, join or finish.

Such a request (a *plain decode*: its prompt and all but its newest token in the KV cache,
blocks for exactly those tokens, its last token at the end of the step before) changes in a
fixed pattern: one token computed and one produced a step, a new block when its computed
tokens fill the last one, and it finishes in a step known from the start. So the front keeps
for each one only ``computed - tick`` (its *base*; ``tick`` counts the front's steps) and
for the front as a whole: the bases' sum (the decodes' contexts add up to it), how many bases
fall on each residue of the block size (how many decodes take a block each step) and who
finishes in which step. The scheduler schedules the rest of the running requests after
them (:meth:`~engine.numbers.load.scheduler.Scheduler.schedule` with ``reserved``), exactly
as it would with the front's requests in its ``running`` list ahead of them, as long as the
step has the blocks and the budget for every decode of the front; otherwise, and whenever
anything reads the requests one by one, :meth:`DecodingFront.release` writes their fields
back and puts them at the head of ``running``.

Only for plain decoding (no speculative decoding) of a model without a sliding window, whose
decode cost depends on the contexts only through their sum
(:meth:`~engine.numbers.load.step_time.StepTime.summed_seconds`).
"""

from __future__ import annotations

from engine.numbers.load.kv_blocks import blocks_for
from engine.numbers.load.scheduler import Scheduler, Sequence


class DecodingFront:
    """The front of one replica's running requests (mutable; see the module's note)."""

    def __init__(self, block_tokens: int) -> None:
        self.block_tokens = block_tokens
        self.members: list[Sequence] = []  # in the order they started
        self.bases: dict[int, int] = {}  # a member's index -> its computed tokens less tick
        self.tick = 0  # the front's steps so far
        self.base_sum = 0
        self.by_residue = [0] * block_tokens  # members by base mod block_tokens
        self.finishing: dict[int, list[Sequence]] = {}  # tick of a step -> who finish in it
        self.last_token_seconds = 0.0  # when every member's newest token came

    def __len__(self) -> int:
        return len(self.members)

    def blocks_needed(self) -> int:
        """Blocks the next step's decodes take (each one's computed tokens fill its last)."""
        return self.by_residue[-self.tick % self.block_tokens]

    def context_tokens(self) -> int:
        """The next step's decodes' contexts, added up (each one's computed tokens and the
        new one)."""
        return self.base_sum + len(self.members) * (self.tick + 1)

    def joins(self, seq: Sequence, now: float) -> bool:
        """Whether ``seq`` (the head of ``running``, after a step ending at ``now``) is a
        plain decode that can join; it joins when so."""
        bt = self.block_tokens
        if (seq.prompt + seq.generated - seq.computed != 1 or not seq.generated
                or seq.last_token != now
                or seq.blocks + seq.cached // bt != blocks_for(seq.computed, bt)):
            return False
        base = seq.computed - self.tick
        self.members.append(seq)
        self.bases[seq.index] = base
        self.base_sum += base
        self.by_residue[base % bt] += 1
        # It produces its last token in the step with this tick.
        last = seq.output - seq.generated - 1 + self.tick
        self.finishing.setdefault(last, []).append(seq)
        self.last_token_seconds = now
        return True

    def step_done(self, sched: Scheduler, now: float, step_start: float) -> int:
        """Every member decoded one token in the step from ``step_start`` to ``now`` (s):
        the gaps counted, those that finish written back and out, their blocks freed.
        Returns how many finished."""
        gap = now - step_start
        sched.gaps[gap] = sched.gaps.get(gap, 0) + len(self.members)
        done = self.finishing.pop(self.tick, None)
        self.tick += 1
        self.last_token_seconds = now
        if done is None:
            return 0
        bt = self.block_tokens
        for seq in done:
            base = self.bases.pop(seq.index)
            self.base_sum -= base
            self.by_residue[base % bt] -= 1
            seq.computed = base + self.tick
            seq.generated = seq.output
            seq.last_token = now
            sched.free_blocks += blocks_for(seq.computed, bt) - seq.cached // bt
            seq.blocks = 0
            self.members.remove(seq)
        return len(done)

    def release(self, sched: Scheduler) -> None:
        """Write every member's fields back and put them at the head of ``sched.running``,
        in their order; the front is then empty."""
        if not self.members:
            return
        bt = self.block_tokens
        for seq in self.members:
            seq.computed = self.bases[seq.index] + self.tick
            seq.generated = seq.computed + 1 - seq.prompt
            seq.blocks = blocks_for(seq.computed, bt) - seq.cached // bt
            seq.last_token = self.last_token_seconds
        sched.running[:0] = self.members
        self.members = []
        self.bases.clear()
        self.base_sum = 0
        self.by_residue = [0] * bt
        self.finishing.clear()
        self.tick = 0
