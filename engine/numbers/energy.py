"""Energy of a workload: the chips' rated power, for as long as they work, times the data
centre's overhead (PUE: the facility's energy over the IT equipment's).

``joules = GPUs x rated power (W) x PUE x seconds``. Assumptions, stated with the result:
every chip draws its rated board power (the catalogue's ``power_W``: the datasheet's maximum,
so this is an upper estimate of the chips' own draw; the host CPUs, memory and network of the
server are not counted, which pulls the other way) and the PUE is the catalogue's industry
average (Uptime Institute 2023: 1.58; hyperscale sites run near 1.1). Serving: the energy of
one output token is the deployment's power divided by the output tokens it makes per second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.numbers.catalog import HardwareSpec, prices
from engine.numbers.records import Record

if TYPE_CHECKING:
    from engine.numbers.plan import Plan

JOULES_PER_WATT_HOUR = 3600.0
JOULES_PER_MEGAWATT_HOUR = 3.6e9


@dataclass(frozen=True, slots=True)
class Power(Record):
    """What a deployment draws from the grid: ``gpus`` chips of ``power_W_per_gpu`` each,
    times ``pue``; ``watts`` is the product."""

    gpus: int
    power_W_per_gpu: float
    pue: float
    pue_source: str
    watts: float

    def joules(self, seconds: float) -> float:
        """Energy over ``seconds`` of work (J)."""
        return self.watts * seconds

    def joules_per_token(self, tokens_per_s: float) -> float:
        """Energy of one token when the deployment makes ``tokens_per_s`` (J per token)."""
        return self.watts / tokens_per_s


def deployment_power(hardware: HardwareSpec, gpus: int, pue: float | None = None
                     ) -> Power | None:
    """The grid power of ``gpus`` chips of ``hardware`` at rated power, times the PUE (the
    catalogue's average unless given: a PUE in :data:`engine.numbers.quantities.PUE`'s range);
    None when the catalogue has no power for the chip."""
    if hardware.power_W is None:
        return None
    catalog = prices()
    factor, source = (catalog.pue, catalog.pue_source) if pue is None else (pue, "given")
    return Power(gpus, hardware.power_W, factor, source, gpus * hardware.power_W * factor)


@dataclass(frozen=True, slots=True)
class PlanEnergy(Record):
    """A plan's energy at rated power: per output token (J) and per answer (Wh) when
    serving, the whole run (MWh) when training; the other task's figures are None."""

    power: Power
    joules_per_output_token: float | None = None
    watt_hours_per_answer: float | None = None
    megawatt_hours: float | None = None


def plan_energy(p: Plan) -> PlanEnergy | None:
    """The energy of plan ``p`` (serving: at its decode rate, the cost's basis; training: for
    its time at the MFU used), or None when the chip's power is not in the catalogue."""
    power = deployment_power(p.hardware, p.gpus)
    if power is None:
        return None
    if p.serve is not None:
        per_token = power.joules_per_token(p.serve.decode_tokens_per_s)
        return PlanEnergy(power, per_token,
                          per_token * p.serve.output_tokens / JOULES_PER_WATT_HOUR)
    assert p.train is not None
    return PlanEnergy(power, megawatt_hours=power.joules(p.train.seconds)
                      / JOULES_PER_MEGAWATT_HOUR)
