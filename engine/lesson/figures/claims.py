"""Named numbers for claims the lesson makes beside a widget: each figure is the
number the widget next to it shows by default, so prose and widget cannot disagree."""

from __future__ import annotations

from engine.numbers import quantities
from engine.numbers.catalog import get_hardware, get_system, prices, resolve_model
from engine.numbers.catalog.efficiency import matmul_fraction
from engine.numbers.code_paths import code_path, parse_path
from engine.numbers.compute import mfu_at, training_flops_per_token
from engine.numbers.plan import plan
from engine.numbers.training_runs import DEMO_PRETRAINING_TOKENS, tokens_or_run
from engine.words.format import format_percent, format_ratio, format_seconds, format_tokens_per_s


def expected_training_tokens_per_s(model: str = "llama-3.1-8b", system: str = "dgx-1") -> float:
    """What a tuned stack is expected to reach training ``model`` on all of ``system``'s GPUs
    (engine.numbers.expected_training, through plan): the basis side_by_side shows,
    ZeRO-3 and 4,096-token sequences. Rounded to three significant figures, the precision a
    measured throughput is quoted at: 88,600 tokens/s for Llama 3.1 8B on dgx-1."""
    s = get_system(system)
    p = plan(model=resolve_model(model_id=model), hardware=s.gpu.id, gpus=s.gpu_count,
             task="train", tokens=DEMO_PRETRAINING_TOKENS, sharding="zero3", seq_len=4096)
    assert p.train is not None
    return float(f"{p.train.expected.tokens_per_s:.3g}")


# The worked example of docs/steps/compute.md: the throughput the lesson expects of Llama 3.1
# 8B on dgx-1's eight H100s (side_by_side's figure), all GPUs together. The MFU calculator starts
# from it, and the prose quotes it.
EXAMPLE_TRAINING_TOKENS_PER_S = expected_training_tokens_per_s()


def example_throughput() -> str:
    """The throughput mfu_calculator starts from, the lesson's expected figure for Llama 3.1
    8B on dgx-1: '88,600 tokens/s'."""
    return format_tokens_per_s(EXAMPLE_TRAINING_TOKENS_PER_S)


def example_mfu(model: str, gpus: int = 8, hardware: str = "h100-sxm") -> str:
    """The MFU of that throughput (bf16 peak): '54 %', as the widget writes it."""
    per_token = training_flops_per_token(resolve_model(model_id=model)).model
    peak = get_hardware(hardware).peak_flops_per_s("bf16")
    g = quantities.GPUS.check_integer(gpus, "gpus", "GPU count")
    share = mfu_at(EXAMPLE_TRAINING_TOKENS_PER_S, per_token, g, peak)
    return format_percent(share)


def example_train_time(tokens: float | str) -> str:
    """``tokens`` (a count or a run's name) at that throughput: '5.37 years' for Llama 3.1 8B's
    15 trillion."""
    return format_seconds(tokens_or_run(tokens) / EXAMPLE_TRAINING_TOKENS_PER_S)


def server_cpu_cores(system: str = "dgx-1") -> str:
    """The cores of a server's CPUs together: '112' for dgx-1's two 56-core Xeons."""
    s = get_system(system)
    return f"{s.cpu_cores:,}"


def server_gpu_over_cpu(system: str = "dgx-1", path: str = "matrix",
                        measured: bool = False, gpus: int = 0) -> str:
    """A server's GPUs (``gpus`` of them, or all) against all its CPUs, dense tensor bf16
    peak over the CPUs' ``path`` ('matrix': AMX bf16; 'vector': AVX-512 fp32) peak, or with
    ``measured`` what a tuned matrix multiply reaches on each: '34.5×', '552×', '148×';
    one GPU against both sockets' matrix units: '4.3×'."""
    s = get_system(system)
    cpu, gpu = code_path(s.cpu, parse_path(path)), code_path(s.gpu)
    n_gpus = gpus or s.gpu_count
    if measured:
        ratio = (n_gpus * gpu.reached_flops_per_s) / (s.cpu_count * cpu.reached_flops_per_s)
    else:
        ratio = (n_gpus * gpu.peak_flops_per_s) / (s.cpu_count * cpu.peak_flops_per_s)
    return format_ratio(ratio)


def matmul_share(hardware: str, path: str = "matrix") -> str:
    """The share of a chip's paper peak a tuned matrix multiply reaches (measured): '19 %'
    for the Xeon's AMX units, '80 %' for an H100's tensor cores."""
    return format_percent(code_path(get_hardware(hardware), parse_path(path)).efficiency.value)


def llama_cpp_int8_share(hardware: str = "rtx-4090") -> str:
    """The share of a GPU's int8 peak llama.cpp's quantised formats reach when it multiplies
    them as 8-bit integers (efficiency.toml [matmul.ggml]): '33 %'."""
    share = matmul_fraction(get_hardware(hardware), "int8", "q4_0").value
    return format_percent(share)


def ownership_overhead() -> str:
    """The yearly cost of owning beyond the servers and their power (facility, network,
    staff), from the catalogue's published data-centre model: '11.6 %'."""
    return format_percent(prices().overhead_fraction_per_year)


CLAIM_FIGURES = (example_throughput, example_mfu, example_train_time, server_cpu_cores,
                 server_gpu_over_cpu, matmul_share, llama_cpp_int8_share, ownership_overhead)
