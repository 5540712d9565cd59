"""The "Going further" widgets: defaults, options and hostile inputs, each number
checked against the engine function that owns it."""

from __future__ import annotations

import pytest
from widget_text import render, text_of

from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.registry import get_widget
from engine.words.format import format_seconds

HOSTILE = '<script>alert("x")</script>'


def _cluster_plan(**kw: object) -> dict:
    args: dict[str, object] = {"model": "llama-3.1-70b", "hardware": "h100-sxm",
                               "task": "train", "nodes": 256, "tp": 8, "pp": 4,
                               "seq_len": 8192, "sharding": "zero1", "tokens": 1e12}
    args.update(kw)
    return plan_to_dict(plan(**args))["train"]  # type: ignore[return-value]


def test_cluster_training_defaults_show_the_engines_split():
    words = text_of(render("cluster_training"))
    step = _cluster_plan()["expected"]["step"]
    assert "2,048 GPUs in 256 servers as 64 data-parallel copies × tensor parallel 8 × 4 " \
        "pipeline stages" in words
    # The bar's parts (the optimiser step among them) are the whole step.
    for key in ("compute_seconds", "exposed_communication_seconds", "bubble_seconds",
                "optimizer_seconds"):
        assert format_seconds(step[key]) in words
    assert f"{format_seconds(step['seconds'])} expected" in words
    # 8 micro-batches (4,194,304 / (64 x 8,192)) over 4 stages: 3/11 of the pipeline idle.
    assert "Micro-batches per step, each pipeline 8," in words
    assert "it fits" in words


def test_cluster_training_options_change_the_bubble():
    # Interleaving (2 chunks per GPU) halves the bubble; more stages grow it.
    plain = _cluster_plan()["expected"]["step"]["bubble_seconds"]
    two = _cluster_plan(interleave=2)["expected"]["step"]["bubble_seconds"]
    assert format_seconds(two) in text_of(render("cluster_training", interleave="2"))
    assert two < plain
    words = text_of(render("cluster_training", model="llama-3.1-405b", servers="2048",
                           pp="16", global_batch="16777216"))
    assert "16,384 GPUs in 2,048 servers" in words and "Layers per stage 8 of 126" in words


def test_cluster_training_takes_context_parallelism_and_fp8():
    # cp = 2 splits each sequence over two GPUs: half the data-parallel copies, same GPUs.
    words = text_of(render("cluster_training", cp="2"))
    assert "32 data-parallel copies" in words and "2 context-parallel GPUs per sequence" in words
    fp8 = text_of(render("cluster_training", precision="fp8"))
    bf16 = _cluster_plan()["expected"]
    assert fp8 != text_of(render("cluster_training"))
    assert format_seconds(bf16["step"]["seconds"]) not in fp8.split("expected")[0]


@pytest.mark.parametrize(("overrides", "field"), [
    ({"cp": "3"}, "cp"),
    ({"precision": HOSTILE}, "precision"),
    ({"pp": "3"}, "pp"),  # 2,048 GPUs / (8 x 3) is not whole
    ({"pp": "81"}, "pp"),  # more stages than 80 layers
    ({"servers": "0"}, "servers"),
    ({"servers": "1e9"}, "servers"),
    ({"servers": HOSTILE}, "servers"),
    ({"tp": "16"}, "tp"),
    ({"interleave": "100"}, "interleave"),
    ({"pp": "32", "interleave": "4"}, "interleave"),  # 128 chunks for 80 layers
    ({"global_batch": "-5"}, "global_batch"),
    ({"model": HOSTILE}, "model"),
])
def test_cluster_training_refuses_what_cannot_work(overrides, field):
    with pytest.raises(EngineError) as e:
        render("cluster_training", **overrides)
    assert e.value.field in (field, "nodes")
    assert e.value.message


# ------------------------------------------------------------------ links


def test_links_shows_each_hop_and_how_many_times_slower():
    from engine.numbers.hops import hops

    words = text_of(render("links"))
    h100 = {h.kind: h for h in hops(get_hardware("h100-sxm"))}
    # H100 SXM: 3.35 TB/s of HBM3 (datasheet); NVLink 450 GB/s each way, NDR 50 GB/s
    # (links.toml): 3,350 / 450 = 7.4 and 3,350 / 50 = 67 times slower.
    assert h100["scale_up"].times_slower == pytest.approx(3350 / 450)
    assert h100["scale_out"].times_slower == pytest.approx(67.0)
    assert "450 GB/s, 7.4 × slower than memory" in words
    assert "50 GB/s, 67 × slower than memory" in words
    # The L40S has no NVLink: inside the server it goes over PCIe Gen4 (32 GB/s each way).
    assert "PCIe Gen4 x16 (no NVLink): 32 GB/s, 27 × slower than memory" in words


def test_links_pcie_hop_for_bridged_cards_and_hostile_input():
    words = text_of(render("links", hardware="h100-pcie", other="rtx-4090"))
    assert "PCIe to the other cards: 64 GB/s" in words
    with pytest.raises(EngineError) as e:
        render("links", other=HOSTILE)
    assert e.value.field == "other"


# ------------------------------------------------------------------ three roofs


def test_three_roofs_l40s_turns_communication_bound_h100_does_not():
    from engine.numbers.expected_serving import decode_parts

    l40s = text_of(render("roofline_three_roofs"))
    first = next(b for b in (2**i for i in range(10)) if decode_parts(
        get_model("llama-3.1-70b"), get_hardware("l40s"), context_tokens=1024, batch=b, gpus=8).limit == "communication")
    assert f"the all-reduces overtake the other roofs from a batch of {first}" in l40s
    h100 = text_of(render("roofline_three_roofs", hardware="h100-sxm"))
    assert "the all-reduces stay below the memory time up to a batch of 512" in h100


def test_three_roofs_four_gpus_are_not_four_times_faster():
    from engine.numbers.expected_serving import decode_parts, expected_decode_step_seconds

    one = decode_parts(get_model("llama-3.1-70b"), get_hardware("h100-sxm"), context_tokens=1024, gpus=1)
    four = decode_parts(get_model("llama-3.1-70b"), get_hardware("h100-sxm"), context_tokens=1024, gpus=4)
    assert four.seconds == pytest.approx(expected_decode_step_seconds(
        get_model("llama-3.1-70b"), get_hardware("h100-sxm"), context_tokens=1024, gpus=4))
    assert 1 < one.seconds / four.seconds < 4
    words = text_of(render("roofline_three_roofs", hardware="h100-sxm", gpus="4"))
    assert f"{one.seconds / four.seconds:.1f} × faster, not 4 ×" in words
    assert format_seconds(four.communication_seconds) in words


@pytest.mark.parametrize(("overrides", "field"), [
    ({"gpus": "3"}, "gpus"),  # 64 heads do not split 3 ways
    ({"gpus": "16"}, "gpus"),
    ({"context": "-1"}, "context"),
    ({"context": HOSTILE}, "context"),
    ({"hardware": HOSTILE}, "hardware"),
])
def test_three_roofs_refuses_bad_input(overrides, field):
    with pytest.raises(EngineError) as e:
        render("roofline_three_roofs", **overrides)
    assert e.value.field == field


# ------------------------------------------------------------------ parallelism picture


def test_parallelism_picture_shows_the_engines_traffic():
    p = plan(model="llama-3.1-70b", hardware="h100-sxm", task="train", nodes=64, tp=8, pp=4,
             seq_len=8192, sharding="zero1", tokens=1e12)
    assert p.train is not None
    traffic = {x.strategy: x for x in p.train.expected.traffic}
    assert set(traffic) == {"data", "tensor", "pipeline"}
    # Tensor parallel by hand: 4 all-reduces x 20 layers per stage x 32 micro-batches
    # (4,194,304 tokens / (16 copies x 8,192 tokens)) x 8,192 tokens x 8,192 hidden x 2 bytes.
    micro = 4194304 // (16 * 8192)
    assert micro == 32
    assert traffic["tensor"].bytes_per_step == 4 * 20 * micro * 8192 * 8192 * 2
    # Gradients: the parameters / tensor parallel 8 x the stage's 20 of 80 layers x 2 bytes.
    assert traffic["data"].bytes_per_step == pytest.approx(
        p.model.params / 8 * 20 / 80 * 2)
    from engine.words.format import format_bytes

    words = text_of(render("parallelism_picture"))
    for x in traffic.values():
        assert format_bytes(x.bytes_per_step) in words
    assert "Expert parallel 1 the experts of each mixture-of-experts layer nothing: not used" \
        in words


def test_parallelism_picture_experts_and_refusals():
    words = text_of(render("parallelism_picture", model="deepseek-v3", servers="256"))
    assert "each token to its experts and back (all-to-all)" in words
    assert "no pipeline bubble" in text_of(render("parallelism_picture", pp="1"))
    for overrides, field in (({"tp": "16"}, "tp"), ({"pp": "7"}, "pp"),
                             ({"servers": "-2"}, "servers")):
        with pytest.raises(EngineError) as e:
            render("parallelism_picture", **overrides)
        assert e.value.field in (field, "nodes")


# ------------------------------------------------------------------ the pod drill


def test_pod_drill_by_hand():
    from engine.lesson.drills import cluster_memory as drill_cluster
    q = drill_cluster._fallback(1)
    # Llama 3.1 70B on 32 H100s, TP 8 x PP 2 x DP 2, Adam in mixed precision with ZeRO-1:
    # 70,553,706,496 / 16 parameters per GPU x (2 + 2 bytes + 12 bytes / 2 copies).
    assert q.answer_bytes == pytest.approx(70_553_706_496 / 16 * (4 + 12 / 2))
    slips = {k: v for k, v, _ in q.typical_wrong_answers()}
    assert slips["forgot_pp"] == pytest.approx(70_553_706_496 / 8 * (4 + 12 / 2))
    assert slips["not_sharded"] == pytest.approx(70_553_706_496 / 16 * 16)
    right = drill_cluster.check_answer(q, f"{q.answer_GB:.3f}", "yes")
    assert right.correct
    wrong = drill_cluster.check_answer(q, f"{slips['forgot_pp'] / 1e9:.3f}", "yes")
    assert not wrong.correct and wrong.mistake == "forgot_pp"


def test_pod_drill_questions_are_reproducible_and_well_posed():
    from engine.lesson.drills import cluster_memory as drill_cluster
    for seed in range(1, 60):
        q = drill_cluster.pod_memory_question(seed)
        assert q == drill_cluster.pod_memory_question(seed)
        m = q.memory
        assert m.gpus == m.tp * m.pp * m.dp and m.sharding == "zero1"
        assert 0.05 <= q.answer_bytes / q.capacity_bytes <= 8.0


def test_pod_drill_widget_checks_and_refuses_hostile_answers():
    from engine.lesson.drills import cluster_memory as drill_cluster
    w = get_widget("drill_cluster_memory")
    q = drill_cluster.pod_memory_question(3)
    out = w.run({**w.defaults({"seed": "3", "answer": f"{q.answer_GB:.3f}",
                               "fits": "yes" if q.fits else "no"})}, action="check")
    assert 'data-correct="true"' in out.html
    with pytest.raises(EngineError) as e:
        w.run(w.defaults({"seed": "3", "answer": HOSTILE, "fits": "yes"}), action="check")
    assert e.value.field == "answer"
