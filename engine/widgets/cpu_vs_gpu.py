"""Step 11: a server's CPUs against a GPU, figure by figure, drawn to scale.

The default is dgx-1's own pair: its two Xeon Platinum 8480C sockets against one of its
H100s. Every figure comes from the catalogue (scaled by the chip counts) and every ratio is
GPU side / CPU side, computed here, once, for the page and for the browser alike.
"""

from __future__ import annotations

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


def compare(cpu: HardwareSpec, cpus: int, gpu: HardwareSpec, gpus: int) -> list[Metric]:
    """The figures of ``cpus`` CPU sockets and ``gpus`` GPUs, totals for each side."""
    units = Metric(
        "units",
        "Cores (on a GPU: SMs or compute units)",
        float(cpu.compute_units * cpus),
        float(gpu.compute_units * gpus),
        f"{cpu.compute_units * cpus:,} {cpu.compute_unit_name}",
        f"{gpu.compute_units * gpus:,} {gpu.compute_unit_name}",
    )
    lanes = Metric(
        "lanes",
        "Arithmetic lanes working side by side",
        float(cpu.lanes * cpus),
        float(gpu.lanes * gpus),
        f"{cpu.lanes * cpus:,} lanes",
        f"{gpu.lanes * gpus:,} lanes",
    )
    cpu_peak = cpu.peak_flops_per_s(PEAK_FORMAT) * cpus
    gpu_peak = gpu.peak_flops_per_s(PEAK_FORMAT) * gpus
    peak = Metric(
        "peak",
        "Peak maths, bf16 dense (FLOP/s)",
        cpu_peak,
        gpu_peak,
        format_TFLOP_per_s(cpu_peak),
        format_TFLOP_per_s(gpu_peak),
    )
    cpu_bw = cpu.bandwidth_bytes_per_s * cpus
    gpu_bw = gpu.bandwidth_bytes_per_s * gpus
    bandwidth = Metric(
        "bandwidth",
        "Memory bandwidth",
        cpu_bw,
        gpu_bw,
        format_bandwidth(cpu_bw),
        format_bandwidth(gpu_bw),
    )
    cpu_mem = cpu.memory_bytes * cpus
    gpu_mem = gpu.memory_bytes * gpus
    capacity = Metric(
        "capacity",
        "Memory capacity",
        cpu_mem,
        gpu_mem,
        f"{format_GB(cpu_mem)} {cpu.memory_type}",
        f"{format_GB(gpu_mem)} {gpu.memory_type}",
    )
    return [units, lanes, peak, bandwidth, capacity]


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
