"""What one GPU of the fullest stage holds, parameters counted once
(parallelism.gpu_params): its stage's share of the model over tensor parallelism, of which a
mixture's routed experts only 1/ep. The gradients each step reduces are those parameters'."""

from __future__ import annotations

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.expected_training import expected_train
from engine.numbers.parallelism import check_split, gpu_params, stage_params_share

H100 = get_hardware("h100-sxm")


def test_a_dense_model_holds_its_stages_share_over_tp():
    m = get_model("llama-3.1-405b")
    split = check_split(m, H100, 16384, 8, 16, "embedding-and-loss")
    # 128 places over 16 stages: a middle stage's 8 layers are the fullest. One layer, from
    # its shapes: Q and O 16,384 x 16,384 each, K and V 16,384 x 1,024 each, the MLP's three
    # 16,384 x 53,248 matrices and two norms of 16,384: 3.1877 billion; over tp 8.
    layer = 2 * 16384 * 16384 + 2 * 16384 * 1024 + 3 * 16384 * 53248 + 2 * 16384
    assert gpu_params(m, split, 1) == pytest.approx(8 * layer / 8, rel=1e-5)


def test_a_mixture_holds_one_eighth_of_its_stages_experts():
    m = get_model("mixtral-8x7b")
    # 32 layers and the embedding and the loss: 34 places over 2 stages, 17 on each: the
    # embedding or the output layer and 16 layers, so no stage holds 17 layers.
    split = check_split(m, H100, 64, 2, 2, "embedding-and-loss")
    assert split.stage_layers == 17
    table = m.vocab * m.hidden
    per_layer = (m.params - 2 * table) / 32
    stage_share = stage_params_share(m, 2, "embedding-and-loss")
    assert stage_share == pytest.approx((table + 16 * per_layer) / m.params)
    assert split.layer_share == 16 / 32
    routed_here = m.routed_params * 16 / 32
    by_hand = (m.params * stage_share - routed_here + routed_here / 8) / 2
    assert gpu_params(m, split, 8) == pytest.approx(by_hand)
    # The step reduces exactly those parameters' gradients, 2 bytes each.
    train = expected_train(m, H100, tokens=1e12, gpus=64, tp=2, pp=2, ep=8,
                           seq_len=4096, global_batch_tokens=16 * 4096 * 4,
                           pipeline_split="embedding-and-loss")
    data = next(t for t in train.traffic if t.strategy == "data")
    assert data.bytes_per_step == pytest.approx(by_hand * 2)
    # Its busiest GPU runs 16 layers: 4 tensor-parallel all-reduces each of the micro-batch's
    # 4,096 x 4,096 activations in 16 bits, for each of the step's 4 micro-batches.
    tensor = next(t for t in train.traffic if t.strategy == "tensor")
    assert train.accumulation == 4
    assert tensor.bytes_per_step == pytest.approx(4 * 16 * 4 * 4096 * m.hidden * 2)


def test_with_many_expert_gpus_the_tables_stage_is_the_fullest():
    # DeepSeek-V3 over 3 stages with the embedding and the loss in the cut: 61 layers + 2 =
    # 63 places, 21 a stage. With 64 expert-parallel GPUs a layer weighs little on each, so
    # the first stage (the 129,280 x 7,168 table + 20 layers) outweighs the middle (21).
    m = get_model("deepseek-v3")
    split = check_split(m, H100, 1536, 8, 3, "embedding-and-loss")
    table = m.vocab * m.hidden
    per_layer = (m.params - 2 * table) / 61
    held_per_layer = per_layer - m.routed_params / 61 * (1 - 1 / 64)
    middle, end = 21 * held_per_layer / 8, (table + 20 * held_per_layer) / 8
    assert end > middle
    assert gpu_params(m, split, 64) == pytest.approx(end)
    # One expert GPU: every layer whole, and the middle stage is the fuller.
    assert gpu_params(m, split, 1) == pytest.approx(21 * per_layer / 8)


def test_zero3_gathers_only_the_experts_a_gpu_holds():
    # Mixtral 8x7B, ZeRO-3 on 64 GPUs with 8 expert-parallel ranks (tp 1, one stage): each GPU
    # holds its dense parameters and 1/8 of the routed experts, and that is what each
    # micro-batch gathers twice (forward and backward, 16 bits) and reduce-scatters (16-bit
    # gradients). Counting the experts whole, as before, gathered eight times the experts.
    m = get_model("mixtral-8x7b")
    held = m.params - m.routed_params + m.routed_params / 8
    train = expected_train(m, H100, tokens=1e12, gpus=64, tp=1, ep=8, sharding="zero3",
                           seq_len=4096)
    data = next(t for t in train.traffic if t.strategy == "data")
    assert data.bytes_per_step == pytest.approx(train.accumulation * (2 * held * 2 + held * 2))
