"""Named numbers for claims the lesson makes beside a widget (issue 12): each figure is the
number the widget next to it shows by default, so prose and widget cannot disagree."""

from __future__ import annotations

from engine.numbers.catalog import get_hardware, resolve_model
from engine.numbers.compute import mfu_at, training_flops_per_token
from engine.words.format import format_seconds, format_tokens_per_s

# Step 13's worked example: a measured training throughput of Llama 3.1 8B on dgx-1's eight
# H100s, all GPUs together. The MFU calculator starts from it, and the prose quotes it.
EXAMPLE_TRAINING_TOKENS_PER_S = 60_000.0


def example_throughput() -> str:
    """The measured throughput step 13's widget starts from: '60,000 tokens/s'."""
    return format_tokens_per_s(EXAMPLE_TRAINING_TOKENS_PER_S)


def example_mfu(model: str, gpus: int = 8, hardware: str = "h100-sxm") -> str:
    """The MFU of that throughput (bf16 peak): '36.5 %', as the widget writes it."""
    per_token = training_flops_per_token(resolve_model(model_id=model)).model
    peak = get_hardware(hardware).peak_flops_per_s("bf16")
    share = mfu_at(EXAMPLE_TRAINING_TOKENS_PER_S, per_token, int(gpus), peak)
    return f"{share * 100:.1f} %"


def example_train_time(tokens: float) -> str:
    """``tokens`` at that throughput: '7.92 years' for 15 trillion tokens."""
    return format_seconds(float(tokens) / EXAMPLE_TRAINING_TOKENS_PER_S)


CLAIM_FIGURES = (example_throughput, example_mfu, example_train_time)
