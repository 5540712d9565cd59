"""The dgx-1 widgets (dgx_panel, launch_training, deploy_model): the engine's numbers appear,
actions change the shared state as engine.lesson.cluster says, bad input names its field, a
corrupted stored state gives a readable message, and hostile text is shown as text."""

from __future__ import annotations

import json
import re

import pytest
from widget_text import text_of

from engine.browser import update
from engine.lesson import cluster
from engine.lesson.dgx_view import DEFAULT_STATE, dump_state, load_state
from engine.numbers import memory
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_training import expected_train
from engine.registry import get_widget, widget_names
from engine.render.widget import Rendered, render_actions
from engine.words.format import format_GB, format_percent
from engine.words.memory_explained import KV_ROOM_RULE

HOSTILE = '<script>alert("x")</script>'

# An "80 GB" H100 hands a program 79.11 GiB (torch total capacity, vllm-project/vllm #27508).
H100_BYTES = round(79.11 * 2**30)


def run(name: str, action: str = "", **overrides: object) -> Rendered:
    widget = get_widget(name)
    return widget.run(widget.defaults(overrides), action)


def test_the_dgx_widgets_are_registered_and_share_one_store() -> None:
    assert {"dgx_panel", "launch_training", "deploy_model"} <= set(widget_names())
    for name in ("dgx_panel", "launch_training", "deploy_model"):
        widget = get_widget(name)
        assert widget.store == "session:dgx-1"
        assert widget.control("state").kind == "hidden"
        assert widget.control("state").default == DEFAULT_STATE


def test_the_default_state_is_a_new_dgx_1() -> None:
    state = load_state(DEFAULT_STATE)
    assert state == cluster.new_cluster("dgx-1")
    assert load_state(dump_state(state)) == state
    assert load_state("") == state  # an empty value starts fresh too


# ------------------------------------------------------------------------------ dgx_panel


def test_panel_shows_eight_gpus_free_and_the_first_log_line() -> None:
    out = run("dgx_panel")
    assert out.set_inputs == {}  # no button: the state is not rewritten
    text = text_of(out.html)
    # Eight idle GPUs: one row in words, and still a memory and a utilisation bar per GPU.
    assert out.html.count("<tr data-gpus=") == 1 and 'data-gpus="0 1 2 3 4 5 6 7"' in out.html
    assert "GPUs 0-7" in text and text.count("0 GB of 84.94 GB") == 1
    for g in range(8):
        assert out.html.count(f'data-gpu="{g}"') == 2
        assert f"GPU {g} memory: 0 GB of 84.94 GB" in out.html
        assert f"GPU {g} utilisation: 0 %" in out.html
    assert "0 of 8 GPUs hold memory" in text
    assert "No job is running" in text
    assert "dgx-1 ready: 84.94 GB per GPU, 679.5 GB in all." in text
    assert 'role="img"' in out.html


def test_panel_rows_group_gpus_in_the_same_state_only() -> None:
    state = cluster.launch_training(cluster.new_cluster(), "llama-3.1-8b", (0, 1, 2, 3),
                                   "zero3").state
    job = state.find_job("job-1")
    out = run("dgx_panel", state=dump_state(state))
    rows = re.findall(r'<tr data-gpus="([^"]*)">(.*?)</tr>', out.html)
    assert [gpus for gpus, _ in rows] == ["0 1 2 3", "4 5 6 7"]
    busy, idle = (text_of(row) for _, row in rows)
    assert busy.startswith(" GPUs 0-3 ") and idle.startswith(" GPUs 4-7 ")
    assert f" {format_GB(job.bytes_per_gpu)} of 84.94 GB " in busy and "training job-1" in busy
    assert " 0 GB of 84.94 GB " in idle and idle.endswith(" free ")


def test_panel_log_shows_the_newest_entries_and_folds_the_rest() -> None:
    state = cluster.new_cluster()
    for _ in range(4):
        state = cluster.launch_training(state).state  # refused each time: four log entries
    out = run("dgx_panel", state=dump_state(state))
    shown, folded = out.html.split('<details class="dgx-log-older">')
    assert shown.count("<li data-kind=") == 3 and shown.count('data-kind="refused"') == 3
    assert "2 older entries" in folded
    assert folded.count("<li data-kind=") == 2 and 'data-kind="info"' in folded


def test_panel_shows_jobs_memory_utilisation_and_log_newest_first() -> None:
    state = cluster.launch_training(
        cluster.new_cluster(), "llama-3.1-8b", (0, 1, 2, 3, 4, 5, 6, 7), "zero3"
    ).state
    state = cluster.deploy(state, "llama-3.2-3b", (0,)).state  # refused: training holds GPU 0
    state = cluster.advance(state, 3600)
    out = run("dgx_panel", state=dump_state(state))
    text = text_of(out.html)
    job = state.find_job("job-1")
    gpu = state.gpus()[3]
    assert f"{format_GB(job.bytes_per_gpu)} of 84.94 GB" in text
    assert f"{format_percent(gpu.utilisation)}" in text
    assert "Simulated time 1:00" in text
    assert "training Llama 3.1 8B (ZeRO-3" in text and "GPUs 0-7" in text
    progress = state.progress(job)
    assert f"{format_percent(progress.progress)} done" in text
    # Beside the MFU it was launched with, the engine's expected speed of the same job.
    e = expected_train(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), tokens=job.tokens, gpus=8, sharding="zero3",
                       recompute=job.recompute, micro_batch=job.micro_batch, seq_len=job.seq_len)
    assert (f"tokens/s at {format_percent(job.mfu)} MFU" in text
            and f"a well-tuned stack: about {e.tokens_per_s:,.0f} tokens/s ({format_percent(e.mfu)} MFU)"
            in text)
    messages = [e.message for e in state.log]
    positions = [out.html.index(m.replace("'", "&#x27;")) for m in reversed(messages)]
    assert positions == sorted(positions)  # newest first


def test_panel_advance_and_reset_change_the_state() -> None:
    launched = cluster.launch_training(cluster.new_cluster(), gpus=(0, 1, 2), sharding="zero3")
    out = run("dgx_panel", "advance", state=dump_state(launched.state))
    advanced = load_state(out.set_inputs["state"])
    assert advanced == cluster.advance(launched.state, 3600)
    assert advanced.clock_seconds == 3600
    assert "Advanced the simulated clock by one hour, to 1:00" in text_of(out.html)
    out = run("dgx_panel", "reset", state=out.set_inputs["state"])
    assert load_state(out.set_inputs["state"]) == cluster.new_cluster()
    assert "Reset" in text_of(out.html)


@pytest.mark.parametrize(
    "stored",
    [
        "{not json",
        "[]",
        '{"version": 99}',
        json.dumps({**json.loads(DEFAULT_STATE), "system_id": "dgx-9"}),
        "[" * 100_000,
    ],
)
@pytest.mark.parametrize("name", ["dgx_panel", "launch_training", "deploy_model"])
def test_a_corrupted_state_is_refused_readably(name: str, stored: str) -> None:
    with pytest.raises(EngineError) as caught:
        run(name, state=stored)
    assert caught.value.field == "state"
    assert "state" in caught.value.message.lower()
    reply = json.loads(update(name, json.dumps({"state": stored})))
    assert reply["field"] == "state" and "internal" not in reply


def test_hostile_text_in_the_log_is_escaped() -> None:
    data = json.loads(DEFAULT_STATE)
    data["log"][0]["message"] = HOSTILE
    out = run("dgx_panel", state=json.dumps(data))
    assert HOSTILE not in out.html
    assert "&lt;script&gt;" in out.html


def test_panel_refuses_an_unknown_button() -> None:
    with pytest.raises(EngineError) as caught:
        run("dgx_panel", "format-disk")
    assert caught.value.field == "action"


# ------------------------------------------------------------------------ launch_training


def test_launch_before_any_button_says_the_memory_free_on_its_gpus() -> None:
    # The form above it names the model, GPUs and sharding; the preview adds only what the
    # form cannot show, the memory free now.
    out = run("launch_training")
    text = text_of(out.html)
    assert out.set_inputs == {}
    assert text.strip() == "Not submitted yet: GPU 0 has 84.94 GB free."


def test_way_out_buttons_are_hidden_until_a_refusal_offers_them() -> None:
    # docs/css/dgx.css shows "Apply way out N" once the result lists way out N.
    buttons = render_actions(get_widget("launch_training"))
    for i in range(6):
        assert f'data-action="way-out-{i}" hidden>Apply way out {i + 1}</button>' in buttons
    assert 'data-action="launch">Launch training</button>' in buttons
    assert 'data-action="retry">Retry</button>' in buttons


def test_launch_of_8b_on_one_gpu_is_refused_with_the_arithmetic() -> None:
    out = run("launch_training", "launch")
    text = text_of(out.html)
    expected = cluster.launch_training(cluster.new_cluster())
    assert not expected.accepted
    assert "Refused before it starts" in text
    assert text.count("Refused before it starts") == 1  # the heading says it, once
    assert "Training Llama 3.1 8B on GPU 0: the training state alone" in text
    assert "16 bytes/param × 8.03 billion params = 128.5 GB" in text
    assert " x " not in " ".join(expected.arithmetic)  # "×" for readers, not the letter x
    assert "more than the 84.94 GB free on GPU 0" in text
    for line in expected.arithmetic:
        assert line.replace(">", "&gt;") in out.html
    state = load_state(out.set_inputs["state"])
    assert state == expected.state
    assert state.running_jobs() == () and state.log[-1].kind == "refused"
    # The ways out, each with its numbers, and a button for those that can be applied.
    for i, way in enumerate(expected.ways_out):
        assert f"Way out {i + 1}: {way.label}." in text
        assert way.text in text
        assert (f'data-way-out="{i}"' in out.html) == bool(way.action)
    # The chart: one GPU's training memory against its 84.94 GB (79.11 GiB).
    mem = memory.training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    assert f"total {format_GB(mem.per_gpu_bytes)} of 84.94 GB" in out.html


def test_retry_gives_the_same_answer_and_says_so() -> None:
    first = run("launch_training", "launch")
    second = run("launch_training", "retry", state=first.set_inputs["state"])
    text = text_of(second.html)
    assert "Same inputs, same arithmetic, same answer." in text
    assert "refused again, word for word" in text
    state = load_state(second.set_inputs["state"])
    refusals = [e for e in state.log if e.kind == "refused"]
    assert len(refusals) == 2 and refusals[0].message == refusals[1].message
    assert state.running_jobs() == ()


def test_a_way_out_is_applied_and_accepted() -> None:
    first = run("launch_training", "launch")
    refused = cluster.launch_training(cluster.new_cluster())
    for i, way in enumerate(refused.ways_out):
        out = run("launch_training", f"way-out-{i}", state=first.set_inputs["state"])
        text = text_of(out.html)
        assert "Accepted: the job starts." in text
        assert f"Applied way out {i + 1}: {way.label}." in text
        state = load_state(out.set_inputs["state"])
        (job,) = state.running_jobs()
        assert abs(job.bytes_per_gpu - way.per_gpu_bytes) < 1
        assert dict(way.action)["gpus"] == job.gpus
        used = state.used_bytes()
        assert all(used[g] == job.bytes_per_gpu for g in job.gpus)


def test_a_way_out_that_is_not_there_is_refused_readably() -> None:
    with pytest.raises(EngineError) as caught:
        run("launch_training", "way-out-5")
    assert caught.value.field == "action" and "way out 6" in caught.value.message
    with pytest.raises(EngineError) as caught:
        run("launch_training", "way-out-0", model="llama-3.2-1b")  # it fits: nothing to undo
    assert caught.value.field == "action"


def test_launch_on_busy_gpus_is_refused_naming_the_job() -> None:
    state = cluster.deploy(cluster.new_cluster(), "llama-3.2-1b", (0,)).state
    out = run("launch_training", "launch", model="llama-3.2-1b", state=dump_state(state))
    assert "needs its GPUs to itself" in text_of(out.html)


@pytest.mark.parametrize(
    "field, value",
    [("model", "gpt-9"), ("model", HOSTILE), ("gpus", "0-99"), ("sharding", "zero9")],
)
def test_launch_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        run("launch_training", "launch", **{field: value})
    assert caught.value.field == field  # the browser shows the message as text


# --------------------------------------------------------------------------- deploy_model


def kv_room(model_id: str) -> int:
    """Tokens of KV cache ``model_id`` gets on an empty H100 by the traffic's rule."""
    blocks, block_tokens = cluster.serve_kv_blocks(get_model(model_id),
                                                   get_hardware("h100-sxm"), "bf16", 1)
    return blocks * block_tokens


def test_deploy_preview_shows_memory_and_what_the_rest_holds() -> None:
    out = run("deploy_model")
    text = text_of(out.html)
    mem = memory.serving_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    assert out.set_inputs == {}
    assert "Not deployed yet" in text
    assert f"{format_GB(mem.parts['weights'])} (bf16)" in text
    assert format_GB(mem.parts["kv_cache"]) in text
    tokens = kv_room("llama-3.1-8b")  # an empty GPU
    assert f"holds {tokens:,} tokens: {KV_ROOM_RULE}" in text
    assert f"Concurrent requests at 8,192 tokens each {tokens // 8192:,}" in text


def test_deploy_shows_the_room_at_once_and_its_sums_behind_the_details() -> None:
    shown, _, behind = run("deploy_model").html.partition("<details")
    assert f"holds {kv_room('llama-3.1-8b'):,} tokens" in text_of(shown)
    assert "Free on GPU 0 before it 84.94 GB" in text_of(behind)
    # An accepted deployment's arithmetic opens on purpose; a refusal's is its reason.
    shown, _, behind = run("deploy_model", "deploy").html.partition("<details")
    assert "deploy-arithmetic" not in shown and "deploy-arithmetic" in behind
    refused = run("deploy_model", "deploy", model="llama-3.1-70b").html.partition("<details")
    assert "deploy-arithmetic" in refused[0]


def test_deploy_puts_the_model_on_the_panel_and_matches_the_engine() -> None:
    out = run("deploy_model", "deploy", gpu="3", context="32768", batch="4")
    expected = cluster.deploy(cluster.new_cluster(), "llama-3.1-8b", (3,), "bf16", 32768, 4)
    assert expected.accepted
    state = load_state(out.set_inputs["state"])
    assert state == expected.state
    text = text_of(out.html)
    assert "Deployed." in text and expected.message in text
    # The room the widget reports is the engine's own figure in its message: vLLM's rule,
    # whatever the deployment's batch and context.
    mem = memory.serving_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=32768, batch=4)
    tokens = kv_room("llama-3.1-8b")
    assert f"room for {tokens:,} tokens of context" in expected.message
    assert f"holds {tokens:,}" in text
    panel = text_of(run("dgx_panel", state=out.set_inputs["state"]).html)
    assert f"{format_GB(mem.per_gpu_bytes)} of 84.94 GB" in panel
    assert "serving Llama 3.1 8B" in panel


def test_deploy_shares_a_gpu_and_counts_the_other_jobs() -> None:
    first = run("deploy_model", "deploy")
    second = run("deploy_model", "deploy", model="llama-3.2-3b", state=first.set_inputs["state"])
    text = text_of(second.html)
    state = load_state(second.set_inputs["state"])
    assert len(state.running_jobs()) == 2
    assert "Held by other jobs" in text
    held = cluster.deploy(cluster.new_cluster(), "llama-3.1-8b").job
    assert held is not None
    assert f"Free on GPU 0 before it {format_GB(H100_BYTES - held.bytes_per_gpu)}" in text


def test_deploy_too_big_is_refused_with_ways_out() -> None:
    out = run("deploy_model", "deploy", model="llama-3.1-70b")
    text = text_of(out.html)
    assert "Refused before it loads." in text
    assert "What would work instead" in text
    assert load_state(out.set_inputs["state"]).running_jobs() == ()


def test_stop_last_job_frees_the_gpu() -> None:
    first = run("deploy_model", "deploy")
    out = run("deploy_model", "stop", state=first.set_inputs["state"])
    assert "Stopped job-1" in text_of(out.html)
    assert load_state(out.set_inputs["state"]).running_jobs() == ()
    with pytest.raises(EngineError) as caught:
        run("deploy_model", "stop")
    assert caught.value.field == "action"


@pytest.mark.parametrize(
    "field, value",
    [
        ("model", "gpt-9"),
        ("gpu", "8"),
        ("gpu", HOSTILE),
        ("format", "fp7"),
        ("context", "-1"),
        ("context", "10000000"),
        ("batch", "abc"),
        ("batch", "NaN"),
    ],
)
def test_deploy_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        run("deploy_model", "deploy", **{field: value})
    assert caught.value.field == field


def test_the_traffic_rate_slider_shows_its_notch_in_words_beside_it() -> None:
    from engine.render.widget import render_control

    control = get_widget("dgx_traffic").control("rate_notch")
    html = render_control(control, "t", control.default)
    assert '<output for="t-rate_notch" class="widget-value" aria-hidden="true">8 requests a ' \
        "second</output>" in html
    assert control.value_texts[0] == "1 request a second"
    # A slider that does not ask for it (the roofline's batch) shows no such words.
    batch = get_widget("roofline_chart").control("batch_log2")
    assert "<output" not in render_control(batch, "r", batch.default)
