"""What a widget is: labelled controls, a pure compute-and-render function, and its page HTML.

A widget's ``render`` takes the reader's inputs (text, as a form gives them) and returns the
result as HTML; it raises :class:`~engine.errors.EngineError` naming the field when an input
is bad. The same function renders the page at build time and runs in the browser (Pyodide),
so no number is ever computed twice or in JavaScript.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from engine.errors import EngineError
from engine.widgets.html import esc, json_island, tag, void_tag

Inputs = Mapping[str, str]

CONTROL_KINDS = ("number", "select", "range", "text")


@dataclass(frozen=True, slots=True)
class Control:
    """One labelled form control. ``default`` is text, exactly as the form would send it."""

    name: str
    label: str
    kind: str
    default: str
    options: tuple[tuple[str, str], ...] = ()  # (value, label) pairs for a select
    minimum: float | None = None
    maximum: float | None = None
    step: str = "any"
    unit: str = ""
    hint: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CONTROL_KINDS:
            raise ValueError(f"control {self.name}: kind must be one of {CONTROL_KINDS}")
        if self.kind == "select" and not self.options:
            raise ValueError(f"control {self.name}: a select needs options")


@dataclass(frozen=True, slots=True)
class Widget:
    """A widget: its name (used in markdown), a title, its controls and its render function."""

    name: str
    title: str
    controls: tuple[Control, ...]
    render: Callable[[Inputs], str]
    summary: str = ""

    def control(self, name: str) -> Control:
        for control in self.controls:
            if control.name == name:
                return control
        raise EngineError(f"Widget {self.name!r} has no input {name!r}.", name)

    def defaults(self, overrides: Mapping[str, object] | None = None) -> dict[str, str]:
        """The control defaults with an author's overrides applied (unknown names refused)."""
        values = {c.name: c.default for c in self.controls}
        for key, value in (overrides or {}).items():
            if key not in values:
                known = ", ".join(values) or "none"
                raise EngineError(
                    f"Widget {self.name!r} has no input {key!r}; its inputs are: {known}.", key
                )
            values[key] = str(value)
        return values


def render_control(control: Control, instance: str, value: str) -> str:
    """A control with its visible label, unit, hint and the slot for its error message."""
    control_id = f"{instance}-{control.name}"
    error_id = f"{control_id}-error"
    described = error_id + (f" {control_id}-hint" if control.hint else "")
    common = {"id": control_id, "name": control.name, "aria_describedby": described}
    if control.kind == "select":
        options = "".join(
            tag("option", esc(label), value=opt, selected=(opt == value))
            for opt, label in control.options
        )
        field_html = tag("select", options, **common)
    else:
        input_type = "range" if control.kind == "range" else "text"
        field_html = void_tag(
            "input",
            type=input_type,
            value=value,
            inputmode="decimal" if control.kind == "number" else None,
            min=control.minimum if control.kind == "range" else None,
            max=control.maximum if control.kind == "range" else None,
            step=control.step if control.kind == "range" else None,
            autocomplete="off",
            spellcheck="false" if control.kind != "text" else None,
            **common,
        )
    unit = tag("span", esc(control.unit), class_="widget-unit") if control.unit else ""
    hint = (
        tag("span", esc(control.hint), class_="widget-hint", id=f"{control_id}-hint")
        if control.hint
        else ""
    )
    error = tag(
        "span", "", class_="widget-error", id=error_id, data_error_for=control.name, role="alert"
    )
    label = tag("label", esc(control.label), for_=control_id)
    return tag("div", label + field_html + unit + hint + error, class_="widget-field")


def render_page_widget(widget: Widget, instance: str, overrides: Mapping[str, object]) -> str:
    """The full widget as written into the page at build time, with its build-time result.

    Raises EngineError when an override names no input or gives a value the engine refuses,
    so a bad widget line fails the build with the engine's own message.
    """
    values = widget.defaults(overrides)
    result = widget.render(values)
    controls = "".join(render_control(c, instance, values[c.name]) for c in widget.controls)
    form = tag("form", controls, class_="widget-controls", aria_label=widget.title)
    output_for = " ".join(f"{instance}-{c.name}" for c in widget.controls)
    output = tag("output", result, class_="widget-result", for_=output_for, aria_live="polite")
    status = tag(
        "p",
        "Numbers computed when this page was built. Live updates start once the engine loads.",
        class_="widget-status",
        role="status",
    )
    title = tag("p", esc(widget.title), class_="widget-title")
    return tag(
        "div",
        title + form + output + status,
        class_="widget",
        id=instance,
        data_widget=widget.name,
        data_state="static",
        # The build-time inputs as a JSON island. An attribute, not a <script> element: the
        # theme's instant navigation re-runs every inline script it finds in a new page.
        data_inputs=json_island(values),
    )
