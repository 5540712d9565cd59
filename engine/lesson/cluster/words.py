"""How the simulation writes its figures into messages: gigabytes at the precision the lesson
quotes and GPU lists ('GPU 3', 'GPUs 0-3'); counted nouns are engine.words.format.plural.
"""

from __future__ import annotations

from collections.abc import Sequence


def _gb(n_bytes: float) -> str:
    """'128.5 GB', '16.06 GB', '0.15 GB': the precision the lesson quotes."""
    value = n_bytes / 1e9
    if value == round(value):
        return f"{value:,.0f} GB"
    return f"{value:,.1f} GB" if abs(value) >= 100 else f"{value:,.2f} GB"


def gpu_list(indexes: Sequence[int]) -> str:
    if len(indexes) == 1:
        return f"GPU {indexes[0]}"
    if list(indexes) == list(range(indexes[0], indexes[0] + len(indexes))):
        return f"GPUs {indexes[0]}-{indexes[-1]}"
    return "GPUs " + ", ".join(str(i) for i in indexes)
