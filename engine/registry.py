"""Every widget by name, found by looking: each module of this package that defines a
``WIDGET`` is one, and the module has the widget's name. Adding a widget is adding its
module; nothing else to edit. Looking up one widget imports only its module, so the browser's
first render does not pay for every other widget."""

from __future__ import annotations

import importlib

from engine.numbers.errors import EngineError
from engine.render.widget import Widget

_WIDGETS: dict[str, Widget] = {}


def _discover() -> dict[str, Widget]:
    # Here, not at module level: the browser's start-up never needs the full list.
    import pkgutil

    import engine.widgets as package

    found: dict[str, Widget] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        widget = getattr(module, "WIDGET", None)
        if isinstance(widget, Widget):
            if widget.name != info.name:
                raise RuntimeError(f"widget {widget.name!r} must live in widgets/{widget.name}.py")
            found[widget.name] = widget
    return found


def _widgets() -> dict[str, Widget]:
    if not _WIDGETS:
        _WIDGETS.update(_discover())
    return _WIDGETS


def _import_one(name: str) -> Widget | None:
    if not name.isidentifier() or name.startswith("_"):
        return None
    try:
        module = importlib.import_module(f"engine.widgets.{name}")
    except ModuleNotFoundError:
        return None
    widget = getattr(module, "WIDGET", None)
    return widget if isinstance(widget, Widget) and widget.name == name else None


def get_widget(name: object) -> Widget:
    """The widget called ``name``; EngineError listing the known names otherwise."""
    if isinstance(name, str):
        if name in _WIDGETS:
            return _WIDGETS[name]
        found = _import_one(name)
        if found is not None:
            return found
    widgets = _widgets()
    if isinstance(name, str) and name in widgets:
        return widgets[name]
    known = ", ".join(sorted(widgets))
    raise EngineError(f"Unknown widget {str(name)[:40]!r}; known widgets: {known}.", "widget")


def widget_names() -> list[str]:
    return sorted(_widgets())
