"""The entry point the browser calls through Pyodide: text in, text (JSON) out.

Strings cross the JavaScript boundary without proxies, so the worker passes the inputs as
JSON and parses the JSON it gets back; no Python object leaks into JavaScript.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from engine.browser_archives import add as add_archive
from engine.numbers import bounded_json
from engine.numbers.catalog._data import read_apart_with as catalog_reads_apart_with
from engine.numbers.errors import EngineError
from engine.registry import get_widget

__all__ = ["MAX_INPUT_CHARS", "add_archive", "update"]

MAX_INPUT_CHARS = 200_000


def read_apart_with(read: Callable[[str], str | None]) -> None:
    """Have the engine read the catalogue files shipped apart from its archive (the config
    library) with ``read``: a file's name ('config_library') -> its JSON text, None when it
    cannot be had. The worker calls this once, with a fetch of the file beside the archive."""
    catalog_reads_apart_with(read)


def update(name: str, inputs_json: str) -> str:
    """Render widget ``name`` for the reader's inputs (and the pressed button, if any).

    Returns ``{"html": ..., "set": {input: value}}`` on success (with ``"notes": {input:
    text}`` when the widget has something to say beside an input it accepted) and
    ``{"error": message, "field": input}`` when the engine refuses an input. Inputs the
    widget does not have are ignored; missing ones take their defaults. An unexpected
    failure (a bug) is reported the same way, so the page shows a message instead of breaking.
    """
    try:
        raw = bounded_json.loads(
            inputs_json, what="This set of inputs", field="widget", max_chars=MAX_INPUT_CHARS,
            max_depth=4,
        )
        if not isinstance(raw, dict):
            raise EngineError("Inputs must be a set of named values.", "widget")
        widget = get_widget(name)
        values = widget.defaults()
        values.update({k: str(v) for k, v in raw.items() if k in values})
        action = str(raw.get("action", ""))
        rendered = widget.run(values, action)
        reply: dict[str, object] = {"html": rendered.html, "set": dict(rendered.set_inputs)}
        if rendered.notes:
            reply["notes"] = dict(rendered.notes)
        return json.dumps(reply)
    except EngineError as error:
        return json.dumps(error.to_dict())
    except Exception as error:  # a bug: say so, keep the page working
        message = f"The engine failed on these inputs ({type(error).__name__}); please report it."
        return json.dumps({"error": message, "field": "widget", "internal": True})
