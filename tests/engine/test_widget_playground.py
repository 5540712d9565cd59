"""The playground: the full plan as the engine computes it, every visible input in
the address, every bad or hostile input refused naming the input it came from."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import widget_text
from widget_text import one_drawing, text_of

from engine.browser import update
from engine.numbers.catalog import get_hardware, get_model, resolve_model
from engine.numbers.catalog.hf_config import model_from_config
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.serving import request_timeline
from engine.registry import get_widget, widget_names
from engine.render.html import esc
from engine.widgets.playground import QUESTIONS, WIDGET
from engine.words.answers import answers
from engine.words.format import format_flops, format_GB, format_seconds

HOSTILE = "<script>alert(1)</script>"


def render(**overrides: object) -> str:
    return widget_text.render(WIDGET.name, **overrides)


def refused(**overrides: object) -> EngineError:
    with pytest.raises(EngineError) as caught:
        render(**overrides)
    return caught.value


def test_registered_with_every_visible_input_in_the_address() -> None:
    assert "playground" in widget_names()
    assert get_widget("playground") is WIDGET
    visible = [c.name for c in WIDGET.controls if c.kind != "hidden"]
    assert list(WIDGET.url_state) == [*visible, "pinned"]  # and a plan pinned as A
    # Every knob the lesson turned, over the whole engine.
    assert {
        "model",
        "params",
        "hardware",
        "gpus",
        "task",
        "format",
        "context",
        "batch",
        "tokens",
        "mfu",
        "sharding",
        "tp",
        "optimizer",
        "convention",
        "recompute",
    } <= set(visible)


def test_default_serving_plan_shows_the_engines_numbers_and_charts() -> None:
    html = render()
    p = plan(model="llama-3.1-8b", hardware="h100-sxm")
    text = text_of(html)
    assert f"{format_GB(p.memory.per_gpu_bytes)} of {format_GB(p.memory.capacity_bytes)}" in text
    assert 'data-fits="true"' in html
    for key, question in QUESTIONS:
        assert f'data-question="{key}"' in html
        assert question in text
        assert esc(answers(p)[key]) in html
    # The memory bar against capacity and the request timeline, each with a text alternative.
    assert one_drawing(html).count('role="img"') == 2
    assert 'class="chart memory-bar"' in html and 'class="chart timeline"' in html
    run = request_timeline(
        get_model("llama-3.1-8b"), get_hardware("h100-sxm"), prompt_tokens=1024, output_tokens=256, batch=1
    )
    assert f"first token {format_seconds(run.ttft_seconds)}" in text
    assert p.serve is not None
    assert format_seconds(p.serve.tpot_seconds) in text
    assert not re.search(r"\bnan\b|\binf\b|infinity", text, re.IGNORECASE)


def shown_part(html: str) -> str:
    """What shows as the page opens: the HTML without its closed details' bodies."""
    return re.sub(r"<details[^>]*><summary>(.*?)</summary>.*?</details>", r"\1", html,
                  flags=re.DOTALL)


@pytest.mark.parametrize("task", ["serve", "train"])
def test_the_headline_shows_and_the_rest_waits_in_one_details(task: str) -> None:
    html = render(task=task)
    shown = text_of(shown_part(html))
    p = plan(model="llama-3.1-8b", task=task, mfu=0.4 if task == "train" else None)
    # The verdict, the memory bar (used and capacity once, in its labels) and the times.
    assert f"used {format_GB(p.memory.per_gpu_bytes)}" in shown
    assert shown.count(format_GB(p.memory.per_gpu_bytes)) == 1
    if p.serve is not None:
        assert f"{format_seconds(p.serve.ttft_seconds)} at best" in shown
        assert f"{format_seconds(p.serve.tpot_seconds)} at best" in shown
        assert "Tokens/s per user" not in shown and "Tokens/s per user" in text_of(html)
    else:
        assert p.train is not None
        assert f"Training time at 40 % MFU {format_seconds(p.train.seconds)}" in shown
        # The FLOPs shown are the ones MFU counts: at 100 % MFU they take the "at best" time.
        assert "Training FLOPs (what MFU counts)" not in shown
        assert (f"Training FLOPs (what MFU counts) {format_flops(p.train.model_flops)}"
                in text_of(html))
        assert format_seconds(p.train.bound_seconds) in shown
    # The five answers and the assumptions are there, only shut.
    for answer in answers(p).values():
        assert esc(answer) not in shown_part(html) and esc(answer) in html
    assert html.count("<details") == 2  # one for the rest of the plan, one for the command
    # No hint under the controls: the page says once that the other task's inputs wait. The
    # fields one choice shows (a typed count, a pasted config, the own chip's form) keep theirs.
    assert not [c.name for c in WIDGET.controls if c.hint and c.name not in ("params", "config")
                and not c.name.startswith("chip_")]


def test_every_input_reaches_the_plan() -> None:
    inputs = {
        "model": "llama-3.1-70b",
        "hardware": "h200",
        "gpus": "2",
        "format": "fp8",
        "kv_format": "fp8",
        "context": "32768",
        "batch": "4",
        "prompt": "2000",
        "output": "500",
        "price": "3.5",
    }
    html = render(**inputs)
    p = plan(
        model="llama-3.1-70b",
        hardware="h200",
        gpus=2,
        weight_format="fp8",
        kv_format="fp8",
        context_tokens=32768,
        batch=4,
        prompt_tokens=2000,
        output_tokens=500,
        usd_per_gpu_hour=3.5,
    )
    for answer in answers(p).values():
        assert esc(answer) in html
    assert "$3.50" in text_of(html)


def test_training_shows_the_run_time_and_uses_every_training_input() -> None:
    inputs = {
        "task": "train",
        "model": "llama-3.1-70b",
        "gpus": "64",
        "sharding": "zero3",
        "tp": "4",
        "optimizer": "adamw",
        "convention": "mixed-18",
        "recompute": "full",
        "micro_batch": "2",
        "seq_len": "8192",
        "tokens": "1e12",
        "mfu": "0.35",
        "target_days": "30",
    }
    html = render(**inputs)
    p = plan(
        model="llama-3.1-70b",
        task="train",
        gpus=64,
        sharding="zero3",
        tp=4,
        optimizer="adamw",
        convention="mixed-18",
        recompute="full",
        micro_batch=2,
        seq_len=8192,
        tokens=1e12,
        mfu=0.35,
        target_days=30,
    )
    assert p.train is not None
    text = text_of(html)
    assert format_seconds(p.train.seconds) in text
    assert format_flops(p.train.total_flops) in text
    # Full recomputation: 8/6 of the model FLOPs, which are 6 x the matmul weights (the
    # embedding is a lookup: 70,553,706,496 - 128,256 x 8,192 - 1,318,912 norm weights) plus
    # causal attention 12 x 80 layers x 8,192 x 8,193 / 2 tokens per token (each token
    # attends to itself and those before it).
    model = 6 * (70_553_706_496 - 128_256 * 8192 - 1_318_912) + 6 * 80 * 8192 * 8193
    assert p.train.model_flops == pytest.approx(model * 1e12)
    assert p.train.total_flops == pytest.approx(model * 8 / 6 * 1e12)
    assert f"GPUs to finish in 30 days {p.train.gpus_for_target:,}" in text
    for answer in answers(p).values():
        assert esc(answer) in html
    assert one_drawing(html).count('role="img"') == 1  # the memory bar; no request timeline
    assert "Training time" in text


def test_a_typed_parameter_count_is_a_generic_model() -> None:
    html = render(model="custom", params="3e10")
    m = resolve_model(params=3e10)
    p = plan(model=m)
    assert esc(answers(p)["fits"]) in html
    assert esc(m.name) in html


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"gpus": "-4"}, "gpus"),
        ({"gpus": "2.5"}, "gpus"),
        ({"context": HOSTILE}, "context"),
        ({"context": "nan"}, "context"),
        ({"batch": "0"}, "batch"),
        ({"prompt": "inf"}, "prompt"),
        ({"output": ""}, "output"),
        ({"model": "gpt-9"}, "model"),
        ({"model": ""}, "model"),
        ({"model": "custom", "params": "12"}, "params"),
        ({"hardware": "h900"}, "hardware"),
        ({"task": "mine"}, "task"),
        ({"format": "fp7"}, "format"),
        ({"kv_format": "int4"}, "kv_format"),
        ({"mfu": "1.5"}, "mfu"),
        ({"tokens": "-1"}, "tokens"),
        ({"target_days": "x"}, "target_days"),
        ({"price": HOSTILE}, "price"),
        # Inputs of the other task are still checked, so a link never carries junk.
        ({"tp": "abc"}, "tp"),
        ({"sharding": "zero9"}, "sharding"),
        ({"optimizer": "lion"}, "optimizer"),
        ({"convention": "mixed-17"}, "convention"),
        ({"recompute": "some"}, "recompute"),
        ({"micro_batch": "-1"}, "micro_batch"),
        ({"seq_len": "1e99"}, "seq_len"),
        ({"task": "train", "gpus": "6", "tp": "4"}, "tp"),
    ],
)
def test_bad_inputs_are_refused_naming_the_input(overrides: dict[str, str], field: str) -> None:
    # The training inputs show (and are checked) when the task is training.
    train_only = {"mfu", "tokens", "target_days", "sharding", "optimizer", "convention",
                  "recompute", "micro_batch", "seq_len", "tp"}
    if field in train_only:
        overrides = {"task": "train", **overrides}
    error = refused(**overrides)
    assert error.field == field
    assert error.field in {c.name for c in WIDGET.controls}


@pytest.mark.parametrize(
    "hidden",
    [
        {"model": "llama-3.1-70b", "params": "abc"},  # the count typed, then a model chosen
        {"task": "serve", "mfu": "abc", "target_days": "x"},  # the training inputs, hidden
        {"task": "train", "batch": "0", "prompt": "inf"},  # the serving inputs, hidden
    ],
)
def test_fields_the_choices_hide_are_not_checked(hidden: dict[str, str]) -> None:
    # An error must never sit in a field the reader cannot see (it could not be mended).
    reply = json.loads(update("playground", json.dumps(hidden)))
    assert "error" not in reply, reply


def test_an_empty_select_from_a_link_gets_a_clear_message() -> None:
    error = refused(model="")
    assert "pick one from the list" in error.message


def test_hostile_text_comes_back_as_an_error_never_as_markup() -> None:
    reply = json.loads(update("playground", json.dumps({"context": HOSTILE})))
    assert reply["field"] == "context"
    assert "html" not in reply
    # The message quotes the text; the browser shows messages with textContent.
    assert "must be a number" in reply["error"]
    ok = json.loads(update("playground", json.dumps({"model": "custom", "params": "7e9"})))
    assert "<script" not in ok["html"]


def test_a_plan_that_does_not_fit_says_so() -> None:
    html = render(model="llama-3.1-405b", hardware="h100-sxm")
    assert 'data-fits="false"' in html
    assert "it does not fit" in text_of(html)
    capacity = get_hardware("h100-sxm").memory_bytes
    assert f"capacity {format_GB(capacity)}" in html
    assert get_model("llama-3.1-405b").name in text_of(html)


# --- Your model, from a pasted config.json ---

CONFIGS = Path(__file__).resolve().parent.parent / "fixtures" / "configs"


def config_text(name: str) -> str:
    return (CONFIGS / f"{name}.json").read_text(encoding="utf-8")


def test_pasted_config_drives_every_figure() -> None:
    from engine.render.options import ADDRESS_MAX_CHARS, YOUR_MODEL

    text = config_text("Llama-3.1-8B")
    assert len(text) < ADDRESS_MAX_CHARS
    pasted = text_of(render(model=YOUR_MODEL, config=text))
    catalogue = text_of(render(model="llama-3.1-8b"))
    # The same shapes as the catalogue's Llama 3.1 8B: the same plan, figure for figure.
    tail = catalogue.split("Memory per GPU", 1)[1].replace("Llama 3.1 8B", "NAME")
    # ... but for the command line, which reads the pasted config from a file, offered
    # for download beside it.
    tail = tail.replace("--model llama-3.1-8b", "--config config.json").replace(
        " Download the result as JSON",
        " Download config.json : the file this line reads; save it in the folder you run "
        "from. Download the result as JSON")
    assert pasted.split("Memory per GPU", 1)[1].replace("Your Llama model", "NAME") == tail
    assert "Your model, as read from its config.json" in pasted
    assert "8.03 billion (8,030,261,248)" in pasted


def test_pasted_moe_config_shows_active_and_notes() -> None:
    from engine.render.options import YOUR_MODEL

    text = config_text("DeepSeek-V3")
    html = render(model=YOUR_MODEL, config=text, gpus="8", format="fp8")
    p = plan(model=model_from_config(text).model, gpus=8, weight_format="fp8")
    # The memory bar says both, once (the verdict only says whether it fits).
    assert f"used {format_GB(p.memory.per_gpu_bytes)}" in text_of(html)
    assert f"capacity {format_GB(p.memory.capacity_bytes)}" in text_of(html)
    assert "it does not fit." in text_of(html)
    assert "Active per token" in html and "multi-token-prediction" in html


def test_pasted_junk_says_what_is_wrong_beside_the_box() -> None:
    from engine.render.options import YOUR_MODEL

    for junk, said in (("{not json", "not valid JSON"), ("[1]", "must be a JSON object"),
                       ('{"model_type": "llama"}', "hidden_size: missing"),
                       ("", "empty"), ("[" * 20_000, "nests more than")):
        error = refused(model=YOUR_MODEL, config=junk)
        assert error.field == "config" and said in error.message


def test_hidden_config_is_not_read() -> None:
    # The box is hidden unless its choice is made: junk in it blocks nothing.
    assert "it fits" in text_of(render(model="llama-3.1-8b", config="{not json"))


def test_a_long_config_is_left_to_the_address_code() -> None:
    from engine.render.options import ADDRESS_MAX_CHARS, YOUR_MODEL

    # The page compresses a long config into the address, or keeps it in the tab, and says
    # so beside "Copy link": the engine's result makes no claim of its own about links.
    text = config_text("DeepSeek-V3")
    long_text = text + " " * (ADDRESS_MAX_CHARS - len(text) + 1)
    # (Only the config.json to download beside the command is the text as pasted.)
    config_file = re.compile(r'<p class="widget-command-file">.*?</p>')
    assert (config_file.sub("", render(model=YOUR_MODEL, config=long_text))
            == config_file.sub("", render(model=YOUR_MODEL, config=text)))
    # The address code takes its limits from the build (runtime-config.js), not typed again.
    address_js = (Path(__file__).resolve().parents[2] / "docs" / "js" / "address.js").read_text()
    assert "MAX_PLAIN_CHARS = RUNTIME.max_address_chars;" in address_js
    assert "MAX_ADDRESS_CHARS = RUNTIME.max_link_chars;" in address_js


def test_hostile_name_in_config_is_escaped() -> None:
    from engine.render.options import YOUR_MODEL

    data = json.loads(config_text("Llama-3.1-8B"))
    data["_name_or_path"] = "<img src=x onerror=alert(1)>"
    html = render(model=YOUR_MODEL, config=json.dumps(data))
    assert "<img" not in html and "&lt;img src=x" in html


def test_a_library_model_shows_what_the_reader_read_and_where_its_config_came_from() -> None:
    from engine.numbers.catalog.config_library import library_entry
    from engine.render.options import YOUR_MODEL

    library = render(model="meta-llama/Llama-3.1-8B")
    pasted = render(model=YOUR_MODEL, config=config_text("Llama-3.1-8B"))
    section = re.compile(r"as read from its config\.json</h2>(?:<p class=\"config-source\">"
                         r"(.*?)</p>)?(<dl .*?</dl>)")
    mine, theirs = section.search(library), section.search(pasted)
    assert mine and theirs
    assert "meta-llama/Llama-3.1-8B, as read from its config.json" in library
    # The same reading, row for row, as the same config.json pasted.
    assert mine.group(2) == theirs.group(2) and "8.03 billion (8,030,261,248)" in mine.group(2)
    entry = library_entry("meta-llama/Llama-3.1-8B")
    assert mine.group(1) == esc(f"Its published config.json, as vendored on GitHub in "
                                f"{entry.repo}: {entry.path} ({entry.entry}), at commit "
                                f"{entry.commit}.")
    assert theirs.group(1) is None
    # Without an entry inside the file, none is named.
    assert "EchoCog/gpt-oss-20b: config.json, at commit" in render(model="openai/gpt-oss-20b")
    assert "as read from its config.json" not in render(model="llama-3.1-8b")
