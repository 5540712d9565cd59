"""The engine's diagrams: every shape and count they label is the engine's own figure."""

from __future__ import annotations

import re

import pytest

from engine.lesson.diagrams.layer import MATRICES, layer_svg
from engine.lesson.diagrams.registry import get_diagram
from engine.numbers.architecture import layer_components
from engine.numbers.catalog import resolve_model
from engine.numbers.errors import EngineError

GROUP_RE = re.compile(r'<g data-component="([\w.]+)">(.*?)</g>', re.S)
TEXT_RE = re.compile(r"<text[^>]*>([^<]*)</text>")


def _labels(drawn: str) -> dict[str, str]:
    """Each drawn weight matrix's label, its lines joined by a space."""
    return {name: " ".join(TEXT_RE.findall(inside)) for name, inside in GROUP_RE.findall(drawn)}


def test_the_layers_matrices_are_labelled_with_the_architectures_shapes() -> None:
    model = resolve_model(model_id="llama-3.1-8b")
    drawn = _labels(layer_svg(model))
    assert set(drawn) == set(MATRICES)
    for c in layer_components(model):
        if c.kind == "matmul":
            assert drawn[c.name].endswith(f"{c.rows:,} × {c.cols:,}"), c.name
    assert drawn["mlp.up"] == "up 4,096 × 14,336"
    assert drawn["attention.k"] == "K 4,096 × 1,024"


def test_the_layer_names_its_heads_width_and_depth_from_the_model() -> None:
    model = resolve_model(model_id="llama-3.1-70b")
    drawn = get_diagram("transformer_layer")(model="llama-3.1-70b")
    assert f"{model.hidden:,} numbers" in drawn
    assert f"{model.heads:,} heads of {model.head_dim:,}, {model.kv_heads:,} K/V heads" in drawn
    assert f"next of {model.layers:,} layers" in drawn
    assert 'role="img"' in drawn and "aria-label=\"One layer of Llama 3.1 70B" in drawn


def test_a_layer_of_another_kind_is_refused_by_name() -> None:
    with pytest.raises(EngineError, match="dense layer") as error:
        get_diagram("transformer_layer")(model="mixtral-8x7b")
    assert error.value.field == "model"
    with pytest.raises(EngineError, match="Unknown diagram"):
        get_diagram("nope")


def test_the_servers_topology_takes_its_counts_and_bandwidths_from_the_catalogue() -> None:
    from engine.numbers.catalog import get_system
    from engine.words.format import format_bandwidth

    server = get_system("dgx-1")
    links = server.gpu.link_spec()
    drawn = get_diagram("server_topology")(system="dgx-1")
    parts = re.findall(r'<g data-part="([\w-]+)">', drawn)
    assert parts.count("network") == parts.count("fabric") == parts.count("pcie") == 1
    assert len([p for p in parts if p.startswith("gpu-")]) == server.gpu_count == 8
    assert len([p for p in parts if p.startswith("nic-")]) == server.gpu_count
    assert len([p for p in parts if p.startswith("cpu-")]) == server.cpu_count == 2
    assert f"{format_bandwidth(links.scale_out_bytes_per_s)} each way each" in drawn
    assert f"{format_bandwidth(links.scale_up_bytes_per_s)} each way per GPU" in drawn
    assert links.scale_up in drawn and "RAM: 2,048 GiB" in drawn
