"""The words layer: one formatter per quantity, one label table per choice, one vocabulary of
memory parts, and the catalogue's reference-only flag as the only way to hide a model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.lesson.cluster import deploy, launch_training, new_cluster
from engine.numbers.catalog import list_models
from engine.numbers.errors import EngineError
from engine.numbers.memory import CONVENTIONS, OPTIMIZERS, RECOMPUTE, SHARDINGS
from engine.numbers.plan import TASKS
from engine.registry import get_widget
from engine.render.options import model_options
from engine.words.format import format_bandwidth, format_GB, format_usd
from engine.words.labels import (
    CONVENTION_LABELS,
    OPTIMIZER_LABELS,
    PARTS,
    RECOMPUTE_LABELS,
    SHARDING_LABELS,
    TASK_LABELS,
    part_words,
)


def test_format_GB_one_form_for_every_size() -> None:
    # 128.5e9 bytes printed "128.50 GB", "128.5 GB" or "128 GB" depending on the module.
    assert format_GB(128.5e9) == "128.5 GB"
    assert format_GB(80e9) == "80 GB"
    assert format_GB(16.06e9) == "16.06 GB"
    assert format_GB(0.151e9) == "0.151 GB"
    assert format_GB(1_440e9) == "1,440 GB"


def test_format_bandwidth_four_significant_figures_at_most() -> None:
    # H100 SXM 3.35 TB/s, NVLink 900 GB/s (NVIDIA datasheets); two 307.2 GB/s sockets.
    assert format_bandwidth(3.35e12) == "3.35 TB/s"
    assert format_bandwidth(900e9) == "900 GB/s"
    assert format_bandwidth(2 * 307.2e9) == "614.4 GB/s"
    assert format_bandwidth(8 * 3.35e12) == "26.8 TB/s"
    assert format_bandwidth(1024 * 3.35e12) == "3,430 TB/s"
    assert format_bandwidth(4.8e12) == "4.8 TB/s"


def test_format_usd() -> None:
    assert format_usd(270_000) == "$270,000"
    assert format_usd(12.29) == "$12.29"
    assert format_usd(0.0042) == "$0.0042"


def test_one_label_per_choice_of_every_select() -> None:
    assert set(TASK_LABELS) == set(TASKS)
    assert set(SHARDING_LABELS) == set(SHARDINGS)
    assert set(OPTIMIZER_LABELS) == set(OPTIMIZERS)
    assert set(CONVENTION_LABELS) == set(CONVENTIONS)
    assert set(RECOMPUTE_LABELS) == set(RECOMPUTE)
    # Rajbhandari et al. 2020, section 3.1: mixed precision with Adam keeps 16 bytes.
    assert CONVENTION_LABELS["mixed-16"].endswith("16 bytes per parameter with Adam")


def test_every_widget_offers_the_shared_labels() -> None:
    tables = {"sharding": SHARDING_LABELS, "optimizer": OPTIMIZER_LABELS,
              "convention": CONVENTION_LABELS, "recompute": RECOMPUTE_LABELS}
    seen = set()
    for name in ("five_questions", "playground", "training_at_scale", "launch_training",
                 "train_vs_serve"):
        for control in get_widget(name).controls:
            if control.name in tables and control.options:
                seen.add(control.name)
                for value, label in control.options:
                    assert label == tables[control.name][value], (name, value, label)
    assert seen == set(tables)


def test_one_spelling_optimiser_in_reader_text() -> None:
    texts = [p.label + " " + p.words for p in PARTS.values()]
    texts += [*SHARDING_LABELS.values(), *OPTIMIZER_LABELS.values()]
    assert not [t for t in texts if "ptimizer" in t]
    assert part_words("optimizer_states") == "optimiser states"
    assert part_words("kv_cache") == "KV cache"


def test_reference_only_models_are_hidden_by_the_catalogue_flag() -> None:
    assert "opt-13b" not in {m.id for m in list_models()}
    assert "opt-13b" not in dict(model_options())
    with pytest.raises(EngineError, match="only to check the engine") as deployed:
        deploy(new_cluster(), "opt-13b", gpus=(0,))
    assert deployed.value.field == "model_id"
    with pytest.raises(EngineError, match="only to check the engine"):
        launch_training(new_cluster(), "llama-2-7b", gpus=(0,))


@pytest.mark.parametrize("widget", ["deploy_model", "launch_training"])
def test_dgx_widgets_refuse_reference_only_models(widget: str) -> None:
    w = get_widget(widget)
    with pytest.raises(EngineError):
        w.run({**w.defaults(), "model": "opt-13b"}, "")


def test_the_sharding_phrasebook_says_each_sharding_one_way() -> None:
    from engine.words import sharding as say

    assert [say.sharding_name(s) for s in SHARDINGS] == ["not sharded", "ZeRO-1", "ZeRO-2", "ZeRO-3"]
    assert SHARDING_LABELS["zero2"] == "ZeRO-2: optimiser states and gradients split"
    assert say.sharding_over("zero3", 8) == "ZeRO-3 over the 8 GPUs"
    assert say.sharding_over("zero1", 1) == "on one GPU"
    assert say.sharding_over("none", 4) == "on each GPU (not sharded)"
    assert say.sharding_setting("zero3", 1) == "none (one GPU)"
    assert say.state_sharding("none") == "state not sharded"
    assert say.state_sharding("zero2") == "state sharded with ZeRO-2"
    assert say.parallel_layout("zero3") == "ZeRO-3"
    assert say.parallel_layout("zero3", 8) == "ZeRO-3 and tensor parallel 8"
    assert say.parallel_layout("zero1", 4, 12) == "ZeRO-1, tensor parallel 4 and 12 pipeline stages"
    assert say.parallel_layout("none", 2) == "replicated state and tensor parallel 2"


def test_no_module_but_the_phrasebook_builds_a_sharding_name() -> None:
    # "ZeRO-3" typed in a sentence about ZeRO-3 is prose; a name built from an id is the
    # phrasebook's job, and so is the older "ZeRO stage 3".
    root = Path(__file__).resolve().parents[2] / "engine"
    for path in sorted(root.rglob("*.py")):
        if path == root / "words" / "sharding.py":
            continue
        text = path.read_text()
        assert not re.search(r"ZeRO-\{|ZeRO stage [\d{]", text), path.relative_to(root)
        assert not re.search(r"\{[\w.]*sharding\} sharding", text), path.relative_to(root)
