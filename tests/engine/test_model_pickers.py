"""Every widget's model select offers the config library, grouped: the lesson's models first,
the reader's own, then the library by family. A library model flows through every figure of
the widget (Meta's Llama 3.1 8B config.json gives the catalogue's Llama 3.1 8B), through "Copy
as command" (its ``--model ID`` line, run by the command line, gives the same figures) and
is refused by name when it is none of the list's."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex

import pytest

from engine.browser import update
from engine.cli import main
from engine.numbers.catalog import _data
from engine.numbers.catalog.config_library import library_ids, library_options
from engine.numbers.errors import EngineError
from engine.registry import get_widget, widget_names
from engine.render.options import LESSON_MODELS_GROUP, YOUR_MODEL, YOUR_OWN_GROUP
from engine.render.widget import render_control
from macros.wheel import apart_json, catalog_json

NOTE = re.compile(r'<p class="widget-note your-model-note">.*?</p>')
DOWNLOAD = re.compile(r'href="data:application/json;base64,[^"]*"')
LIBRARY_LLAMA = "meta-llama/Llama-3.1-8B"
GPT_OSS = "openai/gpt-oss-20b"

PICKER_WIDGETS = [
    n for n in widget_names()
    if any(c.name == "model" and YOUR_MODEL in dict(c.options) for c in get_widget(n).controls)
]


def test_every_model_select_that_takes_any_model_offers_the_library_grouped() -> None:
    assert len(PICKER_WIDGETS) >= 15
    for name in PICKER_WIDGETS:
        control = get_widget(name).control("model")
        values = [v for v, _ in control.options]
        assert values[-len(library_ids()):] == [o.id for o in library_options()], name
        assert control.option_groups[0] == LESSON_MODELS_GROUP, name
        assert control.option_groups[values.index(YOUR_MODEL)] == YOUR_OWN_GROUP, name
        assert control.option_groups[values.index(GPT_OSS)] == "Library: openai", name


def test_the_select_shows_each_group_once_as_an_optgroup() -> None:
    control = get_widget("model_size").control("model")
    html = render_control(control, "w", GPT_OSS)
    groups = re.findall(r'<optgroup label="([^"]*)">', html)
    assert groups[:2] == [LESSON_MODELS_GROUP, YOUR_OWN_GROUP]
    assert len(groups) == len(set(groups)) == 2 + len({o.family for o in library_options()})
    assert "<option selected>openai/gpt-oss-20b</option>" in html
    # The families in alphabetical order, case aside.
    families = [g.removeprefix("Library: ") for g in groups[2:]]
    assert families == sorted(families, key=str.lower)


@pytest.mark.parametrize("name", [n for n in PICKER_WIDGETS if n != "playground"])
def test_a_library_model_gives_the_same_figures_as_the_catalogue_model(name: str) -> None:
    widget = get_widget(name)
    mine = widget.run(widget.defaults({"model": LIBRARY_LLAMA})).html
    theirs = widget.run(widget.defaults({"model": "llama-3.1-8b"})).html
    note = NOTE.search(mine)
    assert note and not NOTE.search(theirs)
    assert f"Figures for {LIBRARY_LLAMA}" in note.group(0)
    assert "8.03 billion parameters" in note.group(0)
    mine = NOTE.sub("", mine).replace(f"--model {LIBRARY_LLAMA}", "--model llama-3.1-8b")
    mine, theirs = (DOWNLOAD.sub("", html) for html in (mine, theirs))
    # The ladder says how many tokens Llama 3.1 really used only of the catalogue's model.
    theirs = re.sub(r"; Llama 3\.1 really used about [\d.,]+ \w+", "", theirs)
    assert mine.replace(LIBRARY_LLAMA, "Llama 3.1 8B") == theirs


@pytest.mark.parametrize("name", ["model_size", "capacity_gate", "five_questions"])
def test_gpt_oss_20b_is_sized_from_its_config(name: str) -> None:
    reply = json.loads(update(name, json.dumps({"model": GPT_OSS})))
    assert "20.9 billion parameters" in reply["html"]
    assert "active per token" in reply["html"]


def _run(line: str) -> dict[str, object]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(shlex.split(line)[3:])
    assert code == 0, line
    result: dict[str, object] = json.loads(out.getvalue())
    return result


@pytest.mark.parametrize("name", ["capacity_gate", "serve_plan", "five_questions"])
def test_copy_as_command_names_the_library_model(name: str) -> None:
    widget = get_widget(name)
    assert widget.command is not None
    values = widget.defaults({"model": GPT_OSS})
    from engine.render.fields import Values

    lines = widget.command(Values(values)).lines
    assert lines and all(f"--model {GPT_OSS}" in line for line in lines)
    result = _run(lines[0] + " --json")
    model = result["model"]
    assert isinstance(model, dict) and model["params"] == 20_914_755_648


def test_a_bad_id_is_refused_by_name() -> None:
    for bad in ("openai/gpt-oss-21b", "Qwen/qwen3-8b", "<b>x</b>"):
        reply = json.loads(update("model_size", json.dumps({"model": bad})))
        assert reply["field"] == "model" and "html" not in reply
        assert repr(bad) in reply["error"]


def test_the_browsers_wheel_carries_the_librarys_ids_and_the_configs_ship_apart() -> None:
    shipped = {"engine/numbers/catalog/config_library.pyc", "engine/numbers/catalog/models.pyc"}
    files = catalog_json(shipped)
    assert sorted(files) == ["engine/numbers/catalog/data/config_library.ids.json",
                             "engine/numbers/catalog/data/models.json"]
    ids = json.loads(files["engine/numbers/catalog/data/config_library.ids.json"])
    assert ids == library_ids()
    apart = apart_json()
    assert list(apart) == ["config_library.json"]
    assert json.loads(apart["config_library.json"]) == _data.parse_toml("config_library")


def test_a_library_that_cannot_be_fetched_is_a_message_on_the_model_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # As in the browser: the package without the library's JSON, and a page that is offline.
    monkeypatch.setattr(_data, "_read_apart", [lambda name: None])
    with pytest.raises(EngineError, match="could not download the config library") as refused:
        _data.load.__wrapped__("config_library")
    assert refused.value.field == "model"
    monkeypatch.setattr(_data, "_read_apart", [lambda name: '{"configs": {}}'])
    assert _data.load.__wrapped__("config_library") == {"configs": {}}
