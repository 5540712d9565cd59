"""How the simulation names GPUs in its messages ('GPU 3', 'GPUs 0-3'); gigabytes are
engine.words.format.format_GB and counted nouns engine.words.format.plural.
"""

from __future__ import annotations

from collections.abc import Sequence


def gpu_list(indexes: Sequence[int]) -> str:
    if len(indexes) == 1:
        return f"GPU {indexes[0]}"
    if list(indexes) == list(range(indexes[0], indexes[0] + len(indexes))):
        return f"GPUs {indexes[0]}-{indexes[-1]}"
    return "GPUs " + ", ".join(str(i) for i in indexes)
