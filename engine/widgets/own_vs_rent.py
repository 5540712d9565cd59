"""docs/steps/where-ai-runs.md: own or rent? Cost per used GPU-hour against utilisation, and the break-even.

Every figure comes from :func:`engine.numbers.cost.rent_vs_own`; the starting values of the fields
are the catalogue's prices for dgx-1 (each shown with its date and source).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.numbers import quantities
from engine.numbers.catalog import CloudPrice, PurchasePrice, get_system, prices
from engine.numbers.cost import (
    DEFAULT_YEARS,
    BreakEvenSpread,
    RentVsOwn,
    break_even_spread,
    rent_vs_own,
)
from engine.render.fields import Amount, Count
from engine.render.html import definition_list, esc, tag
from engine.render.plot import WIDTH, Frame, Scale, chart_for_both, legend, nice_axis_top, ticks
from engine.render.secondary import plain_list, secondary
from engine.render.svg import circle, line, polygon, polyline, rect, text
from engine.render.widget import Values, Widget
from engine.words.cost_explained import (
    break_even_spread_words,
    rent_vs_own_arithmetic,
    rent_vs_own_assumptions,
    rent_vs_own_verdict,
)
from engine.words.format import format_percent, format_usd

SYSTEM = "dgx-1"
_GRID = {"class_": "cost-grid", "stroke": "currentColor", "stroke_opacity": "0.15"}


@dataclass(frozen=True, slots=True)
class Default:
    """A field's starting value (text, as the form holds it) and where it comes from."""

    value: str
    source: str


@cache
def defaults() -> dict[str, Default]:
    """The starting values, from the catalogue: dgx-1's purchase, power and cloud price."""
    system = get_system(SYSTEM)
    p = prices()
    buy = p.default_purchase(system.gpu.id)
    rent = p.default_cloud(system.gpu.id)
    return {
        "purchase_usd": Default(
            f"{buy.usd:g}",
            f"{buy.item}: {format_usd(buy.usd)} ({buy.date}; {buy.source})",
        ),
        "gpus": Default(f"{buy.gpu_count}", f"{buy.item} holds {buy.gpu_count} GPUs"),
        "power_W": Default(
            f"{system.power_W:g}",
            f"{system.name}: {system.power_W:,.0f} W, the whole server at its maximum "
            f"({system.source})",
        ),
        "pue": Default(f"{p.pue:g}", f"PUE {p.pue:g} ({p.pue_source})"),
        "usd_per_kWh": Default(
            f"{p.power_usd_per_kWh:g}",
            f"Electricity {format_usd(p.power_usd_per_kWh)}/kWh ({p.power_date}; {p.power_source})",
        ),
        "overhead_percent": Default(
            f"{p.overhead_fraction_per_year * 100:g}",
            f"Overhead {format_percent(p.overhead_fraction_per_year)} of the purchase a year "
            f"({p.overhead_date}; {p.overhead_source})",
        ),
        "years": Default(
            f"{DEFAULT_YEARS:g}", "Years of use: an illustrative period, not a sourced figure"
        ),
        "rent_usd_per_gpu_hour": Default(
            f"{rent.usd_per_gpu_hour:g}",
            f"Rent: {rent.provider} {rent.offer}, {format_usd(rent.usd_per_gpu_hour)} per "
            f"GPU-hour ({rent.date}; {rent.source})",
        ),
    }


def _same(typed: str, default: str) -> bool:
    try:
        return float(typed.strip().replace(",", "").replace("_", "")) == float(default)
    except ValueError:
        return False


def _starting(
    name: str, label: str, quantity: quantities.Quantity, *, unit: str = "", hint: str = ""
) -> Amount:
    """A field that starts at the catalogue's value for ``name`` (see :func:`defaults`)."""
    return Amount(name, label, defaults()[name].value, unit=unit, hint=hint, quantity=quantity)


PURCHASE = _starting("purchase_usd", "Purchase price", quantities.PURCHASE_USD, unit="USD")
GPUS = Count(
    "gpus", "GPUs in the purchase", defaults()["gpus"].value, quantity=quantities.PURCHASE_GPUS
)
POWER = _starting("power_W", "Power while busy", quantities.POWER_W, unit="W, all GPUs")
PUE = _starting(
    "pue", "PUE", quantities.PUE,
    hint="Facility watts per IT watt.",
)
ELECTRICITY = _starting(
    "usd_per_kWh", "Electricity price", quantities.USD_PER_KWH, unit="USD per kWh"
)
YEARS = _starting("years", "Years of use", quantities.YEARS)
OVERHEAD = _starting(
    "overhead_percent", "Facility, network and staff", quantities.OVERHEAD_PERCENT_PER_YEAR,
    unit="% of the purchase a year",
)
UTILISATION = Amount(
    "utilisation", "Utilisation", "50", unit="% of hours busy",
    quantity=quantities.UTILISATION_PERCENT,
)
RENT = _starting(
    "rent_usd_per_gpu_hour", "Cloud price", quantities.USD_PER_GPU_HOUR,
    unit="USD per GPU-hour",
)


def compare(values: Values) -> RentVsOwn:
    """The engine's comparison for the form's values (utilisation typed in per cent)."""
    starting = defaults()
    sources = tuple(
        d.source for name, d in starting.items() if _same(values.text(name), d.value)
    )
    return rent_vs_own(
        rent_usd_per_gpu_hour=values[RENT],
        purchase_usd=values[PURCHASE],
        years=values[YEARS],
        power_W=values[POWER],
        pue=values[PUE],
        usd_per_kWh=values[ELECTRICITY],
        utilisation=values[UTILISATION] / 100.0,
        gpus=values[GPUS],
        overhead_fraction_per_year=values[OVERHEAD] / 100.0,
        sources=sources,
    )


def cost_chart(r: RentVsOwn, *, height: int = 276) -> str:
    """Owned cost per used GPU-hour against utilisation (the engine's curve), the flat
    rental price, the break-even and the reader's utilisation, as SVG with a text alternative.

    The y-axis (USD per used GPU-hour) has round ticks and a titled unit; at low utilisation
    the owned cost soars, so the curve is cut at the top and the figure where it leaves the
    chart is written beside it."""
    at_full = r.curve[-1][1]

    def draw(width: int) -> tuple[str, float]:
        # The narrow drawing writes the off-chart figure on a line of its own, above the
        # axis's title (side by side they would meet).
        wide = width >= WIDTH
        f = Frame(width, height, left=62, right=16, top=30 if wide else 44, bottom=34)
        y_max, y_step = nice_axis_top(max(3.0 * r.rent_usd_per_gpu_hour, 1.5 * at_full))
        x = Scale(0.0, 1.0, f.left, f.end, clamp=False)
        y = Scale(0.0, y_max, f.base, f.top)

        # The curve, cut at the top of the chart (low utilisation costs soar).
        points: list[tuple[float, float]] = []
        previous: tuple[float, float] | None = None
        for u, usd in r.curve:
            if usd <= y_max:
                if previous is not None and previous[1] > y_max:
                    pu, pusd = previous
                    cut = pu + (u - pu) * (pusd - y_max) / (pusd - usd)
                    points.append((x(cut), y(y_max)))
                points.append((x(u), y(usd)))
            previous = (u, usd)
        rent_y = y(r.rent_usd_per_gpu_hour)
        marks = [
            (i * y_step, format_usd(i * y_step) if i else "$0")
            for i in range(round(y_max / y_step) + 1)
        ]
        parts = [
            rect(f.left, f.top, f.plot_w, f.plot_h, class_="track"),
            ticks("y", y, marks, f, offset=6, grid=_GRID),
            polyline(points, class_="cost-owned"),
            line(f.left, rent_y, f.end, rent_y, class_="cost-rent"),
            text(
                f.end - 4, rent_y - 5, f"rent {format_usd(r.rent_usd_per_gpu_hour)}", anchor="end"
            ),
            # axes
            text(f.left - 6, f.top - 12, "USD per used GPU-hour"),
            text(f.left, height - 18, format_percent(0.0), anchor="middle"),
            text(x(0.5), height - 18, format_percent(0.5), anchor="middle"),
            text(f.end, height - 18, format_percent(1.0), anchor="end"),
            text(x(0.5), height - 3, "utilisation (% of hours busy)", anchor="middle"),
        ]
        first_u, first_usd = r.curve[0]
        if first_usd > y_max:
            parts.append(
                text(
                    f.end,
                    f.top - 12 if wide else f.top - 28,
                    f"off the chart at {format_percent(first_u)} busy: {format_usd(first_usd)}",
                    anchor="end",
                    class_="cost-off-top",
                )
            )
        if r.break_even_utilisation is not None:
            bx = x(r.break_even_utilisation)
            spot = (bx + 4, "start") if r.break_even_utilisation < 0.6 else (bx - 4, "end")
            parts += [
                line(bx, f.top, bx, f.base, class_="capacity"),
                text(
                    spot[0], f.top + 12, f"break-even {format_percent(r.break_even_utilisation)}", anchor=spot[1]
                ),
            ]
        nx, ny = x(r.utilisation), y(r.owned_usd_per_used_gpu_hour)
        now_title = f"{format_percent(r.utilisation)}: {format_usd(r.owned_usd_per_used_gpu_hour)}"
        if r.owned_usd_per_used_gpu_hour > y_max:
            # Above the chart: an arrow at the top edge pointing up, not a point that lies.
            arrow = [(nx - 6, f.top + 9), (nx + 6, f.top + 9), (nx, f.top - 1)]
            parts.append(polygon(arrow, title=now_title, class_="cost-now"))
        else:
            parts.append(circle(nx, ny, 5, title=now_title, class_="cost-now"))
        return "".join(parts), height

    description = (
        "Cost per used GPU-hour against utilisation: owning falls from "
        f"{format_usd(r.curve[0][1])} at {format_percent(r.curve[0][0])} to {format_usd(at_full)} at "
        f"100%; renting stays at {format_usd(r.rent_usd_per_gpu_hour)}; "
        + (
            f"they cross at {format_percent(r.break_even_utilisation)} utilisation"
            if r.break_even_utilisation is not None
            else "owning never drops below renting"
        )
        + f"; at {format_percent(r.utilisation)} owning costs "
        f"{format_usd(r.owned_usd_per_used_gpu_hour)}."
    )
    svg = chart_for_both(draw, css="cost-chart", name="cost per used GPU-hour against utilisation",
                         label=description)
    # The rent line is labelled in the chart; the legend names the owned curve's colour.
    return svg + legend(
        [
            (
                "cost-swatch-owned",
                f"Owned: {format_usd(r.owned_usd_per_used_gpu_hour)} at {format_percent(r.utilisation)}",
            ),
        ]
    )


@cache
def published_prices() -> tuple[tuple[PurchasePrice, ...], tuple[CloudPrice, ...]]:
    """The catalogue's published prices the break-even's range is taken over: dgx-1's
    purchases (the whole server) and the current cloud offers for its GPU (a price its
    provider has since cut is left out: :func:`superseded_prices`)."""
    p = prices()
    return (tuple(b for b in p.purchases if b.system == SYSTEM),
            tuple(c for c in p.cloud_for(get_system(SYSTEM).gpu.id) if c.current))


def superseded_prices() -> tuple[CloudPrice, ...]:
    """The cloud offers for dgx-1's GPU that no longer stand, named beside the range."""
    return tuple(c for c in prices().cloud_for(get_system(SYSTEM).gpu.id) if not c.current)


def spread(r: RentVsOwn) -> BreakEvenSpread:
    """The break-even of ``r`` over :func:`published_prices` (a purchase per GPU times
    ``r.gpus``)."""
    purchases, clouds = published_prices()
    return break_even_spread(r, tuple(b.usd_per_gpu * r.gpus for b in purchases),
                             tuple(c.usd_per_gpu_hour for c in clouds))


def render(values: Values) -> str:
    r = compare(values)
    verdict_class = {"own": "fits", "rent": "refused", "same": ""}[r.cheaper]
    verdict = tag("p", esc(rent_vs_own_verdict(r)), class_=f"widget-verdict {verdict_class}".strip())
    gpu = get_system(SYSTEM).gpu
    sensitivity = tag("p", esc(break_even_spread_words(
        spread(r), SYSTEM, f"one {gpu.name}")), class_="widget-subtitle")
    break_even = (
        f"{format_percent(r.break_even_utilisation)} utilisation"
        if r.break_even_utilisation is not None
        else "never"
    )
    figures = definition_list(
        [
            (
                f"Owned, per used GPU-hour at {format_percent(r.utilisation)}",
                format_usd(r.owned_usd_per_used_gpu_hour),
            ),
            ("Rented, per GPU-hour", format_usd(r.rent_usd_per_gpu_hour)),
            ("Owning pays off above", break_even),
            (
                f"A year, per GPU ({r.used_gpu_hours_per_year:,.0f} hours used)",
                f"owned {format_usd(r.owned_usd_per_year)}, rented "
                f"{format_usd(r.rented_usd_per_year)}",
            ),
        ]
    )
    arithmetic = plain_list(rent_vs_own_arithmetic(r), ordered=True)
    purchases, clouds = published_prices()
    published = [f"In the range: {b.item}, {format_usd(b.usd)} ({b.date}; {b.source})"
                 for b in purchases]
    published += [f"In the range: {c.provider} {c.offer}, {format_usd(c.usd_per_gpu_hour)} per "
                  f"GPU-hour ({c.date}; {c.source})" for c in clouds]
    published += [f"Left out of the range: {c.provider} {c.offer}, {format_usd(c.usd_per_gpu_hour)} "
                  f"per GPU-hour ({c.date}; {c.source}), superseded: {c.superseded}"
                  for c in superseded_prices()]
    notes = plain_list((*rent_vs_own_assumptions(r), *published))
    more = secondary("The figures, the arithmetic and the sources", figures + arithmetic + notes)
    return verdict + sensitivity + cost_chart(r) + more


WIDGET = Widget(
    name="own_vs_rent",
    title="Own or rent?",
    fields=(PURCHASE, GPUS, POWER, PUE, ELECTRICITY, YEARS, OVERHEAD, UTILISATION, RENT),
    render=render,
    summary="Owning against renting per used GPU-hour: purchase, power, PUE, electricity, "
    "years, facility, network and staff overhead and utilisation against a cloud price; the "
    "break-even utilisation, charted.",
)
