"""Prefix caching in a simulated server (vLLM's automatic prefix caching): a share of the
requests begin with the same ``tokens``-token prefix (a system prompt, say), whose KV
cache is computed once and shared.

- Which requests hit: deterministic, spread evenly: request i (from 0) hits when
  floor((i + 1) x hit) > floor(i x hit), so any run of requests holds the share ``hit`` to
  within one request (0.5: requests 1, 3, 5, ...; 1: all of them).
- What a hit skips: the prefix's whole KV blocks (a cache shares only full blocks), and
  never the prompt's last token (the step that samples the first token must compute it):
  floor(min(tokens, prompt - 1) / block) blocks of ``block`` tokens. A miss computes its
  whole prompt.
- The pool: the shared prefix's blocks are held from the start, once, whatever the number
  of requests using them, and never freed; a hit request holds blocks only for its tokens
  past them. A preempted hit recomputes from the end of the shared prefix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PrefixCache:
    """A shared prefix of ``tokens`` tokens that a share ``hit`` (0 to 1) of requests start
    with."""

    tokens: int
    hit: float

    def hits(self, index: int) -> bool:
        """Whether request ``index`` (from 0, in arrival order) starts with the prefix."""
        return math.floor((index + 1) * self.hit) > math.floor(index * self.hit)

    def shared_blocks(self, block_tokens: int) -> int:
        """Blocks of the prefix that the pool holds once for every hit."""
        return self.tokens // block_tokens

    def cached_tokens(self, index: int, prompt: int, block_tokens: int) -> int:
        """Prompt tokens of request ``index`` already in the cache when it arrives."""
        if not self.hits(index):
            return 0
        return min(self.tokens, prompt - 1) // block_tokens * block_tokens
