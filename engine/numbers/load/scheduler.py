"""A scheduler like vLLM V1's, for one replica: which requests run in the next step and how
many tokens each computes.

Each step has a token budget (``max_batched_tokens``) and a cap on running sequences
(``max_running``). Running requests come first, in the order they started: each asks for
the tokens it has not computed yet (a decode: 1; a prompt: what is left of it, cut to the
budget, so a long prompt is prefilled in chunks beside the others' decodes). Each needs KV
blocks for its tokens; when the pool runs out, the newest running request is preempted
(its blocks freed, back to the front of the queue, to be recomputed from its prompt and
the tokens it had already produced). Only in a step with no preemption are waiting requests
admitted, first come first served, while budget, cap and blocks allow.

A request of ``prompt`` tokens with ``generated`` tokens out has ``prompt + generated``
tokens to compute; once all are computed the step samples its next token. So its prefill
emits the first token, each decode one more, and it finishes at ``output`` tokens.

With speculative decoding (``spec_tokens`` > 0), each decode is a verification of
``spec_tokens`` draft tokens: it asks for ``spec_tokens + 1`` tokens of budget and of KV
blocks (a verification that does not fit what is left of the budget waits for the next
step), and yields the whole tokens by which the request's running total of
``spec_tokens_per_step`` grows (see :mod:`engine.numbers.load.speculative`); the KV cache
keeps the accepted ones. A request's ``cached`` prompt tokens (a shared prefix, see
:mod:`engine.numbers.load.prefix_cache`) are computed and held in shared blocks outside
its own: it starts, and restarts after a preemption, from them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from engine.numbers.load.kv_blocks import blocks_for


@dataclass(slots=True, eq=False)
class Sequence:
    """One request's state inside the simulation (mutable; never leaves it): its lengths,
    arrival (s), tokens computed into the KV cache, tokens produced, blocks held, the times
    of its first and latest tokens (s)."""

    index: int
    prompt: int
    output: int
    arrival: float
    computed: int = 0
    generated: int = 0
    blocks: int = 0
    preemptions: int = 0
    first_token: float = -1.0
    last_token: float = -1.0
    cached: int = 0  # prompt tokens in a shared prefix's blocks (whole blocks)
    credit: float = 0.0  # expected tokens its verifications have yielded so far

    @property
    def tokens(self) -> int:
        """Tokens its KV cache must hold before it samples its next token."""
        return self.prompt + self.generated


@dataclass(frozen=True, slots=True)
class Scheduled:
    """One step's work: (sequence, tokens it computes) in order, and how many requests were
    preempted to make room."""

    work: tuple[tuple[Sequence, int], ...]
    preempted: int


class Scheduler:
    """The queue, the running requests and the block pool of one replica; ``gaps``: every
    gap between two tokens of a request so far (s), as gap -> how many times it occurred
    (a step's decodes all see the same gap, so a step adds one entry, not one per decode)."""

    def __init__(self, *, max_running: int, max_batched_tokens: int, blocks: int,
                 block_tokens: int, spec_tokens: int = 0,
                 spec_tokens_per_step: float = 1.0) -> None:
        self.spec_tokens = spec_tokens
        self.spec_tokens_per_step = spec_tokens_per_step
        self.max_running = max_running
        self.max_batched_tokens = max_batched_tokens
        self.total_blocks = blocks
        self.free_blocks = blocks
        self.block_tokens = block_tokens
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.gaps: dict[float, int] = {}

    def add(self, seq: Sequence) -> None:
        """A request arrives: to the back of the queue."""
        self.waiting.append(seq)

    def _grow(self, seq: Sequence, tokens: int) -> bool:
        """Give ``seq`` the blocks for ``tokens`` more tokens, if the pool has them."""
        need = (blocks_for(seq.computed + tokens, self.block_tokens)
                - seq.cached // self.block_tokens - seq.blocks)
        if need > self.free_blocks:
            return False
        self.free_blocks -= need
        seq.blocks += need
        return True

    def _preempt_newest(self) -> Sequence:
        victim = self.running.pop()
        self.free_blocks += victim.blocks
        victim.blocks = 0
        victim.computed = victim.cached
        victim.preemptions += 1
        self.waiting.appendleft(victim)
        return victim

    def schedule(self) -> Scheduled:
        """The next step's work (empty when nothing can run)."""
        budget = self.max_batched_tokens
        work: list[tuple[Sequence, int]] = []
        preempted = 0
        i = 0
        bt = self.block_tokens
        running = self.running
        verify = self.spec_tokens + 1
        while i < len(running) and budget > 0:
            seq = running[i]
            n = seq.prompt + seq.generated - seq.computed
            if n == 1 and verify > 1 and seq.generated:
                if verify > budget:
                    break
                n = verify
            if n > budget:
                n = budget
            # Most steps are decodes within the blocks already held: no call at all.
            if (seq.computed + n + bt - 1) // bt > seq.blocks + seq.cached // bt:
                placed = True
                while not self._grow(seq, n):
                    preempted += 1
                    if self._preempt_newest() is seq:
                        placed = False
                        break
                if not placed:
                    break
            work.append((seq, n))
            budget -= n
            i += 1
        if not preempted:
            while self.waiting and budget > 0 and len(self.running) < self.max_running:
                seq = self.waiting[0]
                n = min(seq.tokens - seq.computed, budget)
                if not self._grow(seq, n):
                    break
                self.waiting.popleft()
                self.running.append(seq)
                work.append((seq, n))
                budget -= n
        return Scheduled(tuple(work), preempted)

    def complete(self, step: Scheduled, now: float) -> list[Sequence]:
        """Apply ``step``, which ended at ``now`` (s): tokens computed, tokens sampled,
        finished requests out (their blocks freed). Returns those finished."""
        done = []
        gaps = self.gaps
        for seq, n in step.work:
            if seq.computed + n > seq.prompt + seq.generated:  # a verification
                before = seq.credit
                seq.credit += self.spec_tokens_per_step
                emitted = min(int(seq.credit) - int(before), seq.output - seq.generated)
                seq.computed += emitted
                seq.generated += emitted
                gap = now - seq.last_token
                gaps[gap] = gaps.get(gap, 0) + 1
                seq.last_token = now
                if seq.generated == seq.output:
                    done.append(seq)
                continue
            seq.computed += n
            if seq.computed == seq.prompt + seq.generated:
                seq.generated += 1
                if seq.first_token < 0:
                    seq.first_token = now
                else:
                    gap = now - seq.last_token
                    gaps[gap] = gaps.get(gap, 0) + 1
                seq.last_token = now
                if seq.generated == seq.output:
                    done.append(seq)
        if done:
            for s in done:
                self.running.remove(s)
            for s in done:
                self.free_blocks += s.blocks
                s.blocks = 0
        return done
