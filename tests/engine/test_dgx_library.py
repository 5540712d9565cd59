"""The config library in the simulated dgx-1 and in the CPU race: their model selects offer it
(the same grouped select as every other widget's), and a library model is deployed, trained,
sent traffic and kept in the saved state by its id, end to end. Meta's Llama 3.1 8B
config.json gives the catalogue's Llama 3.1 8B's figures on dgx-1 too; an id that is neither
the lesson's nor the library's is refused by name, in the form and in a saved state."""

from __future__ import annotations

import json
import re

import pytest

from engine.browser import update
from engine.lesson import cluster
from engine.lesson.dgx_view import dump_state, load_state
from engine.numbers.catalog import get_model
from engine.numbers.catalog.config_library import library_ids, library_options
from engine.numbers.errors import EngineError
from engine.registry import get_widget
from engine.render.options import LESSON_MODELS_GROUP, catalog_model_field

GPT_OSS = "openai/gpt-oss-20b"
LIBRARY_LLAMA = "meta-llama/Llama-3.1-8B"
HOSTILE = '<script>alert("x")</script>'
NOTE = re.compile(r'<p class="widget-note your-model-note">.*?</p>')
PICKERS = ("deploy_model", "launch_training", "cpu_gpu_race")


def reply(name: str, **inputs: object) -> dict[str, object]:
    out: dict[str, object] = json.loads(update(name, json.dumps(inputs)))
    return out


def html_of(name: str, **inputs: object) -> str:
    out = reply(name, **inputs)
    assert "error" not in out, out
    html = out["html"]
    assert isinstance(html, str)
    return html


@pytest.mark.parametrize("name", PICKERS)
def test_the_select_offers_the_lesson_then_the_library_grouped(name: str) -> None:
    control = get_widget(name).control("model")
    # The same select the other widgets' helper builds, without the reader's own models (a
    # job keeps its model by id).
    assert control == catalog_model_field(library=True).control
    values = [v for v, _ in control.options]
    assert values[-len(library_ids()):] == [o.id for o in library_options()]
    assert "config" not in values and "custom" not in values
    assert control.option_groups[0] == LESSON_MODELS_GROUP
    assert control.option_groups[values.index(GPT_OSS)] == "Library: openai"


def test_a_library_model_resolves_to_its_config_under_its_own_id() -> None:
    model = cluster.model_named(GPT_OSS)
    assert model.id == GPT_OSS and model.name == GPT_OSS
    assert model.params == 20_914_755_648
    assert cluster.model_named(GPT_OSS) is model
    assert cluster.model_named("llama-3.1-8b") == get_model("llama-3.1-8b")


def _same_but_named(mine: str, theirs: str) -> None:
    assert NOTE.search(mine) and not NOTE.search(theirs)
    assert NOTE.sub("", mine).replace(LIBRARY_LLAMA, "Llama 3.1 8B") == theirs


def test_meta_s_config_of_llama_3_1_8b_deploys_and_serves_as_the_catalogue_s() -> None:
    mine = reply("deploy_model", model=LIBRARY_LLAMA, action="deploy")
    theirs = reply("deploy_model", model="llama-3.1-8b", action="deploy")
    _same_but_named(str(mine["html"]), str(theirs["html"]))
    states = [str(r["set"]["state"]) for r in (mine, theirs)]  # type: ignore[index]
    assert states[0].replace(LIBRARY_LLAMA, "llama-3.1-8b") == states[1].replace(
        "Llama 3.1 8B", "llama-3.1-8b")
    for action in ("start", "curve"):
        traffic = [html_of("dgx_traffic", state=s, action=action) for s in states]
        assert traffic[0].replace(LIBRARY_LLAMA, "Llama 3.1 8B") == traffic[1]


def test_gpt_oss_20b_is_deployed_sent_traffic_and_kept_across_a_reload() -> None:
    deployed = reply("deploy_model", model=GPT_OSS, gpu="2", action="deploy")
    html = str(deployed["html"])
    assert "Deployed." in html and f"serving {GPT_OSS} (bf16) on GPU 2" in html
    assert f"Figures for {GPT_OSS}" in html and "20.9 billion parameters" in html
    state_text = str(deployed["set"]["state"])  # type: ignore[index]
    # A reload: the state as the page keeps it, read back as untrusted input.
    state = load_state(state_text)
    job = state.serving_job()
    assert job is not None and job.model_id == GPT_OSS and job.gpus == (2,)
    assert dump_state(state) == state_text
    started = reply("dgx_traffic", state=state_text, action="start")
    running = str(started["set"]["state"])  # type: ignore[index]
    traffic = load_state(running).traffic
    assert traffic is not None and traffic.on
    assert GPT_OSS in str(started["html"])
    assert "tokens/s" in html_of("dgx_traffic", state=running, action="curve")
    # The panel and the traffic widget after a reload read the same state.
    assert GPT_OSS in html_of("dgx_panel", state=running)
    restored = reply("dgx_traffic", state=running, action="restore")
    assert restored["set"] == {"rate_notch": str(cluster.TRAFFIC_RATES.index(8.0))}


def test_a_library_model_is_launched_for_training_and_advances() -> None:
    launched = reply("launch_training", model="Qwen/Qwen3-0.6B", gpus="0-1", action="launch")
    assert "Accepted: the job starts." in str(launched["html"])
    state = str(launched["set"]["state"])  # type: ignore[index]
    later = reply("dgx_panel", state=state, action="advance")
    job = load_state(str(later["set"]["state"])).jobs[0]  # type: ignore[index]
    assert job.model_id == "Qwen/Qwen3-0.6B" and job.kind == "train"
    preview = html_of("launch_training", model=GPT_OSS, gpus="4-7")
    assert "Not submitted yet: GPUs 4-7 have at least 84.94 GB free each." in preview


def test_a_refused_library_deployment_offers_ways_out_that_keep_its_id() -> None:
    llama_2 = "meta-llama/Llama-2-70b-hf"  # its config.json reads 2,048 tokens at most
    result = cluster.deploy(cluster.new_cluster("dgx-1"), llama_2, (0,), context_tokens=2048)
    assert not result.accepted
    split = next(w for w in result.ways_out if w.label == "2 GPUs (tensor parallel)")
    assert dict(split.action)["model_id"] == llama_2
    applied = cluster.try_way_out(result.state, split)
    assert applied.accepted and applied.job is not None and applied.job.model_id == llama_2


@pytest.mark.parametrize("bad", ["openai/gpt-oss-21b", "Qwen/qwen3-8b", HOSTILE])
def test_an_id_neither_the_lessons_nor_the_librarys_is_refused_by_name(bad: str) -> None:
    deployed = reply("deploy_model", model=GPT_OSS, action="deploy")
    state = str(deployed["set"]["state"])  # type: ignore[index]
    for name, action in zip(PICKERS, ("deploy", "launch", ""), strict=True):
        # The form's model is refused alone; the state it came with is not rewritten.
        refused = reply(name, model=bad, state=state, action=action)
        assert refused["field"] == "model" and repr(bad) in str(refused["error"]), name
        assert "set" not in refused
    with pytest.raises(EngineError, match=re.escape(repr(bad))) as direct:
        cluster.deploy(cluster.new_cluster("dgx-1"), bad, (0,))
    assert direct.value.field in ("model", "model_id")
    # A saved state whose job names such a model is refused, naming it.
    data = json.loads(state)
    data["jobs"][0]["model_id"] = bad
    refused = reply("dgx_panel", state=json.dumps(data))
    assert refused["field"] == "state" and repr(bad) in str(refused["error"])


def test_the_cpu_race_runs_a_library_model_and_restarts_when_it_changes() -> None:
    widget = get_widget("cpu_gpu_race")
    first = widget.run(widget.defaults({"model": GPT_OSS}))
    assert f"Figures for {GPT_OSS}" in first.html and "20.9 billion parameters" in first.html
    key = first.set_inputs["race"]
    assert GPT_OSS in key
    other = widget.run(widget.defaults({"model": "Qwen/Qwen3-0.6B", "race": key}))
    assert other.set_inputs["race"] != key
