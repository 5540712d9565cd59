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
from engine.numbers.load.step_time import PrefillChunk


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
    preempted to make room; the same work as the step-time model reads it: each prefill
    chunk, and the tokens each decode's next token attends to (itself included), in order.
    A decode computes its next token (or verifies a draft), a prefill chunk a part of its
    prompt (or of its recomputation after a preemption); ``partial_prefills``: the chunks
    that leave some of it for a later step."""

    work: tuple[tuple[Sequence, int], ...]
    preempted: int
    prefills: tuple[PrefillChunk, ...]
    decode_contexts: tuple[int, ...]
    prefill_tokens: int  # the prefill chunks' tokens together
    partial_prefills: int


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

    def schedule(self, reserved: int = 0) -> Scheduled:
        """The next step's work (empty when nothing can run). ``reserved``: running requests
        kept outside ``running``, ahead of it (the oldest), each decoding one token this step
        in blocks already given to it: their tokens come out of the budget first and they
        count against the cap on running requests."""
        budget = self.max_batched_tokens - reserved
        work: list[tuple[Sequence, int]] = []
        prefills: list[PrefillChunk] = []
        decodes: list[int] = []
        prefill_tokens = 0
        partial = 0
        preempted = 0
        i = 0
        bt = self.block_tokens
        running = self.running
        verify = self.spec_tokens + 1
        # One pass over the running requests: each one's tokens, blocks and kind at once
        # (this loop runs for every request of every step).
        while i < len(running) and budget > 0:
            seq = running[i]
            computed = seq.computed
            generated = seq.generated
            left = seq.prompt + generated - computed
            n = left
            if n == 1 and verify > 1 and generated:
                if verify > budget:
                    break
                n = verify
            if n > budget:
                n = budget
            # Most steps are decodes within the blocks already held: no call at all.
            if (computed + n + bt - 1) // bt > seq.blocks + seq.cached // bt:
                placed = True
                while not self._grow(seq, n):
                    preempted += 1
                    if self._preempt_newest() is seq:
                        placed = False
                        break
                if not placed:
                    break
            work.append((seq, n))
            if (n == 1 and generated > 0) or n > left:
                decodes.append(computed + 1)
            else:
                prefills.append(PrefillChunk(n, computed))
                prefill_tokens += n
                if n < left:
                    partial += 1
            budget -= n
            i += 1
        if not preempted:
            waiting = self.waiting
            cap = self.max_running - reserved
            while waiting and budget > 0 and len(running) < cap:
                seq = waiting[0]
                computed = seq.computed
                left = seq.tokens - computed
                n = min(left, budget)
                if not self._grow(seq, n):
                    break
                waiting.popleft()
                running.append(seq)
                work.append((seq, n))
                if (n == 1 and seq.generated > 0) or n > left:
                    decodes.append(computed + 1)
                else:
                    prefills.append(PrefillChunk(n, computed))
                    prefill_tokens += n
                    if n < left:
                        partial += 1
                budget -= n
        return Scheduled(tuple(work), preempted, tuple(prefills), tuple(decodes),
                         prefill_tokens, partial)

    def complete(self, step: Scheduled, now: float) -> list[Sequence]:
        """Apply ``step``, which ended at ``now`` (s): tokens computed, tokens sampled,
        finished requests out (their blocks freed). Returns those finished."""
        done = []
        gaps = self.gaps
        # Most of a step's decodes emitted their last token at the same moment (the end of
        # the step before): their gaps are counted together, once that moment is known.
        last = -1.0
        same = 0
        for seq, n in step.work:
            generated = seq.generated
            computed = seq.computed + n
            target = seq.prompt + generated
            if computed > target:  # a verification
                before = seq.credit
                seq.credit += self.spec_tokens_per_step
                emitted = min(int(seq.credit) - int(before), seq.output - generated)
                seq.computed += emitted
                seq.generated = generated + emitted
                gap = now - seq.last_token
                gaps[gap] = gaps.get(gap, 0) + 1
                seq.last_token = now
                if seq.generated == seq.output:
                    done.append(seq)
                continue
            seq.computed = computed
            if computed == target:
                generated += 1
                seq.generated = generated
                if seq.first_token < 0:
                    seq.first_token = now
                else:
                    before_seconds = seq.last_token
                    if before_seconds == last:
                        same += 1
                    else:
                        if same:
                            gap = now - last
                            gaps[gap] = gaps.get(gap, 0) + same
                        last = before_seconds
                        same = 1
                seq.last_token = now
                if generated == seq.output:
                    done.append(seq)
        if same:
            gap = now - last
            gaps[gap] = gaps.get(gap, 0) + same
        if done:
            running = self.running
            for s in done:
                running.remove(s)
            for s in done:
                self.free_blocks += s.blocks
                s.blocks = 0
        return done
