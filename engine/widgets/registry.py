"""Every widget by name: the one place a new widget is registered."""

from __future__ import annotations

from engine.errors import EngineError
from engine.widgets.base import Widget


def _all_widgets() -> dict[str, Widget]:
    from engine.widgets import model_size, serve_plan

    widgets = (model_size.WIDGET, serve_plan.WIDGET)
    return {w.name: w for w in widgets}


_WIDGETS: dict[str, Widget] = {}


def get_widget(name: object) -> Widget:
    """The widget called ``name``; EngineError listing the known names otherwise."""
    if not _WIDGETS:
        _WIDGETS.update(_all_widgets())
    if isinstance(name, str) and name in _WIDGETS:
        return _WIDGETS[name]
    known = ", ".join(sorted(_WIDGETS))
    raise EngineError(f"Unknown widget {str(name)[:40]!r}; known widgets: {known}.", "widget")


def widget_names() -> list[str]:
    if not _WIDGETS:
        _WIDGETS.update(_all_widgets())
    return sorted(_WIDGETS)
