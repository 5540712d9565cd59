"""Step 11: a server's CPUs against a GPU, figure by figure, drawn to scale.

The default is dgx-1's own pair: its two Xeon Platinum 8480C sockets against one of its
H100s. Every figure comes from the catalogue (scaled by the chip counts) and every ratio is
GPU side / CPU side, computed here, once, for the page and for the browser alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.numbers import quantities
from engine.numbers.catalog import HardwareSpec, get_hardware, get_system, list_hardware
from engine.render.fields import Choice, Count
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.plot import WIDTH, Bar, bar_rows, chart
from engine.render.widget import Values, Widget
from engine.words.format import format_bandwidth, format_GB, format_TFLOP_per_s
from engine.words.labels import side_name

SYSTEM = "dgx-1"
PEAK_FORMAT = "bf16"


def cpu_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware() if h.kind == "cpu")


def gpu_only_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware() if h.kind == "gpu")


CHIPS = quantities.CHIPS_COMPARED
CPU = Choice("cpu", "CPU", "xeon-8480c", options=cpu_options())
CPUS = Count("cpus", "Number of CPUs", "2", unit="sockets", hint="dgx-1 has two", quantity=CHIPS)
GPU = Choice("gpu", "GPU", "h100-sxm", options=gpu_only_options())
GPUS = Count("gpus", "Number of GPUs", "1", unit="GPUs", hint="dgx-1 has eight", quantity=CHIPS)


def read_chips(values: Values) -> tuple[HardwareSpec, int, HardwareSpec, int]:
    """The CPU, how many, the GPU, how many: each error naming its field."""
    return get_hardware(values[CPU]), values[CPUS], get_hardware(values[GPU]), values[GPUS]


def format_ratio(ratio: float) -> str:
    """GPU side / CPU side: '4.3×', or for a ratio under 1 how much more the CPUs have."""
    if ratio >= 1:
        return f"{ratio:,.1f}×" if ratio < 100 else f"{ratio:,.0f}×"
    return f"{ratio:.2g}× (the CPUs have {1 / ratio:,.1f}× more)"


@dataclass(frozen=True, slots=True)
class Metric:
    """One figure for both sides: totals over the chips, their texts and GPU / CPU."""

    key: str
    label: str
    cpu_value: float
    gpu_value: float
    cpu_text: str
    gpu_text: str

    @property
    def ratio(self) -> float:
        return self.gpu_value / self.cpu_value


def _units(chip: HardwareSpec, n: int) -> tuple[float, str]:
    count = chip.compute_units * n
    return float(count), f"{count:,} {chip.compute_unit_name}"


def _lanes(chip: HardwareSpec, n: int) -> tuple[float, str]:
    count = chip.lanes * n
    return float(count), f"{count:,} lanes"


def _peak(chip: HardwareSpec, n: int) -> tuple[float, str]:
    flops_per_s = chip.peak_flops_per_s(PEAK_FORMAT) * n
    return flops_per_s, format_TFLOP_per_s(flops_per_s)


def _bandwidth(chip: HardwareSpec, n: int) -> tuple[float, str]:
    bytes_per_s = chip.bandwidth_bytes_per_s * n
    return bytes_per_s, format_bandwidth(bytes_per_s)


def _capacity(chip: HardwareSpec, n: int) -> tuple[float, str]:
    memory_bytes = chip.memory_bytes * n
    return memory_bytes, f"{format_GB(memory_bytes)} {chip.memory_type}"


# key, label, and each side's total over its n chips with its text
_FIGURES: tuple[tuple[str, str, Callable[[HardwareSpec, int], tuple[float, str]]], ...] = (
    ("units", "Cores (on a GPU: SMs or compute units)", _units),
    ("lanes", "Arithmetic lanes working side by side", _lanes),
    ("peak", "Peak maths, bf16 dense (FLOP/s)", _peak),
    ("bandwidth", "Memory bandwidth", _bandwidth),
    ("capacity", "Memory capacity", _capacity),
)


def compare(cpu: HardwareSpec, cpus: int, gpu: HardwareSpec, gpus: int) -> list[Metric]:
    """The figures of ``cpus`` CPU sockets and ``gpus`` GPUs, totals for each side."""
    metrics = []
    for key, label, total in _FIGURES:
        cpu_value, cpu_text = total(cpu, cpus)
        gpu_value, gpu_text = total(gpu, gpus)
        metrics.append(Metric(key, label, cpu_value, gpu_value, cpu_text, gpu_text))
    return metrics


def paired_bars(metric: Metric, cpu_name: str, gpu_name: str, *, width: int = WIDTH) -> str:
    """Two horizontal bars, CPU side above GPU side, on one scale (the larger is full width)."""
    top = max(metric.cpu_value, metric.gpu_value)
    left, bar_h, gap = 4, 18, 30
    usable = width - 2 * left
    bars = [
        Bar(f"{name}: {text}", value, css, title=f"{name}: {text}", fill={"data_side": side})
        for side, css, name, value, text in (
            ("cpu", "part-2", cpu_name, metric.cpu_value, metric.cpu_text),
            ("gpu", "part-0", gpu_name, metric.gpu_value, metric.gpu_text),
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
    )
    height = 14 + 2 * (bar_h + gap) - gap + 8
    description = (
        f"{metric.label}: {cpu_name} {metric.cpu_text}; {gpu_name} {metric.gpu_text}; "
        f"GPU side / CPU side = {format_ratio(metric.ratio)}."
    )
    title = tag(
        "p",
        esc(f"{metric.label}: GPU / CPU = {format_ratio(metric.ratio)}"),
        class_="widget-subtitle",
    )
    svg = chart(
        rows, css="paired-bars", name=metric.label, label=description, width=width, height=height, data={"metric": metric.key}
    )
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


def _has(ratio: float, more: str, less: str) -> str:
    """'4.3× the peak FLOP/s' or, for a ratio under 1, '25.6× less memory'."""
    return f"{format_ratio(ratio)} the {more}" if ratio >= 1 else f"{1 / ratio:,.1f}× {less}"


def render(values: Values) -> str:
    cpu, cpus, gpu, gpus = read_chips(values)
    cpu_name, gpu_name = side_name(cpu, cpus), side_name(gpu, gpus)
    metrics = compare(cpu, cpus, gpu, gpus)
    by_key = {m.key: m for m in metrics}
    peak = by_key["peak"]
    system = get_system(SYSTEM)
    lead = ""
    if (cpu.id, cpus, gpu.id) == (system.cpu.id, system.cpu_count, system.gpu.id) and (
        gpus <= system.gpu_count
    ):
        share = "one" if gpus == 1 else "all" if gpus == system.gpu_count else f"{gpus}"
        lead = f"{system.name}: its {cpus} CPUs against {share} of its {system.gpu_count} GPUs. "
    clauses = [
        _has(by_key["peak"].ratio, "peak FLOP/s", "lower peak FLOP/s"),
        _has(by_key["bandwidth"].ratio, "memory bandwidth", "less memory bandwidth"),
        _has(by_key["capacity"].ratio, "memory", "less memory"),
    ]
    verdict = tag(
        "p",
        esc(
            f"{lead}Against the CPU side, the GPU side has {clauses[0]}, {clauses[1]} "
            f"and {clauses[2]}."
        ),
        class_="widget-verdict",
        data_peak_ratio=f"{peak.ratio:.6g}",
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
    bars = "".join(paired_bars(m, cpu_name, gpu_name) for m in metrics)
    return (
        verdict
        + warning
        + tag("div", bars, class_="cpu-gpu-bars")
        + _figures_table(metrics, cpu_name, gpu_name)
        + chip_notes(cpu, gpu, noted=frozenset(c.id for c in low))
    )


WIDGET = Widget(
    name="cpu_vs_gpu",
    title="The CPUs and a GPU of one server, side by side",
    fields=(CPU, CPUS, GPU, GPUS),
    render=render,
    summary="Cores and lanes, peak bf16 FLOP/s, memory bandwidth and capacity of a server's "
    "CPUs against a GPU, drawn to scale, with the GPU / CPU ratios.",
)
