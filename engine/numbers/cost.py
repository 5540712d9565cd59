"""What it costs: renting against owning, cost per million tokens, cost of a training run.

All money is in US dollars; prices per GPU-hour are per GPU per hour of wall-clock time.
The core functions take every number explicitly, so they depend on nothing else; the
``*_from_catalog`` wrappers fill the defaults from :func:`engine.numbers.catalog.prices` and name
the catalogue entries they used in the result (``catalog``), so that engine.words.cost_explained can put
each price's source and date into the result's assumptions. The verdicts, the arithmetic and
the assumptions in words are engine.words.cost_explained's.

The functions trust their inputs: each is a number in its :mod:`engine.numbers.quantities`
range (a positive price, GPU count, depreciation period and utilisation), checked where it
entered (the own_vs_rent widget's fields, plan()'s price, a figure's keywords).

The owning model, per GPU (each an assumption stated in the result):

- capital: purchase price spread evenly over ``years`` (straight-line depreciation, no
  resale value, no interest), paid whether the GPU is busy or idle;
- overhead: hosting, staff, networking and maintenance as a fraction of the purchase price
  per year (0 by default: not included unless you say so), also paid busy or idle;
- power: ``power_W x PUE x price per kWh`` for each busy hour; idle draw ignored.

Renting is billed only for the hours used (on-demand). So owning costs
``(capital + overhead) / utilisation + power`` per *used* GPU-hour, which falls as
utilisation rises; owning is cheaper above the break-even utilisation
``(capital + overhead) / (rent - power)`` per hour.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.catalog import CloudPrice, HardwareSpec, PurchasePrice, SystemSpec
from engine.numbers.errors import EngineError
from engine.numbers.records import Record
from engine.numbers.units import HOURS_PER_YEAR, SECONDS_PER_HOUR

# Owned and rented costs within this share of each other are a tie, break-even: the prices,
# the overhead share and the years of use are none of them known to 1 %.
BREAK_EVEN_TIE = 0.01


@dataclass(frozen=True, slots=True)
class CatalogPrices(Record):
    """Which catalogue entries a ``*_from_catalog`` wrapper used for the prices not given:
    the cloud offer, the purchase, the power figure (a whole system's, or else one GPU's
    rating), and whether the PUE, the electricity price and the yearly overhead are the
    catalogue's."""

    rent: CloudPrice | None = None
    purchase: PurchasePrice | None = None
    power_system: SystemSpec | None = None
    power_gpu: HardwareSpec | None = None
    pue: bool = False
    electricity: bool = False
    overhead: bool = False


@dataclass(frozen=True, slots=True)
class RentVsOwn(Record):
    """Owning against renting one GPU, per GPU. Money in USD; hours are GPU-hours.

    capital_usd_per_hour and overhead_usd_per_hour are paid every wall-clock hour;
    power_usd_per_busy_hour only while busy. owned_usd_per_used_gpu_hour =
    (capital + overhead) / utilisation + power. break_even_utilisation is None when owning
    is never cheaper (even at 100 %). curve: (utilisation, owned USD per used GPU-hour) at
    5 %, 10 %, ... 100 %, for a chart against the flat rental price. purchase_usd and power_W
    are the whole purchase's, holding ``gpus`` GPUs. sources: the caller's lines naming where
    the prices come from; catalog: the catalogue entries used for the prices not given.
    """

    rent_usd_per_gpu_hour: float
    purchase_usd: float
    power_W: float
    gpus: int
    purchase_usd_per_gpu: float
    years: float
    power_W_per_gpu: float
    pue: float
    usd_per_kWh: float
    utilisation: float
    overhead_fraction_per_year: float
    capital_usd_per_hour: float
    overhead_usd_per_hour: float
    power_usd_per_busy_hour: float
    owned_usd_per_hour: float
    owned_usd_per_used_gpu_hour: float
    used_gpu_hours_per_year: float
    owned_usd_per_year: float
    rented_usd_per_year: float
    cheaper: str
    break_even_utilisation: float | None
    curve: tuple[tuple[float, float], ...]
    sources: tuple[str, ...]
    catalog: CatalogPrices | None = None

    @property
    def fixed_usd_per_hour(self) -> float:
        """What owning one GPU costs every wall-clock hour, busy or idle: capital plus
        overhead (USD per GPU per hour)."""
        return self.capital_usd_per_hour + self.overhead_usd_per_hour


def _owned_per_used_hour(fixed_per_hour: float, power_per_hour: float, u: float) -> float:
    return fixed_per_hour / u + power_per_hour


def rent_vs_own(
    *,
    rent_usd_per_gpu_hour: float,
    purchase_usd: float,
    years: float,
    power_W: float,
    pue: float,
    usd_per_kWh: float,
    utilisation: float,
    gpus: int = 1,
    overhead_fraction_per_year: float = 0.0,
    sources: tuple[str, ...] = (),
    catalog: CatalogPrices | None = None,
) -> RentVsOwn:
    """Compare owning with renting, per GPU.

    rent_usd_per_gpu_hour: cloud price per GPU-hour (USD). purchase_usd: price of the
    purchase (USD), holding ``gpus`` GPUs (e.g. one 8-GPU server). years: depreciation period.
    power_W: power of the purchase while busy (W), all ``gpus`` together. pue: data-centre
    power usage effectiveness (>= 1). usd_per_kWh: electricity price. utilisation: share of
    the hours the GPUs do useful work (fraction). overhead_fraction_per_year: hosting, staff
    and maintenance per year as a fraction of the purchase price. sources: lines naming where
    the prices come from, copied into the assumptions. catalog: the catalogue entries used
    (see :func:`rent_vs_own_from_catalog`).
    """
    rent, u = rent_usd_per_gpu_hour, utilisation
    per_gpu = purchase_usd / gpus
    power_per_gpu = power_W / gpus
    capital = per_gpu / (years * HOURS_PER_YEAR)
    overhead_hour = per_gpu * overhead_fraction_per_year / HOURS_PER_YEAR
    fixed = capital + overhead_hour
    power_hour = power_per_gpu / 1000.0 * pue * usd_per_kWh
    owned_used = _owned_per_used_hour(fixed, power_hour, u)
    used_hours = u * HOURS_PER_YEAR

    break_even: float | None = None
    if rent > power_hour:
        candidate = fixed / (rent - power_hour)
        if candidate <= 1.0:
            break_even = candidate

    if abs(owned_used - rent) <= BREAK_EVEN_TIE * max(rent, owned_used):
        cheaper = "same"
    else:
        cheaper = "own" if owned_used < rent else "rent"

    curve = tuple(
        (k / 20, _owned_per_used_hour(fixed, power_hour, k / 20)) for k in range(1, 21)
    )
    return RentVsOwn(
        rent_usd_per_gpu_hour=rent, purchase_usd=purchase_usd, power_W=power_W, gpus=gpus,
        purchase_usd_per_gpu=per_gpu, years=years,
        power_W_per_gpu=power_per_gpu, pue=pue, usd_per_kWh=usd_per_kWh, utilisation=u,
        overhead_fraction_per_year=overhead_fraction_per_year, capital_usd_per_hour=capital,
        overhead_usd_per_hour=overhead_hour, power_usd_per_busy_hour=power_hour,
        owned_usd_per_hour=fixed + u * power_hour, owned_usd_per_used_gpu_hour=owned_used,
        used_gpu_hours_per_year=used_hours, owned_usd_per_year=owned_used * used_hours,
        rented_usd_per_year=rent * used_hours, cheaper=cheaper,
        break_even_utilisation=break_even, curve=curve, sources=tuple(sources), catalog=catalog,
    )


@dataclass(frozen=True, slots=True)
class TokenCost(Record):
    """Cost of generating tokens: usd_per_million_tokens = hourly cost / (tokens/s x
    utilisation x 3600) x 10^6. tokens_per_s is the whole deployment's output."""

    tokens_per_s: float
    usd_per_gpu_hour: float
    gpus: int
    utilisation: float
    usd_per_hour: float
    tokens_per_hour: float
    usd_per_million_tokens: float
    sources: tuple[str, ...]
    catalog: CatalogPrices | None = None


def cost_per_million_tokens(
    *,
    tokens_per_s: float,
    usd_per_gpu_hour: float,
    gpus: int = 1,
    utilisation: float = 1.0,
    sources: tuple[str, ...] = (),
    catalog: CatalogPrices | None = None,
) -> TokenCost:
    """USD per million tokens served.

    tokens_per_s: tokens per second the whole deployment produces while busy (all requests,
    all ``gpus`` together). usd_per_gpu_hour: price (or owned cost) per GPU-hour, paid every
    hour. utilisation: share of the paid hours the deployment is producing at that rate.
    """
    per_hour = usd_per_gpu_hour * gpus
    tokens_hour = tokens_per_s * utilisation * SECONDS_PER_HOUR
    per_million = per_hour / tokens_hour * 1e6
    return TokenCost(
        tokens_per_s=tokens_per_s, usd_per_gpu_hour=usd_per_gpu_hour, gpus=gpus,
        utilisation=utilisation, usd_per_hour=per_hour, tokens_per_hour=tokens_hour,
        usd_per_million_tokens=per_million, sources=tuple(sources), catalog=catalog,
    )


@dataclass(frozen=True, slots=True)
class TrainingCost(Record):
    """Cost of a training run: gpu_hours = gpus x seconds / 3600; usd = gpu_hours x price."""

    gpus: int
    seconds: float
    usd_per_gpu_hour: float
    gpu_hours: float
    usd: float
    sources: tuple[str, ...]
    catalog: CatalogPrices | None = None


def training_run_cost(
    *,
    gpus: int,
    seconds: float,
    usd_per_gpu_hour: float,
    sources: tuple[str, ...] = (),
    catalog: CatalogPrices | None = None,
) -> TrainingCost:
    """USD for ``gpus`` GPUs held for ``seconds`` of wall-clock time at ``usd_per_gpu_hour``.

    Pass the run's whole wall-clock time (start-up and checkpoint pauses included: the GPUs
    are billed through them), e.g. ``TrainingRun.total_seconds``.
    """
    hours = gpus * seconds / SECONDS_PER_HOUR
    return TrainingCost(gpus=gpus, seconds=seconds, usd_per_gpu_hour=usd_per_gpu_hour,
                        gpu_hours=hours, usd=hours * usd_per_gpu_hour, sources=tuple(sources),
                        catalog=catalog)


# ------------------------------------------------------------------ catalogue defaults

DEFAULT_YEARS = 4.0  # an illustrative depreciation period, not a sourced figure


@dataclass(frozen=True, slots=True)
class BreakEvenSpread(Record):
    """How far the break-even utilisation moves over a range of purchase prices and rents,
    the rest of a :class:`RentVsOwn` held: ``low`` at the cheapest purchase and the dearest
    rent, ``high`` at the dearest purchase and the cheapest rent (fractions; None where
    owning never pays). Prices in USD for the same purchase (``gpus`` GPUs) and per
    GPU-hour."""

    purchase_usd_low: float
    purchase_usd_high: float
    rent_usd_per_gpu_hour_low: float
    rent_usd_per_gpu_hour_high: float
    low: float | None
    high: float | None


def break_even_spread(r: RentVsOwn, purchases_usd: tuple[float, ...],
                      rents_usd_per_gpu_hour: tuple[float, ...]) -> BreakEvenSpread:
    """The break-even of ``r`` at the corners of the given prices (each a non-empty tuple of
    positive USD figures): the break-even falls as the rent rises and grows with the price
    paid, so its extremes are at two corners."""
    buy_low, buy_high = min(purchases_usd), max(purchases_usd)
    rent_low, rent_high = min(rents_usd_per_gpu_hour), max(rents_usd_per_gpu_hour)

    def at(purchase: float, rent: float) -> float | None:
        return rent_vs_own(
            rent_usd_per_gpu_hour=rent, purchase_usd=purchase, years=r.years, power_W=r.power_W,
            pue=r.pue, usd_per_kWh=r.usd_per_kWh, utilisation=r.utilisation, gpus=r.gpus,
            overhead_fraction_per_year=r.overhead_fraction_per_year,
        ).break_even_utilisation

    return BreakEvenSpread(
        purchase_usd_low=buy_low, purchase_usd_high=buy_high,
        rent_usd_per_gpu_hour_low=rent_low, rent_usd_per_gpu_hour_high=rent_high,
        low=at(buy_low, rent_high), high=at(buy_high, rent_low),
    )


def rent_vs_own_from_catalog(
    *,
    hardware_id: str = "h100-sxm",
    utilisation: float = 0.5,
    years: float = DEFAULT_YEARS,
    overhead_fraction_per_year: float | None = None,
    rent_usd_per_gpu_hour: float | None = None,
    purchase_usd: float | None = None,
    gpus: int | None = None,
    power_W: float | None = None,
    pue: float | None = None,
    usd_per_kWh: float | None = None,
) -> RentVsOwn:
    """:func:`rent_vs_own` with every price not given taken from the catalogue: the default
    cloud offer and purchase for ``hardware_id``, US industrial power and the industry
    average PUE, and the yearly overhead (facility, network, staff) of a published data-centre
    cost model. Power is the whole system's (CPUs, fans, network included) when the
    purchase is a catalogue system such as dgx-1, otherwise the GPUs' own rating. Each
    default used is named in the result's ``catalog`` (its date and source go into the
    assumptions)."""
    from engine.numbers.catalog import get_hardware, get_system, prices

    p = prices()
    hw = get_hardware(hardware_id)
    rent_offer = purchase = power_system = power_gpu = None
    if rent_usd_per_gpu_hour is None:
        rent_offer = p.default_cloud(hw.id)
        rent_usd_per_gpu_hour = rent_offer.usd_per_gpu_hour
    if purchase_usd is None:
        purchase = p.default_purchase(hw.id)
        purchase_usd = purchase.usd
        if gpus is None:
            gpus = purchase.gpu_count
    if gpus is None:
        gpus = 1
    if power_W is None:
        if purchase is not None and purchase.system:
            power_system = get_system(purchase.system)
            power_W = power_system.power_W * gpus / power_system.gpu_count
        elif hw.power_W is not None:
            power_gpu = hw
            power_W = hw.power_W * gpus
        else:
            raise EngineError(f"No power figure in the catalogue for {hw.name}; type one.",
                              "power_W")
    catalog = CatalogPrices(rent=rent_offer, purchase=purchase, power_system=power_system,
                            power_gpu=power_gpu, pue=pue is None,
                            electricity=usd_per_kWh is None,
                            overhead=overhead_fraction_per_year is None)
    if overhead_fraction_per_year is None:
        overhead_fraction_per_year = p.overhead_fraction_per_year
    return rent_vs_own(
        rent_usd_per_gpu_hour=rent_usd_per_gpu_hour, purchase_usd=purchase_usd, years=years,
        power_W=power_W, pue=p.pue if pue is None else pue,
        usd_per_kWh=p.power_usd_per_kWh if usd_per_kWh is None else usd_per_kWh,
        utilisation=utilisation, gpus=gpus,
        overhead_fraction_per_year=overhead_fraction_per_year, catalog=catalog,
    )


def _default_rent(hardware_id: str) -> CloudPrice:
    from engine.numbers.catalog import get_hardware, prices

    return prices().default_cloud(get_hardware(hardware_id).id)


def cost_per_million_tokens_from_catalog(
    *,
    tokens_per_s: float,
    hardware_id: str = "h100-sxm",
    gpus: int = 1,
    utilisation: float = 1.0,
) -> TokenCost:
    """:func:`cost_per_million_tokens` at the catalogue's default cloud price for
    ``hardware_id`` (named in ``catalog``; dated and sourced in the assumptions)."""
    offer = _default_rent(hardware_id)
    return cost_per_million_tokens(tokens_per_s=tokens_per_s,
                                   usd_per_gpu_hour=offer.usd_per_gpu_hour, gpus=gpus,
                                   utilisation=utilisation, catalog=CatalogPrices(rent=offer))


def training_run_cost_from_catalog(
    *, gpus: int, seconds: float, hardware_id: str = "h100-sxm"
) -> TrainingCost:
    """:func:`training_run_cost` at the catalogue's default cloud price for ``hardware_id``."""
    offer = _default_rent(hardware_id)
    return training_run_cost(gpus=gpus, seconds=seconds, usd_per_gpu_hour=offer.usd_per_gpu_hour,
                             catalog=CatalogPrices(rent=offer))
