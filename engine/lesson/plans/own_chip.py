"""The playground's "Your own chip": a hardware choice with a small form (memory, dense peaks
by format, bandwidth; the price is the plan's own field), read into the same chip the command line's ``--hardware-spec`` reads.

The form's fields are shown, and read, only while that choice is made (docs/css/lesson.css
hides them otherwise). The figures become the
spec JSON :func:`spec_of` writes, read by
:func:`engine.numbers.catalog.user_hardware.user_hardware_from_dict`, so the browser and the
command line run the same check; the page shows that JSON for ``--hardware-spec``.
"""

from __future__ import annotations

import json

from engine.lesson.plans.fields import OWN_CHIP, PLAN_FIELDS
from engine.numbers import quantities
from engine.numbers.catalog.user_hardware import UserHardware, user_hardware_from_dict
from engine.render.fields import Amount, Choice, Field, OptionalAmount, Values

OWN_CHIP_LABEL = "Your own chip (type its figures)"
OWN_CHIP_NAME = "Your chip"
_OWN_HINT = "Your own chip."
# The playground's hardware select: the catalogue's chips, and the reader's own.
_HARDWARE = PLAN_FIELDS["hardware"]
HARDWARE_OR_OWN = Choice(_HARDWARE.name, _HARDWARE.label, _HARDWARE.default,
                         options=(*_HARDWARE.options, (OWN_CHIP, OWN_CHIP_LABEL)))
CHIP_MEMORY = Amount("chip_memory", "Memory", "24", unit="GB",
                     quantity=quantities.CHIP_MEMORY_GB,
                     hint=f"{_OWN_HINT} What a program can allocate, 10^9 bytes.")
CHIP_BANDWIDTH = Amount("chip_bandwidth", "Memory bandwidth", "1", unit="TB/s",
                        quantity=quantities.CHIP_BANDWIDTH_TB_PER_S, hint=_OWN_HINT)
CHIP_BF16 = Amount("chip_bf16", "Dense BF16 peak", "165", unit="TFLOP/s",
                   quantity=quantities.CHIP_PEAK_TFLOP_PER_S, hint=_OWN_HINT)
_OPTIONAL = f"{_OWN_HINT} Empty: none (its maths runs at the BF16 rate)."
CHIP_FP8 = OptionalAmount("chip_fp8", "Dense FP8 peak", "", unit="TFLOP/s",
                          quantity=quantities.CHIP_PEAK_TFLOP_PER_S, hint=_OPTIONAL)
CHIP_INT8 = OptionalAmount("chip_int8", "Dense INT8 peak", "", unit="TOP/s",
                           quantity=quantities.CHIP_PEAK_TFLOP_PER_S, hint=_OPTIONAL)
CHIP_FP4 = OptionalAmount("chip_fp4", "Dense FP4 peak", "", unit="TFLOP/s",
                          quantity=quantities.CHIP_PEAK_TFLOP_PER_S, hint=_OPTIONAL)
CHIP_FIELDS: tuple[Field[float] | Field[float | None], ...] = (
    CHIP_MEMORY, CHIP_BANDWIDTH, CHIP_BF16, CHIP_FP8, CHIP_INT8, CHIP_FP4)
_OPTIONAL_PEAKS = (("fp8", CHIP_FP8), ("int8", CHIP_INT8), ("fp4", CHIP_FP4))


def spec_of(values: Values) -> dict[str, object]:
    """The hardware spec the form's figures make (the JSON ``--hardware-spec`` reads)."""
    peaks = {"bf16": values[CHIP_BF16]}
    for key, f in _OPTIONAL_PEAKS:
        given = values[f]
        if given is not None:
            peaks[key] = given
    return {"name": OWN_CHIP_NAME, "memory_GB": values[CHIP_MEMORY],
            "bandwidth_TB_per_s": values[CHIP_BANDWIDTH], "peak_TFLOP_per_s": peaks}


def own_chip(values: Values) -> UserHardware | None:
    """The reader's own chip when the hardware select names it, else None (its fields are
    then neither read nor checked)."""
    if values[HARDWARE_OR_OWN] != OWN_CHIP:
        return None
    return user_hardware_from_dict(spec_of(values), source="the playground's form")


def spec_text(values: Values) -> str:
    """The form's chip as the text of the file the command line names (``my-chip.json``)."""
    return json.dumps(spec_of(values), indent=1)
