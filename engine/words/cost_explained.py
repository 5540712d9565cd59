"""Cost in words: the verdict of owning against renting, the arithmetic line by line, and the
assumptions with every price's source and date, written from engine.numbers.cost's records.
"""

from __future__ import annotations

from engine.numbers.catalog import prices
from engine.numbers.cost import (
    BREAK_EVEN_TIE,
    BreakEvenSpread,
    CatalogPrices,
    RentVsOwn,
    TokenCost,
    TrainingCost,
)
from engine.numbers.units import HOURS_PER_YEAR
from engine.words.format import format_count, format_percent, format_seconds, format_usd, plural


def rent_vs_own_verdict(r: RentVsOwn) -> str:
    """Which is cheaper at the record's utilisation, and above which utilisation owning is."""
    fixed = r.fixed_usd_per_hour
    power_hour = r.power_usd_per_busy_hour
    if r.break_even_utilisation is not None:
        when = f"owning pays above {format_percent(r.break_even_utilisation)} utilisation"
    elif r.rent_usd_per_gpu_hour <= power_hour:
        when = ("owning is never cheaper: the power alone "
                f"({format_usd(power_hour)} per busy hour) costs more than renting")
    else:
        when = ("owning is never cheaper, even busy 100 % of the time "
                f"({format_usd(fixed + power_hour)} per used GPU-hour against "
                f"{format_usd(r.rent_usd_per_gpu_hour)})")
    which = {"own": "owning is cheaper", "rent": "renting is cheaper",
             "same": ("owning and renting cost within "
                      f"{format_percent(BREAK_EVEN_TIE)} of each other: break-even")}[r.cheaper]
    return f"At {format_percent(r.utilisation)} utilisation {which}; {when}."


def break_even_spread_words(spread: BreakEvenSpread, purchase: str, rent: str) -> str:
    """One sentence: the break-even over the current published prices of ``purchase`` (what
    is bought, e.g. 'dgx-1') and ``rent`` (what is rented, e.g. 'an H100 SXM')."""
    def share(x: float | None) -> str:
        return format_percent(x) if x is not None else "never"

    s = spread
    return (f"Across the catalogue's current published prices ({purchase} bought for "
            f"{format_usd(s.purchase_usd_low)} to {format_usd(s.purchase_usd_high)}, {rent} "
            f"rented for {format_usd(s.rent_usd_per_gpu_hour_low)} to "
            f"{format_usd(s.rent_usd_per_gpu_hour_high)} an hour) the break-even runs from "
            f"{share(s.low)} to {share(s.high)} utilisation: the price paid and the rent "
            "offered decide it.")


def rent_vs_own_arithmetic(r: RentVsOwn) -> tuple[str, ...]:
    """Per GPU, capital, overhead (when there is any), power, owned cost, break-even."""
    n, per_gpu, u = r.gpus, r.purchase_usd_per_gpu, r.utilisation
    overhead = r.overhead_fraction_per_year
    fixed = r.fixed_usd_per_hour
    power_hour, rent = r.power_usd_per_busy_hour, r.rent_usd_per_gpu_hour
    out = [
        f"Per GPU: {format_usd(r.purchase_usd)} / {n:,} GPU{'s' if n != 1 else ''} = "
        f"{format_usd(per_gpu)}; {r.power_W:,.0f} W / {n:,} = {r.power_W_per_gpu:,.0f} W "
        "per GPU, a share of the whole purchase's draw (a server's counts its CPUs, fans and "
        "network too: more than one GPU board's rated power).",
        f"Capital: {format_usd(per_gpu)} / ({r.years:g} years × {HOURS_PER_YEAR:,.0f} h) = "
        f"{format_usd(r.capital_usd_per_hour)} per GPU per hour, busy or idle.",
    ]
    if overhead > 0:
        out.append(
            f"Overhead: {format_usd(per_gpu)} × {format_percent(overhead)} a year / {HOURS_PER_YEAR:,.0f} h"
            f" = {format_usd(r.overhead_usd_per_hour)} per GPU per hour, busy or idle."
        )
    out += [
        f"Power: {r.power_W_per_gpu:,.0f} W × {r.pue:g} PUE × {format_usd(r.usd_per_kWh)}/kWh = "
        f"{format_usd(power_hour)} per busy hour.",
        f"Owned, at {format_percent(u)} utilisation: {'(capital + overhead) ' if overhead > 0 else ''}"
        f"{format_usd(fixed)} / {u:.2f} + "
        f"{format_usd(power_hour)} = {format_usd(r.owned_usd_per_used_gpu_hour)} per used "
        f"GPU-hour, against {format_usd(rent)} rented.",
    ]
    if r.break_even_utilisation is not None:
        out.append(
            f"Break-even: {format_usd(fixed)} / ({format_usd(rent)} - {format_usd(power_hour)})"
            f" = {format_percent(r.break_even_utilisation)} utilisation."
        )
    return tuple(out)


def rent_vs_own_assumptions(r: RentVsOwn) -> tuple[str, ...]:
    """The owning model's assumptions, then where each price comes from."""
    overhead = r.overhead_fraction_per_year
    return (
        f"Straight-line depreciation over {r.years:g} years, no resale value, no interest.",
        "Overhead (the building with its power and cooling, networking, staff, maintenance): "
        + (f"{format_percent(overhead)} of the purchase price a year." if overhead > 0
           else "not included (0 %)."),
        "Power drawn only while busy; idle draw ignored (favours owning slightly).",
        "Renting billed only for the hours used (on-demand); reserved or spot prices differ.",
        *_source_assumptions(r.sources + _catalog_lines(r.catalog, rent_label="Rent, ")),
    )


def cost_arithmetic(c: TokenCost | TrainingCost) -> tuple[str, ...]:
    """The cost worked out line by line: per hour and per million tokens, or GPU-hours."""
    if isinstance(c, TrainingCost):
        return (f"{plural(c.gpus, 'GPU')} × {format_seconds(c.seconds)} = "
                f"{c.gpu_hours:,.4g} GPU-hours.",
                f"{c.gpu_hours:,.4g} GPU-hours × {format_usd(c.usd_per_gpu_hour)} = "
                f"{format_usd(c.usd)}.")
    return (
        f"Cost: {plural(c.gpus, 'GPU')} × {format_usd(c.usd_per_gpu_hour)} = "
        f"{format_usd(c.usd_per_hour)} per hour.",
        f"Tokens: {c.tokens_per_s:,.4g} tokens/s × {format_percent(c.utilisation)} busy × 3,600 s = "
        f"{format_count(c.tokens_per_hour)} tokens per hour.",
        f"{format_usd(c.usd_per_hour)} / {format_count(c.tokens_per_hour)} × 1,000,000 = "
        f"{format_usd(c.usd_per_million_tokens)} per million tokens.",
    )


def cost_assumptions(c: TokenCost | TrainingCost) -> tuple[str, ...]:
    """How the hours are billed, then where the price comes from."""
    billing = ("Paid for every hour, busy or idle; tokens only while busy."
               if isinstance(c, TokenCost) else
               "Every GPU billed for the whole run, pauses included; storage, network and "
               "staff not included.")
    return (billing, *_source_assumptions(c.sources + _catalog_lines(c.catalog)))


def _source_assumptions(lines: tuple[str, ...]) -> tuple[str, ...]:
    if not lines:
        return ("Prices as given by the caller (no source given).",)
    return tuple(f"Source: {line}." for line in lines)


def _price_line(what: str, value: str, date: str, source: str) -> str:
    return f"{what}: {value} ({date}; {source})"


def _catalog_lines(catalog: CatalogPrices | None, rent_label: str = "") -> tuple[str, ...]:
    """One line per catalogue default used: what, its value, its date and source."""
    if catalog is None:
        return ()
    lines: list[str] = []
    if catalog.rent is not None:
        o = catalog.rent
        lines.append(_price_line(f"{rent_label}{o.provider} {o.offer}",
                                 f"{format_usd(o.usd_per_gpu_hour)}/GPU-hour", o.date, o.source))
    if catalog.purchase is not None:
        b = catalog.purchase
        lines.append(_price_line(f"Purchase, {b.item}", format_usd(b.usd), b.date, b.source))
    if catalog.power_system is not None:
        s = catalog.power_system
        lines.append(f"Power: {s.name}, {s.power_W:,.0f} W for {s.gpu_count} GPUs (the whole "
                     "server at its maximum, from the catalogue's system datasheet)")
    if catalog.power_gpu is not None and catalog.power_gpu.power_W is not None:
        hw = catalog.power_gpu
        lines.append(f"Power: {hw.name} rated {hw.power_W:,.0f} W per GPU (the GPU alone: "
                     "the server around it draws more)")
    p = prices()
    if catalog.pue:
        lines.append(f"PUE {p.pue:g} ({p.pue_source})")
    if catalog.electricity:
        lines.append(_price_line("Electricity", f"{format_usd(p.power_usd_per_kWh)}/kWh",
                                 p.power_date, p.power_source))
    if catalog.overhead:
        lines.append(_price_line("Overhead", f"{format_percent(p.overhead_fraction_per_year)} of the "
                                 "purchase a year", p.overhead_date, p.overhead_source))
    return tuple(lines)
