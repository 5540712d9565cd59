"""Every widget by name, found by looking: each module of this package that defines a
``WIDGET`` is one. Adding a widget is adding its module; nothing else to edit."""

from __future__ import annotations

import importlib
import pkgutil

from engine.errors import EngineError
from engine.widgets.base import Widget

_WIDGETS: dict[str, Widget] = {}


def _discover() -> dict[str, Widget]:
    import engine.widgets as package

    found: dict[str, Widget] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        widget = getattr(module, "WIDGET", None)
        if isinstance(widget, Widget):
            if widget.name in found:
                raise RuntimeError(f"two widgets are called {widget.name!r}")
            found[widget.name] = widget
    return found


def _widgets() -> dict[str, Widget]:
    if not _WIDGETS:
        _WIDGETS.update(_discover())
    return _WIDGETS


def get_widget(name: object) -> Widget:
    """The widget called ``name``; EngineError listing the known names otherwise."""
    widgets = _widgets()
    if isinstance(name, str) and name in widgets:
        return widgets[name]
    known = ", ".join(sorted(widgets))
    raise EngineError(f"Unknown widget {str(name)[:40]!r}; known widgets: {known}.", "widget")


def widget_names() -> list[str]:
    return sorted(_widgets())
