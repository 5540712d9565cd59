"""Two plans compared, for people (a table of A, B and B / A) and as JSON (both plans whole
and the figures that differ), for the command line's ``compare``."""

from __future__ import annotations

from engine.numbers.compare import Difference, FigureValue, PlanComparison
from engine.numbers.plan import Plan
from engine.words.format import format_seconds, three_figures


def comparison_to_dict(a: dict[str, object], b: dict[str, object],
                       comparison: PlanComparison) -> dict[str, object]:
    """``{"a": plan, "b": plan, "differences": [...], "same": [names]}``: ``a`` and ``b``
    are the plans' JSON (plan_to_dict, with a load when there is one)."""
    return {"a": a, "b": b,
            "differences": [d.to_dict() for d in comparison.differences],
            "same": [d.name for d in comparison.figures if not d.differs]}


def _value_words(value: FigureValue, unit: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if unit in ("GPUs", ""):
        return f"{value:,.3g}" if isinstance(value, float) and unit == "" else f"{value:,}"
    if unit == "s":
        return format_seconds(value)
    if unit == "USD":
        return f"${value:,.2f}" if value < 1e5 else f"${value:,.0f}"
    return f"{three_figures(value)} {unit}"


def comparison_row(d: Difference) -> tuple[str, str, str, str]:
    """A figure for people: its label, A's value, B's, and B / A ('=' where they agree, ''
    where there is no ratio)."""
    ratio = "=" if not d.differs else "" if d.ratio is None else f"x{d.ratio:.3g}"
    return d.label, _value_words(d.a, d.unit), _value_words(d.b, d.unit), ratio


def plan_title(p: Plan) -> str:
    """'Llama 3.1 8B on 1 × NVIDIA H100 SXM5 80GB, bf16'."""
    return f"{p.model.name} on {p.gpus:,} × {p.hardware.name}, {p.weight_format}"


def comparison_text(a: Plan, b: Plan, comparison: PlanComparison) -> str:
    """A and B named, then one row per figure: A, B and B / A ('=' where they agree)."""
    rows = [("", "A", "B", "B / A"), *(comparison_row(d) for d in comparison.figures)]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"A: {plan_title(a)}, task: {a.task}", f"B: {plan_title(b)}, task: {b.task}", ""]
    for r in rows:
        lines.append("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(r, widths, strict=True))
                               ).rstrip())
    n = len(comparison.differences)
    lines.append(f"{n:,} of {len(comparison.figures):,} figures differ.")
    return "\n".join(lines)

