"""docs/steps/cpu-and-gpu.md: a server's CPUs against its GPUs, figure by figure, drawn to scale.

The default is server against server: dgx-1's two Xeon Platinum 8480C sockets against its
eight H100s. Every figure comes from the catalogue (scaled by the chip counts) and every
ratio is GPU side / CPU side, computed here, once, for the page and for the browser alike.
Peaks are labelled by code path and format: the CPU's matrix units (AMX, bf16) and its
ordinary vector units (AVX-512, fp32) against the GPU's tensor cores (bf16, dense); beside
them, what a tuned matrix multiply reaches on each (measured, efficiency.toml).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from engine.numbers import quantities
from engine.numbers.catalog import HardwareSpec, get_hardware, get_system, list_hardware
from engine.numbers.code_paths import CodePath, code_path, cpu_code_paths
from engine.render.fields import Choice, Count
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.plot import Bar, bar_rows, chart_for_both, extra_caption_height, narrow_wrap
from engine.render.secondary import secondary
from engine.render.widget import Values, Widget
from engine.words.format import (
    format_bandwidth,
    format_GB,
    format_percent,
    format_ratio,
    format_TFLOP_per_s,
)
from engine.words.labels import side_kind, side_name

SYSTEM = "dgx-1"


def cpu_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware() if h.kind == "cpu")


def gpu_only_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware() if h.kind == "gpu")


CHIPS = quantities.CHIPS_COMPARED
CPU = Choice("cpu", "CPU", "xeon-8480c", options=cpu_options())
CPUS = Count("cpus", "CPU sockets", "2", quantity=CHIPS)
GPU = Choice("gpu", "GPU", "h100-sxm", options=gpu_only_options())
GPUS = Count("gpus", "GPUs", "8", quantity=CHIPS)


def read_chips(values: Values) -> tuple[HardwareSpec, int, HardwareSpec, int]:
    """The CPU, how many, the GPU, how many: each error naming its field."""
    return get_hardware(values[CPU]), values[CPUS], get_hardware(values[GPU]), values[GPUS]


@dataclass(frozen=True, slots=True)
class Metric:
    """One figure for both sides: totals over the chips, their texts and GPU / CPU."""

    key: str
    label: str
    cpu_value: float
    gpu_value: float
    cpu_text: str
    gpu_text: str
    drawn: bool = True  # drawn as a pair of bars; cores and lanes are only in the table
    heading: str = ""  # the chart's title, shorter than the table's label (default: label)
    aside: str = ""  # words after the ratio in the chart's title

    @property
    def ratio(self) -> float:
        return self.gpu_value / self.cpu_value


def _units(chip: HardwareSpec, n: int) -> tuple[float, str]:
    count = chip.compute_units * n
    return float(count), f"{count:,} {chip.compute_unit_name}"


def _lanes(chip: HardwareSpec, n: int) -> tuple[float, str]:
    count = chip.lanes * n
    return float(count), f"{count:,} lanes"


def _bandwidth(chip: HardwareSpec, n: int) -> tuple[float, str]:
    bytes_per_s = chip.bandwidth_bytes_per_s * n
    return bytes_per_s, format_bandwidth(bytes_per_s)


def _capacity(chip: HardwareSpec, n: int) -> tuple[float, str]:
    memory_bytes = chip.memory_bytes * n
    return memory_bytes, f"{format_GB(memory_bytes)} {chip.memory_type}"


# key, label, and each side's total over its n chips with its text (table only: cores and
# lanes count hardware, but the peaks below already say what it does)
_COUNTS: tuple[tuple[str, str, Callable[[HardwareSpec, int], tuple[float, str]]], ...] = (
    ("units", "Cores (on a GPU: SMs or compute units)", _units),
    ("lanes", "fp32 arithmetic lanes working side by side", _lanes),
)
_MEMORY: tuple[tuple[str, str, Callable[[HardwareSpec, int], tuple[float, str]]], ...] = (
    ("bandwidth", "Memory bandwidth", _bandwidth),
    ("capacity", "Memory capacity", _capacity),
)


def _flops(path: CodePath, n: int, *, reached: bool = False) -> tuple[float, str]:
    flops_per_s = (path.reached_flops_per_s if reached else path.peak_flops_per_s) * n
    return flops_per_s, format_TFLOP_per_s(flops_per_s)


def _maths(cpu: HardwareSpec, cpus: int, gpu: HardwareSpec, gpus: int) -> list[Metric]:
    """Each CPU code path's paper peak against the GPU's dense tensor peak, then what a tuned
    matrix multiply reaches on the CPU's best path and on the GPU (measured efficiencies)."""
    tensor = code_path(gpu)
    paths = cpu_code_paths(cpu)
    metrics = [
        Metric(f"peak_{p.id}", f"Paper peak: CPU {p.label} / GPU {tensor.label}",
               *_pair(_flops(p, cpus), _flops(tensor, gpus)), drawn=i == 0)
        for i, p in enumerate(paths)
    ]
    # One chart for the paper peaks, of the CPU's best path: a vector unit's bar beside the
    # tensor cores' would be too thin to see, so its ratio joins that chart's title.
    aside = "".join(f" ({p.label}: {format_ratio(m.ratio)})"
                    for p, m in zip(paths[1:], metrics[1:], strict=True))
    metrics[0] = replace(metrics[0], heading=f"Paper peak, {paths[0].label} against "
                         f"{tensor.label}", aside=aside)
    best = paths[0]
    metrics.append(Metric(
        "reached", f"A tuned matrix multiply reaches (measured): CPU {best.label} / GPU "
        f"{tensor.label}", *_pair(_flops(best, cpus, reached=True),
                                  _flops(tensor, gpus, reached=True)),
        heading=f"Measured matrix multiply, {best.units} against {tensor.units}"))
    return metrics


def _pair(cpu: tuple[float, str], gpu: tuple[float, str]) -> tuple[float, float, str, str]:
    return cpu[0], gpu[0], cpu[1], gpu[1]


def compare(cpu: HardwareSpec, cpus: int, gpu: HardwareSpec, gpus: int) -> list[Metric]:
    """The figures of ``cpus`` CPU sockets and ``gpus`` GPUs, totals for each side."""
    metrics = [Metric(key, label, *_pair(total(cpu, cpus), total(gpu, gpus)), drawn=False)
               for key, label, total in _COUNTS]
    metrics += _maths(cpu, cpus, gpu, gpus)
    metrics += [Metric(key, label, *_pair(total(cpu, cpus), total(gpu, gpus)))
                for key, label, total in _MEMORY]
    return metrics


def paired_bars(metric: Metric, cpu: tuple[HardwareSpec, int], gpu: tuple[HardwareSpec, int]) -> str:
    """Two horizontal bars, CPU side above GPU side, on one scale (the larger is full width)."""
    cpu_name, gpu_name = side_name(*cpu), side_name(*gpu)
    top = max(metric.cpu_value, metric.gpu_value)

    def draw(width: int) -> tuple[str, float]:
        left, bar_h, gap = 4, 18, 30
        usable = width - 2 * left
        wrap_w = narrow_wrap(width, usable)
        bars = [
            # The verdict above counts the chips; each bar names its side.
            Bar(f"{side_kind(*chips)}: {text}", value, css, title=f"{name}: {text}",
                fill={"data_side": side})
            for side, css, chips, name, value, text in (
                ("cpu", "part-2", cpu, cpu_name, metric.cpu_value, metric.cpu_text),
                ("gpu", "part-0", gpu, gpu_name, metric.gpu_value, metric.gpu_text),
            )
        ]
        rows = bar_rows(
            bars,
            x=left,
            first_y=14,
            bar_h=bar_h,
            pitch=bar_h + gap,
            units_per_value=usable / top,
            track_w=usable,
            wrap_w=wrap_w,
        )
        height = 14 + 2 * (bar_h + gap) - gap + 8 + extra_caption_height(bars, wrap_w)
        return rows, height

    description = (
        f"{metric.label}: {cpu_name} {metric.cpu_text}; {gpu_name} {metric.gpu_text}; "
        f"GPU side / CPU side = {format_ratio(metric.ratio)}."
    )
    title = tag(
        "p",
        esc(f"{metric.heading or metric.label}: GPU / CPU = {format_ratio(metric.ratio)}"
            + metric.aside),
        class_="widget-subtitle",
    )
    svg = chart_for_both(draw, css="paired-bars", name=metric.label, label=description,
                         data={"metric": metric.key})
    return tag("div", title + svg, class_="cpu-gpu-metric")


def _figures_table(metrics: list[Metric], cpu_name: str, gpu_name: str) -> str:
    head = column_heads(("Figure", cpu_name, gpu_name, "GPU / CPU"))
    body = "".join(
        tag(
            "tr",
            tag("th", esc(m.label), scope="row")
            + tag("td", esc(m.cpu_text))
            + tag("td", esc(m.gpu_text))
            + tag("td", esc(format_ratio(m.ratio)), class_="ratio"),
            data_metric=m.key,
        )
        for m in metrics
    )
    caption = f"{cpu_name} against {gpu_name}"
    return table_box(head, body, caption=caption, extra_class="cpu-gpu-table")


def readable(note: str) -> str:
    """A catalogue note for readers: '56 x 1,024' written '56 × 1,024'."""
    return note.replace(" x ", " × ").strip()


def chip_notes(*chips: HardwareSpec, noted: frozenset[str] = frozenset()) -> str:
    """What the catalogue says about how far to trust each chip's figures, and its source
    (a chip in ``noted`` already has its note in the caution above, so it is not repeated)."""
    items = []
    for chip in chips:
        if chip.confidence != "high":
            note = "" if chip.id in noted else f" {readable(chip.note)}"
            words = f"{chip.name}: {chip.confidence}-confidence figures.{note}".strip()
            items.append(tag("li", esc(words), data_confidence=chip.confidence))
            items += [tag("li", esc(f"{chip.name}: {readable(a)}")) for a in chip.assumptions]
        items.append(tag("li", esc(f"Source for {chip.name}: {chip.source}")))
    return tag("ul", "".join(items), class_="widget-notes")


def _measured_notes(cpu: HardwareSpec, gpu: HardwareSpec) -> str:
    """Where each 'reached' figure comes from: the measured efficiency and its source."""
    items = [
        tag("li", esc(f"{p.label} of {c.name}: a tuned matrix multiply reaches "
                      f"{format_percent(p.efficiency.value)} of the paper peak. {p.efficiency.source}."))
        for c, paths in ((cpu, cpu_code_paths(cpu)[:1]), (gpu, (code_path(gpu),)))
        for p in paths
    ]
    return tag("ul", "".join(items), class_="widget-notes measured-notes")


def _lead(cpu: HardwareSpec, cpus: int, gpu: HardwareSpec, gpus: int) -> str:
    """Who is compared: dgx-1's own chips by the server's name, any others by theirs."""
    system = get_system(SYSTEM)
    if (cpu.id, cpus, gpu.id) != (system.cpu.id, system.cpu_count, system.gpu.id) or (
        gpus > system.gpu_count
    ):
        return f"{side_name(cpu, cpus)} against {side_name(gpu, gpus)}."
    share = "one" if gpus == 1 else "all" if gpus == system.gpu_count else f"{gpus}"
    return f"{system.id}: its {cpus} CPUs against {share} of its {system.gpu_count} GPUs."


def render(values: Values) -> str:
    cpu, cpus, gpu, gpus = read_chips(values)
    metrics = compare(cpu, cpus, gpu, gpus)
    best = cpu_code_paths(cpu)[0]
    # The ratios are in the charts' titles, each beside its bars: the verdict names the sides.
    verdict = tag(
        "p",
        esc(_lead(cpu, cpus, gpu, gpus)),
        class_="widget-verdict",
        data_peak_ratio=f"{next(m for m in metrics if m.key == f'peak_{best.id}').ratio:.6g}",
    )
    # The caution follows the chosen chips: each low-confidence peak with the catalogue's own
    # words on how it was derived (Intel's AMX for the Xeon, AVX-512 for the EPYC, ...).
    low = [c for c in (cpu, gpu) if c.confidence == "low"]
    warning = "".join(
        tag(
            "p",
            esc(
                f"Treat the peak of {side_name(c, 1)} as a low-confidence figure. "
                + (readable(c.note) or "The catalogue derives it; real maths reaches less.")
            ),
            class_="cpu-gpu-caution",
            data_chip=c.id,
        )
        for c in low
    )
    bars = "".join(paired_bars(m, (cpu, cpus), (gpu, gpus)) for m in metrics if m.drawn)
    return (
        verdict
        + tag("div", bars, class_="cpu-gpu-bars")
        + secondary(
            "All figures, sources and caveats",
            _figures_table(metrics, side_name(cpu, cpus), side_name(gpu, gpus))
            + warning
            + _measured_notes(cpu, gpu)
            + chip_notes(cpu, gpu, noted=frozenset(c.id for c in low)),
        )
    )


WIDGET = Widget(
    name="cpu_vs_gpu",
    title="One server's CPUs against its GPUs",
    fields=(CPU, CPUS, GPU, GPUS),
    render=render,
    summary="A server's CPUs against its GPUs, drawn to scale with the GPU / CPU ratios: "
    "paper peaks by code path (CPU matrix units in bf16, vector units in fp32; GPU tensor "
    "cores in bf16), what a tuned matrix multiply reaches on each, memory bandwidth and "
    "capacity; cores and lanes in the table.",
)
