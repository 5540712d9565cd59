"""Tests of engine.numbers.cost: renting against owning, cost per million tokens, training run cost."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.numbers.cost import cost_per_million_tokens, rent_vs_own, training_run_cost
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.units import HOURS_PER_YEAR
from engine.words.cost_explained import (
    cost_arithmetic,
    cost_assumptions,
    rent_vs_own_arithmetic,
    rent_vs_own_assumptions,
    rent_vs_own_verdict,
)
from engine.words.format import format_usd

# A DGX H100 (8 GPUs) at the SemiAnalysis 2023 estimate, 10.2 kW, US industrial power,
# Uptime 2023 average PUE, against AWS p5 on-demand per GPU (sources in catalog/data/prices.toml).
DGX = {
    "purchase_usd": 270_000,
    "gpus": 8,
    "years": 4,
    "power_W": 10_200,
    "pue": 1.58,
    "usd_per_kWh": 0.0806,
}


def test_owning_arithmetic() -> None:
    r = rent_vs_own(rent_usd_per_gpu_hour=12.29, utilisation=0.5, **DGX)  # type: ignore[arg-type]
    capital = 270_000 / 8 / (4 * HOURS_PER_YEAR)
    power = 1275 / 1000 * 1.58 * 0.0806
    assert r.purchase_usd_per_gpu == 33_750
    assert r.power_W_per_gpu == 1275
    assert r.capital_usd_per_hour == pytest.approx(capital)
    assert r.power_usd_per_busy_hour == pytest.approx(power)
    assert r.owned_usd_per_used_gpu_hour == pytest.approx(capital / 0.5 + power)
    assert r.owned_usd_per_hour == pytest.approx(capital + 0.5 * power)
    assert r.break_even_utilisation == pytest.approx(capital / (12.29 - power))
    assert r.cheaper == "own"
    assert "7.94 %" in rent_vs_own_verdict(r)
    assert r.used_gpu_hours_per_year == pytest.approx(0.5 * HOURS_PER_YEAR)
    assert r.rented_usd_per_year == pytest.approx(12.29 * 0.5 * HOURS_PER_YEAR)


def test_power_matches_the_reference_note() -> None:
    # Uptime Institute 2023 PUE 1.58, US EIA 2023 industrial $0.0806/kWh: 700 W x 1.58 x 8760 h = ~$781/yr.
    r = rent_vs_own(rent_usd_per_gpu_hour=3, purchase_usd=30_000, years=4, power_W=700,
                    pue=1.58, usd_per_kWh=0.0806, utilisation=1)
    assert r.power_usd_per_busy_hour * 8760 == pytest.approx(781, abs=1)


def test_renting_cheaper_at_low_utilisation() -> None:
    r = rent_vs_own(rent_usd_per_gpu_hour=2.99, utilisation=0.05, **DGX)  # type: ignore[arg-type]
    assert r.cheaper == "rent"
    assert r.break_even_utilisation is not None and r.break_even_utilisation > 0.05


def test_never_cheaper_when_power_costs_more_than_rent() -> None:
    r = rent_vs_own(rent_usd_per_gpu_hour=0.1, purchase_usd=30_000, years=4, power_W=700,
                    pue=1.58, usd_per_kWh=0.5, utilisation=1)
    assert r.break_even_utilisation is None
    assert "never" in rent_vs_own_verdict(r) and "power alone" in rent_vs_own_verdict(r)
    assert r.cheaper == "rent"


def test_never_cheaper_even_fully_busy() -> None:
    r = rent_vs_own(rent_usd_per_gpu_hour=1.0, purchase_usd=100_000, years=1, power_W=700,
                    pue=1.2, usd_per_kWh=0.08, utilisation=1)
    assert r.break_even_utilisation is None
    assert "even busy 100 %" in rent_vs_own_verdict(r)


def test_overhead_is_a_fixed_cost() -> None:
    base = rent_vs_own(rent_usd_per_gpu_hour=5, utilisation=0.5, **DGX)  # type: ignore[arg-type]
    more = rent_vs_own(rent_usd_per_gpu_hour=5, utilisation=0.5,
                       overhead_fraction_per_year=0.1, **DGX)  # type: ignore[arg-type]
    assert more.overhead_usd_per_hour == pytest.approx(33_750 * 0.1 / HOURS_PER_YEAR)
    assert more.owned_usd_per_used_gpu_hour == pytest.approx(
        base.owned_usd_per_used_gpu_hour + more.overhead_usd_per_hour / 0.5)
    assert base.break_even_utilisation is not None
    assert more.break_even_utilisation is not None
    assert more.break_even_utilisation > base.break_even_utilisation
    assert any("Overhead" in line for line in rent_vs_own_arithmetic(more))


def test_curve_falls_with_utilisation() -> None:
    r = rent_vs_own(rent_usd_per_gpu_hour=5, utilisation=0.5, **DGX)  # type: ignore[arg-type]
    assert len(r.curve) == 20 and r.curve[-1][0] == 1.0
    costs = [c for _, c in r.curve]
    assert all(a > b for a, b in itertools.pairwise(costs))


def test_sources_appear_in_assumptions() -> None:
    r = rent_vs_own(rent_usd_per_gpu_hour=5, utilisation=0.5,
                    sources=("AWS p5 on-demand, 2025-03-17",), **DGX)  # type: ignore[arg-type]
    assert any("AWS p5 on-demand, 2025-03-17" in a for a in rent_vs_own_assumptions(r))


def test_to_dict_is_json() -> None:
    r = rent_vs_own(rent_usd_per_gpu_hour=0.1, utilisation=0.5, **DGX)  # type: ignore[arg-type]
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["break_even_utilisation"] is None
    assert d["curve"][0] == [0.05, pytest.approx(r.curve[0][1])]
    for result in (cost_per_million_tokens(tokens_per_s=100, usd_per_gpu_hour=2),
                   training_run_cost(gpus=8, seconds=3600, usd_per_gpu_hour=2)):
        json.dumps(result.to_dict(), allow_nan=False)


def test_cost_per_million_tokens() -> None:
    c = cost_per_million_tokens(tokens_per_s=2000, usd_per_gpu_hour=2.99)
    assert c.usd_per_million_tokens == pytest.approx(2.99 / (2000 * 3600) * 1e6)
    half = cost_per_million_tokens(tokens_per_s=2000, usd_per_gpu_hour=2.99, gpus=8,
                                   utilisation=0.5)
    assert half.usd_per_million_tokens == pytest.approx(c.usd_per_million_tokens * 16)
    assert half.usd_per_hour == pytest.approx(8 * 2.99)
    assert "per million tokens" in cost_arithmetic(half)[-1]


def test_training_run_cost() -> None:
    c = training_run_cost(gpus=16_384, seconds=54 * 86_400, usd_per_gpu_hour=2)
    assert c.gpu_hours == pytest.approx(16_384 * 54 * 24)
    assert c.usd == pytest.approx(c.gpu_hours * 2)
    assert cost_arithmetic(c)[-1].endswith(format_usd(c.usd) + ".")


@pytest.mark.parametrize(("field", "value"), [("gpus", -1), ("usd_per_gpu_hour", "soon"),
                                              ("usd_per_gpu_hour", 0)])
def test_the_cost_of_a_plan_refuses_bad_input_where_it_enters(field: str, value: object) -> None:
    """The cost functions trust their typed inputs; plan() checks a reader's GPUs and price
    (the own_vs_rent widget's fields check the rest: tests/engine/test_widget_where_cost.py)."""
    with pytest.raises(EngineError) as info:
        plan(model="llama-3.1-8b", task="train", **{field: value})
    assert info.value.field == field


def test_format_usd() -> None:
    assert format_usd(270_000) == "$270,000"
    assert format_usd(12.29) == "$12.29"
    assert format_usd(0.162) == "$0.162"
    assert format_usd(0) == "$0"


@settings(max_examples=200)
@given(
    rent=st.floats(0.1, 50),
    purchase=st.floats(1_000, 1_000_000),
    years=st.floats(0.5, 10),
    power=st.floats(0, 20_000),
    pue=st.floats(1, 2),
    kwh=st.floats(0, 0.5),
    gpus=st.integers(1, 16),
    overhead=st.floats(0, 0.5),
)
def test_break_even_is_consistent(
    rent: float, purchase: float, years: float, power: float, pue: float, kwh: float,
    gpus: int, overhead: float,
) -> None:
    kwargs = {"rent_usd_per_gpu_hour": rent, "purchase_usd": purchase, "years": years,
              "power_W": power, "pue": pue, "usd_per_kWh": kwh, "gpus": gpus,
              "overhead_fraction_per_year": overhead}
    r = rent_vs_own(utilisation=1.0, **kwargs)  # type: ignore[arg-type]
    u = r.break_even_utilisation
    if u is None:
        # Never cheaper: even fully busy, owning costs at least as much as renting.
        assert r.owned_usd_per_used_gpu_hour >= rent * (1 - 1e-9)
        return
    assume(u > 1e-6)
    at = rent_vs_own(utilisation=u, **kwargs)  # type: ignore[arg-type]
    assert at.owned_usd_per_used_gpu_hour == pytest.approx(rent, rel=1e-9)
    if u < 0.99:
        above = rent_vs_own(utilisation=min(1.0, u * 1.01 + 1e-3), **kwargs)  # type: ignore[arg-type]
        assert above.owned_usd_per_used_gpu_hour < rent
    if u > 0.01:
        below = rent_vs_own(utilisation=u * 0.99, **kwargs)  # type: ignore[arg-type]
        assert below.owned_usd_per_used_gpu_hour > rent


def test_rent_vs_own_from_catalog_uses_sourced_defaults() -> None:
    from engine.numbers.catalog import prices
    from engine.numbers.cost import rent_vs_own_from_catalog

    p = prices()
    r = rent_vs_own_from_catalog(utilisation=0.5)
    offer = p.default_cloud("h100-sxm")
    buy = p.default_purchase("h100-sxm")
    assert r.rent_usd_per_gpu_hour == offer.usd_per_gpu_hour
    assert r.purchase_usd_per_gpu == pytest.approx(buy.usd / buy.gpu_count)
    assert r.pue == p.pue and r.usd_per_kWh == p.power_usd_per_kWh
    assert r.power_W_per_gpu == pytest.approx(10_200 / 8)  # dgx-1, whole server
    text = " ".join(rent_vs_own_assumptions(r))
    for needle in (offer.date, buy.date, p.power_date, "Uptime"):
        assert needle in text
    # Explicit values override the catalogue and drop its source line.
    mine = rent_vs_own_from_catalog(utilisation=0.5, rent_usd_per_gpu_hour=7.0)
    assert mine.rent_usd_per_gpu_hour == 7.0
    assert offer.date not in " ".join(a for a in rent_vs_own_assumptions(mine) if "Rent" in a)


def test_catalog_wrappers_for_tokens_and_training() -> None:
    from engine.numbers.catalog import prices
    from engine.numbers.cost import (
        cost_per_million_tokens_from_catalog,
        training_run_cost_from_catalog,
    )

    price = prices().default_cloud("h100-sxm").usd_per_gpu_hour
    t = cost_per_million_tokens_from_catalog(tokens_per_s=200)
    assert t.usd_per_million_tokens == pytest.approx(price / (200 * 3600) * 1e6)
    c = training_run_cost_from_catalog(gpus=8, seconds=3600)
    assert c.usd == pytest.approx(8 * price)
    assert any(a.startswith("Source:") for a in cost_assumptions(c))
    with pytest.raises(EngineError):
        training_run_cost_from_catalog(gpus=8, seconds=3600, hardware_id="no-such-chip")
