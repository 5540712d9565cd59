"""Every calculator that offers "your model (paste a config.json)" computes for the pasted
model exactly what it computes for the same model from the catalogue: the published
Llama 3.1 8B config.json against the catalogue's Llama 3.1 8B (same shapes, 8,030,261,248
parameters), so only the model's name and the note on its origin differ."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.browser import update
from engine.lesson.plans.fields import CONFIG_FILE
from engine.numbers.catalog import get_model
from engine.numbers.catalog.hf_config import model_from_config
from engine.registry import get_widget, widget_names
from engine.render.options import ADDRESS_MAX_CHARS, CONFIG, YOUR_MODEL

LLAMA_CONFIG = (Path(__file__).parents[1] / "fixtures" / "configs" / "Llama-3.1-8B.json").read_text()
NOTE = re.compile(r'<p class="widget-note your-model-note">.*?</p>')
DOWNLOAD = re.compile(r'href="data:application/json;base64,[^"]*"')
CONFIG_DOWNLOAD = re.compile(r'<p class="widget-command-file">.*?</p>')

YOUR_MODEL_WIDGETS = [
    n for n in widget_names()
    if YOUR_MODEL in dict(get_widget(n).control("model").options if any(
        c.name == "model" for c in get_widget(n).controls) else ())
]


def test_every_single_model_calculator_offers_your_model() -> None:
    # The dgx-1 simulation's widgets keep catalogue models (their state names a model by id)
    # and the CPU/GPU race has its own fixed pair; every other model select offers it.
    assert set(YOUR_MODEL_WIDGETS) >= {
        "bandwidth_ceiling", "capacity_gate", "device_ladder", "five_questions",
        "layer_matrices", "mfu_calculator", "model_size", "playground", "request_timeline",
        "roofline_chart", "roofline_three_roofs", "serve_plan", "side_by_side",
        "train_vs_serve", "training_at_scale",
    }
    for name in YOUR_MODEL_WIDGETS:
        assert any(c.name == CONFIG.name for c in get_widget(name).controls), name


@pytest.mark.parametrize("name", [n for n in YOUR_MODEL_WIDGETS if n != "playground"])
def test_a_pasted_config_gives_the_same_figures_as_the_catalogue_model(name: str) -> None:
    widget = get_widget(name)
    catalogue = get_model("llama-3.1-8b")
    pasted = model_from_config(LLAMA_CONFIG).model
    assert pasted.params == catalogue.params == 8_030_261_248
    base = {"model": "llama-3.1-8b"}
    mine = widget.run(widget.defaults({**base, "model": YOUR_MODEL, "config": LLAMA_CONFIG})).html
    theirs = widget.run(widget.defaults(base)).html
    assert NOTE.search(mine) and not NOTE.search(theirs)
    assert "8.03 billion parameters" in NOTE.search(mine).group(0)  # type: ignore[union-attr]
    # ... the same but for a plan's command line, which reads the pasted config from a file
    # (offered for download beside it), and its JSON to download, which also gives what the
    # config says (tests/engine/test_plan_download.py holds it to the command's output).
    mine = CONFIG_DOWNLOAD.sub("", mine.replace(f"--config {CONFIG_FILE}", "--model llama-3.1-8b"))
    mine, theirs = (DOWNLOAD.sub("", html) for html in (mine, theirs))
    # The ladder says how many tokens Llama 3.1 really used only of a model it knows is one.
    theirs = re.sub(r"; Llama 3\.1 really used about [\d.,]+ \w+", "", theirs)
    assert NOTE.sub("", mine).replace(pasted.name, catalogue.name) == theirs


@pytest.mark.parametrize("name", ["serve_plan", "roofline_chart", "model_size"])
def test_a_bad_config_is_refused_naming_the_config_box(name: str) -> None:
    widget = get_widget(name)
    for junk in ("", "[1, 2]", "{", '{"hidden_size": -4}', "<script>alert(1)</script>"):
        reply = json.loads(update(name, json.dumps(widget.defaults(
            {"model": YOUR_MODEL, "config": junk}))))
        assert "html" not in reply
        assert reply["field"] == "config"
        assert "<script>" not in reply["error"]


def test_the_config_box_is_not_read_while_a_catalogue_model_is_chosen() -> None:
    widget = get_widget("serve_plan")
    reply = json.loads(update("serve_plan", json.dumps(widget.defaults({"config": "{junk"}))))
    assert "html" in reply


def test_a_long_config_reads_as_a_short_one() -> None:
    # How far a link carries it is the page's to say (docs/js/address.js), not the result's.
    widget = get_widget("serve_plan")
    padded = LLAMA_CONFIG.rstrip()[:-1] + ', "_padding": "' + "x" * ADDRESS_MAX_CHARS + '"}'
    long_html = widget.run(widget.defaults({"model": YOUR_MODEL, "config": padded})).html
    short_html = widget.run(widget.defaults({"model": YOUR_MODEL, "config": LLAMA_CONFIG})).html
    # ... but for the config.json to download beside its command: the text as pasted.
    assert CONFIG_DOWNLOAD.sub("", long_html) == CONFIG_DOWNLOAD.sub("", short_html)


