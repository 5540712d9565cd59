"""Prices with their dates and sources: cloud GPU-hours, purchases, power, PUE (USD)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from engine.numbers.catalog._data import load
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record


@dataclass(frozen=True, slots=True)
class CloudPrice(Record):
    """One cloud offer: USD per GPU-hour on ``date`` (ISO), from ``source``; ``superseded``
    says what replaced it when it no longer stands (empty while it does)."""

    provider: str
    offer: str
    hardware: str
    usd_per_gpu_hour: float
    date: str
    source: str
    confidence: str = "medium"
    default: bool = False
    superseded: str = ""

    def __post_init__(self) -> None:
        if not self.usd_per_gpu_hour > 0:
            raise EngineError(f"Cloud price for {self.offer!r} must be > 0.")
        if self.superseded and self.default:
            raise EngineError(f"Cloud price for {self.offer!r} is superseded: it cannot be a default.")

    @property
    def current(self) -> bool:
        """Whether the price still stands (nothing has superseded it)."""
        return not self.superseded


@dataclass(frozen=True, slots=True)
class PurchasePrice(Record):
    """One purchase estimate in USD for ``gpu_count`` GPUs of ``hardware``."""

    JSON = JsonShape(derived=("usd_per_gpu",))

    item: str
    hardware: str
    gpu_count: int
    usd: float
    date: str
    source: str
    system: str = ""
    confidence: str = "medium"
    default: bool = False

    def __post_init__(self) -> None:
        if not self.usd > 0 or self.gpu_count < 1:
            raise EngineError(f"Purchase price for {self.item!r} must be > 0.")

    @property
    def usd_per_gpu(self) -> float:
        return self.usd / self.gpu_count


@dataclass(frozen=True, slots=True)
class Prices(Record):
    """Every price of the catalogue, plus power (USD/kWh) and PUE (ratio)."""

    cloud: tuple[CloudPrice, ...]
    purchases: tuple[PurchasePrice, ...]
    power_usd_per_kWh: float
    power_date: str
    power_source: str
    pue: float
    pue_source: str
    pue_hyperscale: float
    pue_hyperscale_source: str
    overhead_fraction_per_year: float  # facility, network, staff: share of the purchase a year
    overhead_date: str
    overhead_source: str

    def cloud_for(self, hardware_id: str) -> tuple[CloudPrice, ...]:
        """Every cloud offer for ``hardware_id``, superseded ones included."""
        return tuple(p for p in self.cloud if p.hardware == hardware_id)

    def default_cloud(self, hardware_id: str) -> CloudPrice:
        """The engine's usual cloud price for ``hardware_id`` (a current one); EngineError if
        none."""
        offers = tuple(p for p in self.cloud_for(hardware_id) if p.current)
        for p in offers:
            if p.default:
                return p
        if offers:
            return offers[0]
        known = sorted({p.hardware for p in self.cloud})
        raise EngineError(
            f"No cloud price in the catalogue for {hardware_id!r}; priced: {', '.join(known)}. "
            "Type a price per GPU-hour instead.", "usd_per_gpu_hour")

    def default_purchase(self, hardware_id: str) -> PurchasePrice:
        """The engine's usual purchase estimate for ``hardware_id``; EngineError if none."""
        offers = [p for p in self.purchases if p.hardware == hardware_id]
        for p in offers:
            if p.default:
                return p
        if offers:
            return offers[0]
        raise EngineError(f"No purchase price in the catalogue for {hardware_id!r}.", "usd")


@cache
def prices() -> Prices:
    """The catalogue's prices (loaded once)."""
    data = load("prices")
    return Prices(
        cloud=tuple(CloudPrice(**{k: v for k, v in c.items()}) for c in data["cloud"]),
        purchases=tuple(PurchasePrice(**p) for p in data["purchase"]),
        power_usd_per_kWh=float(data["power"]["usd_per_kWh"]),
        power_date=str(data["power"]["date"]),
        power_source=data["power"]["source"],
        pue=float(data["pue"]["value"]),
        pue_source=data["pue"]["source"],
        pue_hyperscale=float(data["pue"]["hyperscale_value"]),
        pue_hyperscale_source=data["pue"]["hyperscale_source"],
        overhead_fraction_per_year=float(data["overhead"]["fraction_of_purchase_per_year"]),
        overhead_date=str(data["overhead"]["date"]),
        overhead_source=data["overhead"]["source"],
    )
