"""Two plans side by side: the figures a reader weighs (memory, time, cost, energy, what limits
each), the same list for both plans, and each figure's two values with their ratio.

A figure is a number (a ratio is B / A), a yes/no (fits) or a word (what limits the speed);
a figure one plan lacks (no price, no power figure, the other task) is None on that side.
Serving times are the bound and the expected value, each named so; with a load the
simulated p90 latencies and throughput come too. Training: days at the MFU used and
expected, the expected MFU, the run's cost and energy.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.cost import cost_per_million_tokens, training_run_cost
from engine.numbers.energy import plan_energy
from engine.numbers.load.results import LoadResult
from engine.numbers.plan import Plan
from engine.numbers.records import JsonShape, Record
from engine.numbers.units import SECONDS_PER_DAY

FigureValue = float | bool | str | None


@dataclass(frozen=True, slots=True)
class PlanFigure(Record):
    """One figure of a plan: ``name`` (a stable key), ``label`` (for people), ``unit`` ('' for
    a yes/no or a word) and its ``value`` (None where the plan has none)."""

    name: str
    label: str
    unit: str
    value: FigureValue


@dataclass(frozen=True, slots=True)
class Difference(Record):
    """One figure of plans A and B: both values and ``ratio`` B / A (None unless both are
    numbers and A is not 0); ``differs``: the values are not equal."""

    JSON = JsonShape(derived=("differs",))

    name: str
    label: str
    unit: str
    a: FigureValue
    b: FigureValue
    ratio: float | None

    @property
    def differs(self) -> bool:
        return self.a != self.b


@dataclass(frozen=True, slots=True)
class PlanComparison(Record):
    """Every figure of two plans (:class:`Difference` each, in one order for both)."""

    JSON = JsonShape(derived=("differences",))

    figures: tuple[Difference, ...]

    @property
    def differences(self) -> tuple[Difference, ...]:
        """The figures whose values differ."""
        return tuple(f for f in self.figures if f.differs)


def _serve_limit(p: Plan) -> str:
    assert p.serve is not None
    return f"decode: {p.serve.bound}, prefill: {p.serve.prefill.bound}"


def _train_limit(p: Plan) -> str:
    """The largest part of the expected step: compute, exposed communication or the bubble."""
    assert p.train is not None
    e = p.train.expected
    parts = {"compute": e.compute_seconds_per_step,
             "exposed communication": e.exposed_communication_seconds_per_step,
             "pipeline bubble": e.bubble_seconds_per_step}
    return max(parts, key=lambda k: parts[k])


def plan_figures(p: Plan, load: LoadResult | None = None) -> tuple[PlanFigure, ...]:
    """The figures of plan ``p`` (and of its deployment under ``load``, when given)."""
    mem = p.memory
    price = p.usd_per_gpu_hour
    per_hour = None if price is None else price * p.gpus
    energy = plan_energy(p)
    out = [PlanFigure("gpus", "GPUs", "GPUs", p.gpus),
           PlanFigure("fits", "fits in memory", "", mem.fits),
           PlanFigure("memory_per_gpu_gb", "memory per GPU", "GB", mem.per_gpu_bytes / 1e9),
           PlanFigure("capacity_per_gpu_gb", "capacity per GPU", "GB", mem.capacity_bytes / 1e9),
           PlanFigure("usd_per_hour", "cost per hour", "USD", per_hour)]
    if p.serve is not None:
        s = p.serve
        expected_tps = s.replicas * s.expected.output_tokens_per_s

        def per_million(tokens_per_s: float) -> float | None:
            if price is None or tokens_per_s <= 0:
                return None
            return cost_per_million_tokens(tokens_per_s=tokens_per_s, usd_per_gpu_hour=price,
                                           gpus=p.gpus).usd_per_million_tokens

        out += [
            PlanFigure("ttft_seconds", "TTFT (bound)", "s", s.ttft_at_batch_seconds),
            PlanFigure("expected_ttft_seconds", "TTFT (expected)", "s", s.expected.ttft_seconds),
            PlanFigure("tpot_seconds", "time per token (bound)", "s", s.tpot_seconds),
            PlanFigure("expected_tpot_seconds", "time per token (expected)", "s",
                       s.expected.decode_seconds_per_token),
            PlanFigure("output_tokens_per_s", "output tokens/s (bound)", "tokens/s",
                       s.output_tokens_per_s),
            PlanFigure("expected_output_tokens_per_s", "output tokens/s (expected)",
                       "tokens/s", expected_tps),
            PlanFigure("usd_per_million_tokens", "cost per million output tokens (expected)",
                       "USD", per_million(expected_tps)),
            PlanFigure("joules_per_output_token", "energy per output token", "J",
                       None if energy is None else energy.joules_per_output_token),
            PlanFigure("limit", "what limits it", "", _serve_limit(p)),
        ]
        if load is not None:
            out += [
                PlanFigure("load_ttft_p90_seconds", "TTFT p90 under load", "s",
                           load.ttft_seconds.p90),
                PlanFigure("load_tpot_p90_seconds", "time per token p90 under load", "s",
                           load.tpot_seconds.p90),
                PlanFigure("load_output_tokens_per_s", "output tokens/s under load",
                           "tokens/s", load.output_tokens_per_s),
                PlanFigure("load_usd_per_million_tokens",
                           "cost per million output tokens under load", "USD",
                           per_million(load.output_tokens_per_s)),
            ]
    if p.train is not None:
        t = p.train
        e = t.expected
        out += [
            PlanFigure("days", f"days at {t.mfu:.0%} MFU", "days", t.seconds / SECONDS_PER_DAY),
            PlanFigure("expected_days", "days (expected)", "days", e.seconds / SECONDS_PER_DAY),
            PlanFigure("expected_mfu", "MFU (expected)", "", e.mfu),
            PlanFigure("expected_run_usd", "cost of the run (expected)", "USD",
                       None if price is None else training_run_cost(
                           gpus=p.gpus, seconds=e.seconds, usd_per_gpu_hour=price).usd),
            PlanFigure("megawatt_hours", f"energy of the run at {t.mfu:.0%} MFU", "MWh",
                       None if energy is None else energy.megawatt_hours),
            PlanFigure("limit", "what limits it", "", _train_limit(p)),
        ]
    return tuple(out)


def _ratio(a: FigureValue, b: FigureValue) -> float | None:
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    if not numbers or a == 0:
        return None
    assert isinstance(a, (int, float)) and isinstance(b, (int, float))
    return b / a


def compare_plans(a: Plan, b: Plan, *, load_a: LoadResult | None = None,
                  load_b: LoadResult | None = None) -> PlanComparison:
    """Plans ``a`` and ``b`` figure by figure: A's figures in order, then those only B has."""
    fa = {f.name: f for f in plan_figures(a, load_a)}
    fb = {f.name: f for f in plan_figures(b, load_b)}
    names = [*fa, *(n for n in fb if n not in fa)]
    rows = []
    for name in names:
        first = fa.get(name) or fb[name]
        va = fa[name].value if name in fa else None
        vb = fb[name].value if name in fb else None
        rows.append(Difference(name, first.label, first.unit, va, vb, _ratio(va, vb)))
    return PlanComparison(tuple(rows))
