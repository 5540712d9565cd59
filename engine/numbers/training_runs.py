"""The lesson's training runs, one storyline, each number once (steps named by their pages in
docs/steps/).

- train-it-anyway asks about **fine-tuning**: adapting Llama 3.1 8B, already trained, to a team's own
  data (a memory question there; engine.numbers.adapters for LoRA and QLoRA).
- training-run and side-by-side watch a **small pretraining run for the demo**: Llama 3.1 8B from scratch on
  dgx-1 on ``DEMO_PRETRAINING_TOKENS``, a fifteenth of the real run, so it ends in weeks.
- compute and training-run quote **Llama 3.1 8B's real pretraining**, ``LLAMA_3_1_PRETRAINING_TOKENS``;
  training-at-scale the 405B's, ``LLAMA_3_1_405B_PRETRAINING_TOKENS``, the one count the paper
  gives (and the one its 3.8 x 10^25 FLOPs are of).
- where-ai-runs asks for the **compute-optimal** budget of any model, Chinchilla's 20 tokens per
  parameter (``engine.numbers.plan.CHINCHILLA_TOKENS_PER_PARAM``): 161 billion for 8B.
"""

from __future__ import annotations

from engine.numbers import quantities, validate

DEMO_PRETRAINING_TOKENS = 1e12
# The Llama 3.1 model card (meta-llama/Llama-3.1-8B, 'Training Data'): pretrained on ~15
# trillion tokens, '15T+' for the 8B, 70B and 405B alike; it gives no finer count per size.
LLAMA_3_1_PRETRAINING_TOKENS = 15e12
# Llama Team, AI @ Meta 2024, 'The Llama 3 Herd of Models', section 3 (pre-training): the 405B
# was pre-trained on 15.6T text tokens.
LLAMA_3_1_405B_PRETRAINING_TOKENS = 15.6e12
# The same paper, section 3.4.1 and Table 4: on 16,384 H100s the 405B took 16M tokens per
# optimiser step (2,048 sequences of 8,192 tokens), the batch of most of its pretraining.
LLAMA_3_1_405B_GLOBAL_BATCH_TOKENS = 16_777_216
# The same section: sequences of 8,192 tokens after the first 252M tokens, so for all but a
# sliver of the run; its model FLOPs count attention at that length.
LLAMA_3_1_405B_SEQ_LEN = 8192

RUNS = {
    "demo": DEMO_PRETRAINING_TOKENS,
    "llama-3.1": LLAMA_3_1_PRETRAINING_TOKENS,
    "llama-3.1-405b": LLAMA_3_1_405B_PRETRAINING_TOKENS,
}


def run_tokens(run: object) -> float:
    """Tokens of a named run ('demo', 'llama-3.1', 'llama-3.1-405b')."""
    return RUNS[validate.choice(run, "run", tuple(RUNS))]


def tokens_or_run(tokens: object) -> float:
    """A token count as an author writes it in a figure: a number, or a run's name."""
    if isinstance(tokens, str) and tokens in RUNS:
        return RUNS[tokens]
    return quantities.TRAINING_TOKENS.check(tokens, "tokens", "Training tokens")
