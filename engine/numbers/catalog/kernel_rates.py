"""Measured rates of single kernels (data/kernel_rates.toml, the op-by-op parts): a matmul by
its shape, FlashAttention by direction, head size, mask and sequence length, an elementwise
stream, the power a chip's peak assumes, and the bytes of an Adam step.

These are the parts of an op-by-op step model (each op: the larger of its FLOPs over peak x
efficiency and its bytes over bandwidth x memory efficiency, plus a fixed cost per kernel).
engine.numbers.training_ops reads them. Every lookup returns a :class:`Basis` (name, value,
source), as efficiency.py's do.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers.catalog._data import load
from engine.numbers.catalog.efficiency import (
    Basis,
    attention_fraction,
    matmul_fraction,
    memory_fraction,
    under_power_cap,
)
from engine.numbers.catalog.hardware import HardwareSpec
from engine.numbers.errors import EngineError

ATTENTION_KERNELS = ("fa1", "fa2", "fa3", "triton", "cudnn")
ATTENTION_DIRECTIONS = ("forward", "backward", "forward_backward")


@dataclass(frozen=True, slots=True)
class _ShapeGrid:
    """Measured bf16 rates (FLOP/s) on a grid: ``rates[i][j][l]`` at m = dims[i], n = dims[j],
    k = dims[l]."""

    dims: tuple[int, ...]
    rates: tuple[tuple[tuple[float, ...], ...], ...]
    source: str


@dataclass(frozen=True, slots=True)
class _AttentionRun:
    chip: str
    kernel: str
    direction: str
    head_dim: int
    causal: bool
    seqlens: tuple[int, ...]
    rates: tuple[float, ...]  # FLOP/s, the papers' FLOP convention
    source: str


@cache
def _data() -> dict[str, Any]:
    return load("kernel_rates")


@cache
def _grid(chip: str) -> _ShapeGrid | None:
    row = _data()["matmul_shape"].get(chip, {})
    if "uses" in row:
        return _grid(str(row["uses"]))
    if "dims" not in row:
        return None
    dims = tuple(int(d) for d in row["dims"])
    rates = tuple(tuple(tuple(float(v) * 1e12 for v in by_k) for by_k in by_n)
                  for by_n in row["bf16_TFLOP_per_s"])
    if sorted(set(dims)) != list(dims) or dims[0] < 1:
        raise EngineError(f"kernel_rates.toml matmul_shape.{chip}.dims must be increasing.")
    if len(rates) != len(dims) or any(len(a) != len(dims) or any(len(b) != len(dims)
                                                                 for b in a) for a in rates):
        raise EngineError(f"kernel_rates.toml matmul_shape.{chip}: the table must be "
                          f"{len(dims)} x {len(dims)} x {len(dims)}.")
    if any(not v > 0 for a in rates for b in a for v in b):
        raise EngineError(f"kernel_rates.toml matmul_shape.{chip}: every rate must be > 0.")
    return _ShapeGrid(dims, rates, str(row["source"]))


def _bracket(dims: tuple[int, ...], d: float) -> tuple[int, float]:
    """Index i and weight w (0-1) of ``d`` between dims[i] and dims[i + 1], in log2."""
    i = min(max(bisect_right(dims, d) - 1, 0), len(dims) - 2)
    w = (math.log2(d) - math.log2(dims[i])) / (math.log2(dims[i + 1]) - math.log2(dims[i]))
    # Rounded so that libms that differ in a logarithm's last bit (CPython's and Pyodide's)
    # give the same rates.
    return i, round(w, 12)


def _grid_rate(grid: _ShapeGrid, m: int, n: int, k: int) -> float:
    """FLOP/s of an m x k by k x n product: trilinear in log2 of each dimension inside the
    grid; below the smallest a dimension takes the smallest's time (the rate scales by
    d / smallest), above the largest the rate at the largest."""
    lo, hi = grid.dims[0], grid.dims[-1]
    scale = 1.0
    clamped = []
    for d in (m, n, k):
        if d < lo:
            scale *= d / lo
        clamped.append(min(max(d, lo), hi))
    (i, wi), (j, wj), (h, wh) = (_bracket(grid.dims, d) for d in clamped)
    rate = 0.0
    for di, fi in ((0, 1 - wi), (1, wi)):
        for dj, fj in ((0, 1 - wj), (1, wj)):
            for dh, fh in ((0, 1 - wh), (1, wh)):
                if fi and fj and fh:
                    rate += fi * fj * fh * grid.rates[i + di][j + dj][h + dh]
    return rate * scale


def smallest_measured_rows(hw: HardwareSpec) -> int:
    """The smallest dimension ``hw``'s matmul grid measured (1 for a chip with no grid).
    Below it the grid charges a product the smallest one's time, streaming of the weights
    included; a caller whose memory side already streams them asks for at least this."""
    grid = _grid(hw.id)
    return 1 if grid is None else grid.dims[0]


# A measured product counts (for a chip with no grid, and for fp8's gain over bf16) only if it
# is long enough that the host's gap between two timed calls is a few per cent at most.
LONG_PRODUCT_FLOPS = 5e11


def _log_distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return sum(abs(math.log2(x) - math.log2(y)) for x, y in zip(a, b, strict=True))


def _long_products(chip: str) -> list[tuple[int, int, int, float]]:
    """(m, n, k, FLOP/s) of ``chip``'s measured bf16 (or fp16) products of at least
    :data:`LONG_PRODUCT_FLOPS`."""
    row = _data()["matmul_shape"].get(chip, {})
    points = row.get("bf16_measured") or row.get("fp16_measured") or []
    return [(int(m), int(n), int(k), float(t) * 1e12) for m, n, k, t in points
            if 2.0 * m * n * k >= LONG_PRODUCT_FLOPS]


def matmul_shape_fraction(hw: HardwareSpec, m: int, n: int, k: int, *,
                          training_load: bool = True) -> Basis:
    """Fraction of ``hw``'s dense bf16 peak that one m x k by k x n bf16 product reaches
    (FLOPs 2mnk) in a training step: the chip's measured grid ([matmul_shape.*]) at that
    shape times :func:`sustained_load_scale` (a step holds the board at its power limit);
    never above the chip's best large matmul ([matmul.*]). With ``training_load`` False,
    the grid's short-run rate, on the basis of that best value (what serving compares a
    product's shape with). A chip with no grid takes its nearest long measured product,
    else that best value.
    A chip run under a power cap ([power.*] runs_at_W) gets that times
    :func:`power_cap_scale`."""
    return under_power_cap(hw, _matmul_shape_fraction(hw, m, n, k, training_load))


def same_die_scale(hw: HardwareSpec) -> Basis:
    """What the measured rates of the chip whose grid ``hw`` uses are multiplied by on
    ``hw`` ([matmul_shape.*] ``scale_from``: a sibling of the same die measured at ``hw``'s
    power per SM, its rate per SM x ``hw``'s SMs over the grid chip's rate in the same
    benchmark); exactly 1 (with an empty source) where none is given."""
    row = _data()["matmul_shape"].get(hw.id, {})
    f = row.get("scale_from")
    if f is None:
        return Basis(f"same-die scale ({hw.name}: none)", 1.0, "")
    scale = (float(f["TFLOP_per_s"]) / float(f["sms"]) * hw.compute_units
             / float(f["reference_TFLOP_per_s"]))
    if not 0 < scale <= 1:
        raise EngineError(f"kernel_rates.toml matmul_shape.{hw.id}.scale_from must give a "
                          "scale in (0, 1].")
    return Basis(f"compute-bound rates of the same die on {hw.name}: {f['chip']}'s measured "
                 f"rate per SM x {hw.compute_units} SMs over the grid chip's", scale,
                 str(f["source"]))


def sustained_load_scale(hw: HardwareSpec) -> Basis:
    """What ``hw``'s grid rates (short runs, at the clock the chip boosts to before its board
    reaches its power limit) are multiplied by in a training step, whose products run back
    to back for seconds at that limit ([matmul_shape.*] ``sustained``): the named chip's
    longest-running measured product (``sustained_product``) over the grid's rate at that
    shape. Exactly 1 (with an empty source) where none is named."""
    row = _data()["matmul_shape"].get(hw.id, {})
    grid = _grid(hw.id)
    chip = str(row.get("sustained", ""))
    if not chip or grid is None:
        return Basis(f"sustained-load scale ({hw.name}: none)", 1.0, "")
    held = _data()["matmul_shape"][chip]
    m, n, k, tflops = held["sustained_product"]
    scale = float(tflops) * 1e12 / _grid_rate(grid, int(m), int(n), int(k))
    if not 0 < scale <= 1:
        raise EngineError(f"kernel_rates.toml matmul_shape.{chip}.sustained_product must be "
                          "at most the grid's rate at its shape.")
    return Basis(f"matmul rate held under a training load ({hw.name}: {m} x {n} x {k} "
                 f"at {tflops} TFLOP/s, the longest-running measured product, over the "
                 f"short-run grid's rate at that shape)", scale, str(held["sustained_source"]))


def _matmul_shape_fraction(hw: HardwareSpec, m: int, n: int, k: int,
                           training_load: bool = True) -> Basis:
    if min(m, n, k) < 1:
        raise EngineError("A matmul's m, n and k must be >= 1.")
    best = matmul_fraction(hw, "bf16")
    peak = hw.peak_flops_per_s("bf16")
    row = _data()["matmul_shape"].get(hw.id, {})
    grid = _grid(hw.id)
    shape = (m, n, k)
    if grid is None:
        long = _long_products(hw.id)
        if not long:
            return Basis(f"matmul efficiency ({m} x {n} x {k}, {hw.name}: no shape table, "
                         f"the large-matmul value)", best.value, best.source)
        near = min(long, key=lambda p: _log_distance(shape, p[:3]))
        fraction = min(best.value, near[3] / peak)
        return Basis(f"matmul efficiency ({m} x {n} x {k}, {hw.name}: the nearest measured "
                     f"product, {near[0]} x {near[1]} x {near[2]})", fraction,
                     str(row.get("fp16_source", row.get("source", best.source))))
    scale = same_die_scale(hw)
    held = (sustained_load_scale(hw) if training_load
            else Basis("sustained-load scale (a short run)", 1.0, ""))
    rate = _grid_rate(grid, m, n, k) * scale.value * held.value
    source = "; ".join(x for x in (grid.source, scale.source, held.source) if x)
    label = "by shape" if scale.value == 1.0 else f"by shape, x {scale.value:.3f} (same die)"
    if held.value != 1.0:
        label = f"{label}, x {held.value:.3f} held under a training load"
    fraction = rate / peak
    if fraction >= best.value:
        return Basis(f"matmul efficiency ({m} x {n} x {k}, {hw.name}: capped at the "
                     f"large-matmul value)", best.value, f"{source}; {best.source}")
    return Basis(f"matmul efficiency ({m} x {n} x {k}, {hw.name}, {label})", fraction, source)


def fp8_training_peak(hw: HardwareSpec) -> float:
    """``hw``'s dense fp8 peak (FLOP/s) for fp8 training; EngineError naming the
    convention for a chip with none (an A100 has no fp8 tensor cores)."""
    try:
        return hw.peak_flops_per_s("fp8")
    except EngineError:
        raise EngineError(f"{hw.name} has no fp8 tensor cores: train it with another "
                          "convention.", "convention") from None


def fp8_matmul_shape_fraction(hw: HardwareSpec, m: int, n: int, k: int) -> Basis:
    """Fraction of ``hw``'s dense fp8 peak that one m x k by k x n fp8 product reaches.

    The bf16 rate of that shape (:func:`matmul_shape_fraction`) times what fp8 gains over
    bf16 at the nearest long measured fp8 product ([matmul_shape.*] ``fp8_measured``, at
    least :data:`LONG_PRODUCT_FLOPS`; its fp8 rate over the bf16 rate of the same shape,
    so that the bf16 rate's sustained-load scale cancels: the fp8 rates were measured after
    10,000 warm-up iterations, under load already); never
    above the chip's best large fp8 matmul ([matmul.*] fp8). A chip with no fp8
    measurement keeps the bf16 shape's fraction of the peak, times fp8's best over bf16's.
    EngineError for a chip with no fp8 peak."""
    fp8_peak = fp8_training_peak(hw)
    bf16 = matmul_shape_fraction(hw, m, n, k)
    best = matmul_fraction(hw, "fp8")
    bf16_peak = hw.peak_flops_per_s("bf16")
    shape = (m, n, k)
    long = [p for p in measured_matmul_points(hw, "fp8")
            if 2.0 * p.m * p.n * p.k >= LONG_PRODUCT_FLOPS]
    if long:
        near = min(long, key=lambda p: _log_distance(shape, (p.m, p.n, p.k)))
        gain = near.fraction * fp8_peak / (
            matmul_shape_fraction(hw, near.m, near.n, near.k).value * bf16_peak)
        label = f"the bf16 shape's rate x fp8's gain at {near.m} x {near.n} x {near.k} measured"
        source = f"{bf16.source}; {near.source}"
    else:
        gain = best.value * fp8_peak / (matmul_fraction(hw, "bf16").value * bf16_peak)
        label = "the bf16 shape's rate x fp8's best over bf16's, no fp8 shape measured"
        source = f"{bf16.source}; {best.source}"
    fraction = bf16.value * bf16_peak * gain / fp8_peak
    if fraction >= best.value:
        return Basis(f"fp8 matmul efficiency ({m} x {n} x {k}, {hw.name}: capped at the "
                     "large-matmul value)", best.value, f"{source}; {best.source}")
    return Basis(f"fp8 matmul efficiency ({m} x {n} x {k}, {hw.name}: {label})", fraction,
                 source)


@dataclass(frozen=True, slots=True)
class MatmulPoint:
    """One measured product: m x k by k x n, and the fraction of the format's dense peak."""

    m: int
    n: int
    k: int
    fraction: float
    source: str


def measured_matmul_points(hw: HardwareSpec, compute_format: str) -> tuple[MatmulPoint, ...]:
    """The catalogue's measured products of ``hw`` in ``compute_format`` (bf16, fp16, fp8)
    outside its grid ([matmul_shape.*] ``<format>_measured``), as fractions of that format's
    dense peak; empty where there are none."""
    row = _data()["matmul_shape"].get(hw.id, {})
    points = row.get(f"{compute_format}_measured", [])
    if not points:
        return ()
    source = str(row.get(f"{compute_format}_source", row.get("source", "")))
    peak = hw.peak_flops_per_s(compute_format)
    out = []
    for m, n, k, tflops in points:
        fraction = float(tflops) * 1e12 / peak
        if not 0 < fraction <= 1:
            raise EngineError(f"kernel_rates.toml matmul_shape.{hw.id}: {compute_format} "
                              f"{m} x {n} x {k} must be within the dense peak.")
        out.append(MatmulPoint(int(m), int(n), int(k), fraction, source))
    return tuple(out)


@cache
def _attention_runs() -> tuple[_AttentionRun, ...]:
    table = _data()["flash_attention"]
    runs = []
    for r in table["runs"]:
        if r["kernel"] not in ATTENTION_KERNELS or r["direction"] not in ATTENTION_DIRECTIONS:
            raise EngineError(f"kernel_rates.toml flash_attention run {r!r}: unknown kernel "
                              f"or direction.")
        seqlens = tuple(int(s) for s, _ in r["points"])
        if sorted(set(seqlens)) != list(seqlens):
            raise EngineError(f"kernel_rates.toml flash_attention run {r!r}: sequence lengths "
                              f"must be increasing.")
        runs.append(_AttentionRun(str(r["chip"]), str(r["kernel"]), str(r["direction"]),
                                  int(r["head_dim"]), bool(r["causal"]), seqlens,
                                  tuple(float(v) * 1e12 for _, v in r["points"]),
                                  str(table[r["source"]])))
    return tuple(runs)


def _rate_at(run: _AttentionRun, seqlen: int) -> float:
    """``run``'s FLOP/s at ``seqlen`` tokens: linear in log2(seqlen) between its measured
    lengths; outside them, the nearest measured length's rate."""
    s = min(max(seqlen, run.seqlens[0]), run.seqlens[-1])
    if len(run.seqlens) == 1:
        return run.rates[0]
    i, w = _bracket(run.seqlens, s)
    return run.rates[i] * (1 - w) + run.rates[i + 1] * w


def flash_attention_fraction(hw: HardwareSpec, kernel: str, direction: str, head_dim: int,
                             causal: bool, seqlen: int) -> Basis:
    """Fraction of ``hw``'s dense bf16 peak that FlashAttention ``kernel`` (fa2, fa3) reaches
    in ``direction`` (forward, backward, forward_backward) at ``seqlen`` tokens.

    The rate counts FLOPs as the papers do: forward 4 x seqlen^2 x head_dim x heads, halved
    under a causal mask; backward 2.5 x forward. Between measured lengths: linear in
    log2(seqlen); outside them, the nearest measured length's rate."""
    match = [r for r in _attention_runs() if (r.chip, r.kernel, r.direction, r.head_dim,
                                              r.causal) == (hw.id, kernel, direction,
                                                            head_dim, causal)]
    if not match:
        raise EngineError(f"No FlashAttention measurement for {kernel} {direction}, head "
                          f"dim {head_dim}, causal={causal} on {hw.name}.")
    run = match[0]
    rate = _rate_at(run, seqlen)
    mask = "causal" if causal else "no mask"
    return Basis(f"FlashAttention efficiency ({kernel} {direction}, head dim {head_dim}, "
                 f"{mask}, {seqlen} tokens, {hw.name})",
                 rate / hw.peak_flops_per_s("bf16"), run.source)


def memory_stream_fraction(hw: HardwareSpec) -> Basis:
    """Fraction of ``hw``'s bandwidth one large elementwise stream (a norm, an activation,
    the optimiser) reaches; a chip whose entry ``uses`` another's takes that one's (the basis
    says why); a chip with no entry gets [memory.*]'s figure."""
    table = _data()["memory_stream"]
    row = table.get(hw.id)
    if row is None:
        fallback = memory_fraction(hw, "bf16")
        return Basis(f"{fallback.name}: no stream measurement for {hw.name}",
                     fallback.value, fallback.source)
    basis = ""
    if "uses" in row:
        basis = f"{row['basis']}; "
        row = table[str(row["uses"])]
    value = float(row["fraction"])
    if not 0 < value <= 1:
        raise EngineError(f"kernel_rates.toml memory_stream.{hw.id}.fraction must be in (0, 1].")
    return Basis(f"elementwise stream bandwidth efficiency ({hw.name})", value,
                 f"{basis}{row['source']}")


@dataclass(frozen=True, slots=True)
class PeakPower:
    """The board power (W) and clock (MHz) a chip's datasheet peaks assume."""

    watts: float
    clock_MHz: float
    source: str


def peak_power(hw: HardwareSpec) -> PeakPower | None:
    """What ``hw``'s peaks assume ([power.*]), or None where the catalogue does not say."""
    row = _data()["power"].get(hw.id)
    if row is None:
        return None
    return PeakPower(float(row["peak_assumes_W"]), float(row["peak_clock_MHz"]), row["source"])


def adam_bytes_per_param(grad_bytes_per_param: float) -> Basis:
    """Bytes a mixed-precision Adam step reads and writes per parameter: master weight, two
    moments and the gradient read; master weight, moments and the 16-bit weight written."""
    if grad_bytes_per_param not in (2, 4):
        raise EngineError("Gradients are 2 (bf16) or 4 (fp32) bytes a parameter.")
    a = _data()["optimizer"]["adam"]
    state = float(a["master_bytes"]) + float(a["moments"]) * float(a["moment_bytes"])
    read = state + grad_bytes_per_param
    written = state + float(a["compute_copy_bytes"])
    return Basis(f"Adam step bytes per parameter ({read:g} read + {written:g} written, "
                 f"{grad_bytes_per_param:g}-byte gradients)", read + written, a["source"])


def _runs_chip(hw: HardwareSpec) -> str:
    """The chip whose FlashAttention runs apply to ``hw`` (its own, or a same-die chip's)."""
    same_as = _data()["flash_attention"].get("same_as", {})
    return str(same_as.get(hw.id, hw.id))


def _measured_head_dims(chip: str, kernel: str, direction: str, causal: bool) -> list[int]:
    return sorted({r.head_dim for r in _attention_runs()
                   if (r.chip, r.kernel, r.direction, r.causal) == (chip, kernel, direction,
                                                                    causal)})


def _rate(chip: str, kernel: str, direction: str, head_dim: int, causal: bool,
          seqlen: int) -> tuple[float, str] | None:
    """FLOP/s of ``kernel`` on ``chip``: its measured run (:func:`_measured_rate`), or, with
    none, its stand-in's ([flash_attention].stand_in): the ``like`` kernel's run on ``chip``
    times ``kernel`` over ``like`` on ``ratio_chip`` at the same length, head size and mask;
    None when neither is measured."""
    own = _measured_rate(chip, kernel, direction, head_dim, causal, seqlen)
    table = _data()["flash_attention"]
    rule = table.get("stand_in", {}).get(kernel)
    if own is not None or rule is None:
        return own
    like, ratio_chip = str(rule["like"]), str(rule["ratio_chip"])
    parts = (_measured_rate(chip, like, direction, head_dim, causal, seqlen),
             _measured_rate(ratio_chip, kernel, direction, head_dim, causal, seqlen),
             _measured_rate(ratio_chip, like, direction, head_dim, causal, seqlen))
    if parts[0] is None or parts[1] is None or parts[2] is None:
        return None
    rate = parts[0][0] * parts[1][0] / parts[2][0]
    return rate, (f"{kernel} on {chip}: {like}'s run there x {kernel} / {like} on "
                  f"{ratio_chip} ({parts[0][1]}; {table['stand_in_source']})")


def _backward_rate(chip: str, kernel: str, head_dim: int, causal: bool,
                   seqlen: int) -> tuple[float, str] | None:
    """FLOP/s of ``kernel``'s backward pass measured alone: its run with the mask, or, where
    it is measured without a mask only, that rate times the training kernel's (FlashAttention-
    2's) own causal / no-mask backward ratio on ``chip`` at the same length and head size (its
    causal backward being its forward + backward time less its forward's); None when neither
    is measured."""
    own = _measured_rate(chip, kernel, "backward", head_dim, causal, seqlen)
    if own is not None or not causal:
        return own
    plain = _measured_rate(chip, kernel, "backward", head_dim, False, seqlen)
    ref = str(_data()["flash_attention"]["training_kernel"])
    ref_plain = _measured_rate(chip, ref, "backward", head_dim, False, seqlen)
    ref_fwd = _measured_rate(chip, ref, "forward", head_dim, True, seqlen)
    ref_both = _measured_rate(chip, ref, "forward_backward", head_dim, True, seqlen)
    if plain is None or ref_plain is None or ref_fwd is None or ref_both is None:
        return None
    ref_causal = BACKWARD_FLOPS_PER_FORWARD / (
        (1 + BACKWARD_FLOPS_PER_FORWARD) / ref_both[0] - 1 / ref_fwd[0])
    return (plain[0] * ref_causal / ref_plain[0],
            f"{plain[1]}, x {ref}'s causal / no-mask backward ({ref_both[1]}; {ref_fwd[1]}; "
            f"{ref_plain[1]})")


def _measured_rate(chip: str, kernel: str, direction: str, head_dim: int, causal: bool,
                   seqlen: int) -> tuple[float, str] | None:
    """FLOP/s of one measured run, linear in log2(seqlen) between its lengths and linear in
    head_dim between measured head sizes (the nearest outside them); None when no run of
    that kernel, direction and mask exists on ``chip``."""
    dims = _measured_head_dims(chip, kernel, direction, causal)
    if not dims:
        return None
    if head_dim <= dims[0] or head_dim >= dims[-1]:
        pairs = [(dims[0] if head_dim <= dims[0] else dims[-1], 1.0)]
    else:
        i = bisect_right(dims, head_dim) - 1
        lo, hi = dims[i], dims[i + 1]
        w = (head_dim - lo) / (hi - lo)
        pairs = [(lo, 1.0 - w), (hi, w)]
    rate = 0.0
    source = ""
    for d, weight in pairs:
        run = next(r for r in _attention_runs() if (r.chip, r.kernel, r.direction, r.head_dim,
                                                    r.causal) == (chip, kernel, direction, d,
                                                                  causal))
        rate += weight * _rate_at(run, seqlen)
        source = run.source
    return rate, source


# A backward pass does 2.5 times a forward pass's FLOPs (the papers' convention).
BACKWARD_FLOPS_PER_FORWARD = 2.5


@dataclass(frozen=True, slots=True)
class AttentionRates:
    """Fractions of the dense bf16 peak attention reaches forward and backward, each a
    :class:`Basis`, with FLOPs counted as the papers do (backward = 2.5 x forward)."""

    forward: Basis
    backward: Basis


def training_attention_kernel(kernel: str = "") -> Basis:
    """The attention kernel an expected training step assumes: the catalogue's (value 2 or 3,
    the FlashAttention version) unless a stack names its own ``kernel`` ('triton': value 1,
    the Triton port of the first FlashAttention, with the stand-in rule's source)."""
    t = _data()["flash_attention"]
    if kernel in ("", str(t["training_kernel"])):
        default = str(t["training_kernel"])
        return Basis(f"attention kernel of a training step ({default.upper()})",
                     float(default[-1]), str(t["training_kernel_source"]))
    if kernel == "cudnn":
        return Basis("attention kernel of a training step (cuDNN fused attention, as "
                     "Transformer Engine runs it on Hopper)", 0.0, str(t["cudnn_source"]))
    if kernel != "triton":
        raise EngineError(f"Unknown training attention kernel {kernel!r}.", "attention")
    return Basis("attention kernel of a training step (FlashAttention's Triton port, as the "
                 "stack ran it)", 1.0, str(t["stand_in_source"]))


def attention_rates(hw: HardwareSpec, head_dim: int, causal: bool, seqlen: int,
                    kernel: str = "") -> AttentionRates:
    """Forward and backward efficiency of FlashAttention ``kernel`` (default: the training
    kernel) on ``hw`` at ``seqlen`` tokens and ``head_dim``.

    Where the chip has forward and forward+backward runs (H100), the backward's time is the
    pair's time minus the forward's: 3.5 F / r_fb - F / r_f for F forward FLOPs. Where it has
    only forward+backward runs (A100), both directions take that run's rate. A chip with no
    run at all takes the catalogue's one attention efficiency ([attention]) both ways. A chip
    run under a power cap gets each times :func:`power_cap_scale`; one that takes a same-die
    chip's runs, times :func:`same_die_scale`.
    """
    rates = _attention_rates(hw, head_dim, causal, seqlen, kernel)
    scale = same_die_scale(hw) if _runs_chip(hw) != hw.id else Basis("", 1.0, "")
    if scale.value != 1.0:
        rates = AttentionRates(*(Basis(f"{b.name}, x {scale.value:.3f} (same die)",
                                       b.value * scale.value, f"{b.source}; {scale.source}")
                                 for b in (rates.forward, rates.backward)))
    return AttentionRates(under_power_cap(hw, rates.forward), under_power_cap(hw, rates.backward))


def _attention_rates(hw: HardwareSpec, head_dim: int, causal: bool, seqlen: int,
                     kernel: str) -> AttentionRates:
    k = kernel or str(_data()["flash_attention"]["training_kernel"])
    chip = _runs_chip(hw)
    peak = hw.peak_flops_per_s("bf16")
    mask = "causal" if causal else "no mask"
    label = f"{k} {mask}, head dim {head_dim}, {seqlen} tokens, {hw.name}"
    fwd = _rate(chip, k, "forward", head_dim, causal, seqlen)
    both = _rate(chip, k, "forward_backward", head_dim, causal, seqlen)
    if fwd is None and both is None:
        flat = attention_fraction()
        return AttentionRates(
            Basis(f"attention forward efficiency ({label}: no kernel run, "
                  f"the one attention value)", flat.value, flat.source),
            Basis(f"attention backward efficiency ({label}: no kernel run, "
                  f"the one attention value)", flat.value, flat.source))
    if fwd is not None and both is not None:
        backward_time = (1 + BACKWARD_FLOPS_PER_FORWARD) / both[0] - 1 / fwd[0]
        bwd_rate = BACKWARD_FLOPS_PER_FORWARD / backward_time
        return AttentionRates(
            Basis(f"attention forward efficiency ({label})", fwd[0] / peak, fwd[1]),
            Basis(f"attention backward efficiency ({label}: forward + backward time less "
                  f"the forward's)", bwd_rate / peak, f"{both[1]}; {fwd[1]}"))
    backward = _backward_rate(chip, k, head_dim, causal, seqlen) if fwd is not None else None
    if fwd is not None and backward is not None:
        return AttentionRates(
            Basis(f"attention forward efficiency ({label})", fwd[0] / peak, fwd[1]),
            Basis(f"attention backward efficiency ({label})", backward[0] / peak, backward[1]))
    rate, source = both if both is not None else fwd  # type: ignore[misc]
    return AttentionRates(
        Basis(f"attention forward efficiency ({label}: the forward + backward rate)",
              rate / peak, source),
        Basis(f"attention backward efficiency ({label}: the forward + backward rate)",
              rate / peak, source))


@dataclass(frozen=True, slots=True)
class ElementwiseBytes:
    """Bytes a fused memory-bound op moves per number of its tensor, forward and backward
    ([elementwise]), and the loss's bytes and kernels per logit."""

    norm: tuple[float, float]
    rotary: tuple[float, float]
    gated_activation: tuple[float, float]
    plain_activation: tuple[float, float]
    residual: tuple[float, float]
    loss_bytes_per_logit: float
    loss_kernels: int
    source: str


@cache
def elementwise_bytes() -> ElementwiseBytes:
    """The [elementwise] table: bytes per number of each memory-bound op of a layer."""
    e = _data()["elementwise"]

    def pair(name: str) -> tuple[float, float]:
        return float(e[f"{name}_forward"]), float(e[f"{name}_backward"])

    return ElementwiseBytes(pair("norm"), pair("rotary"), pair("gated_activation"),
                            pair("plain_activation"), pair("residual"),
                            float(e["loss_bytes_per_logit"]), int(e["loss_kernels"]),
                            str(e["source"]))


@dataclass(frozen=True, slots=True)
class EagerOp:
    """One memory-bound op as eager PyTorch runs it: bytes per number and kernels, forward
    and backward."""

    bytes: tuple[float, float]
    kernels: tuple[int, int]


@dataclass(frozen=True, slots=True)
class EagerElementwise:
    """The [elementwise_eager] table: torchtitan's RMSNorm, rotary embedding, SwiGLU and
    GQA's key/value repeat as eager PyTorch runs them (``kv_repeat`` bytes per number read
    or written)."""

    rmsnorm: EagerOp
    rotary: EagerOp
    gated_activation: EagerOp
    kv_repeat: EagerOp
    source: str


@cache
def eager_elementwise() -> EagerElementwise:
    """Bytes and kernels of the memory-bound ops eager PyTorch runs unfused."""
    e = _data()["elementwise_eager"]

    def op(name: str) -> EagerOp:
        kernels = tuple(int(k) for k in e[f"{name}_kernels"])
        if len(kernels) != 2 or min(kernels) < 1:
            raise EngineError(f"kernel_rates.toml elementwise_eager.{name}_kernels must be "
                              "[forward, backward], each at least 1.")
        return EagerOp((float(e[f"{name}_forward"]), float(e[f"{name}_backward"])),
                       (kernels[0], kernels[1]))

    repeat = float(e["kv_repeat_bytes_per_number"])
    repeat_kernels = tuple(int(k) for k in e["kv_repeat_kernels"])
    return EagerElementwise(op("rmsnorm"), op("rotary"), op("gated_activation"),
                            EagerOp((repeat, repeat), (repeat_kernels[0], repeat_kernels[1])),
                            str(e["source"]))


def elementwise_stack(kernels: str) -> Basis:
    """The record of the kernel stack a training step's memory-bound ops are timed for; its
    value is SwiGLU's bytes per number of the hidden width, forward + backward, in it."""
    if kernels == "fused":
        e = elementwise_bytes()
        return Basis("memory-bound ops as fused kernels, one per op (SwiGLU's bytes per "
                     "number, forward + backward)",
                     e.gated_activation[0] + e.gated_activation[1], e.source)
    words = {"eager": "eager PyTorch: unfused RMSNorm, rotary and SwiGLU",
             "eager-fused-norm": "eager PyTorch with a fused RMSNorm: unfused rotary and "
                                 "SwiGLU"}[kernels]
    eager = eager_elementwise()
    return Basis(f"memory-bound ops as {words} (SwiGLU's bytes per number, forward + "
                 "backward)", eager.gated_activation.bytes[0] + eager.gated_activation.bytes[1],
                 eager.source)
