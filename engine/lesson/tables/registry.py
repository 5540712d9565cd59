"""Tables rendered from the engine for pages: `{{ table("formats") }}`."""

from __future__ import annotations

from collections.abc import Callable

from engine.lesson.reality.measured import summary_html as measured_summary
from engine.lesson.reality.measured import table as measured
from engine.lesson.reality.published import table as reality
from engine.lesson.tables.finetune import finetune_memory
from engine.numbers.catalog import list_hardware
from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS, NumberFormat
from engine.render.html import table as html_table
from engine.words.format import format_bandwidth, format_GB, format_TFLOP_per_s

Table = Callable[..., str]


def formats() -> str:
    """Number formats and their bytes per number; the note adds each format's published
    quality cost and the runtimes that keep a KV cache in it, where there are any."""
    rows = [(f.label, f"{f.bytes_per_number:g}", _format_note(f)) for f in FORMATS.values()]
    return html_table(("Format", "Bytes per number", "Note"), rows)


def _format_note(f: NumberFormat) -> str:
    kv = f"KV cache in it: {f.kv_cache}" if f.kv_cache else ""
    return " ".join(part for part in (f.note, f.quality, kv) if part)


def hardware(kind: str = "") -> str:
    """The hardware catalogue: memory, bandwidth, bf16 peak (dense)."""
    rows = []
    for h in list_hardware():
        if kind and h.kind != kind:
            continue
        peaks = dict(h.peaks)
        bf16 = peaks.get("bf16")
        rows.append(
            (
                h.name,
                format_GB(h.memory_bytes),
                format_bandwidth(h.bandwidth_bytes_per_s),
                format_TFLOP_per_s(bf16) if bf16 else "n/a",
            )
        )
    if not rows:
        raise EngineError(f"No hardware of kind {kind!r}.", "kind")
    return html_table(("Chip", "Memory", "Bandwidth", "BF16 dense peak"), rows)


from engine.lesson.tables.cheatsheet import CHEAT_TABLES  # noqa: E402  (the cheat sheet's tables: cheat_*)

TABLES: dict[str, Table] = {
    "formats": formats,
    "hardware": hardware,
    "reality": reality,
    "measured": measured,
    "measured_summary": measured_summary,
    "finetune_memory": finetune_memory,
    **CHEAT_TABLES,
}


def get_table(name: object) -> Table:
    if isinstance(name, str) and name in TABLES:
        return TABLES[name]
    raise EngineError(
        f"Unknown table {str(name)[:40]!r}; known tables: {', '.join(sorted(TABLES))}.", "table"
    )
