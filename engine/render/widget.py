"""What a widget is: its fields, a pure compute-and-render function, and its page HTML.

A widget declares its inputs as fields (:mod:`engine.render.fields`: name, label, unit,
sensible range, default), each shown as a labelled control; its ``render`` reads them as
typed values (``values[CONTEXT]``, parsed and checked by the field) and returns the result as
HTML, or a :class:`Rendered` that also sets some inputs (a simulation's new state, a drill's
next question). A bad input raises :class:`~engine.numbers.errors.EngineError` naming the
field, shown beside it. The same function renders the page at build time and runs in the
browser (Pyodide), so no number is ever computed twice or in JavaScript.

Besides visible controls a widget may have:
- hidden inputs (fields made with :func:`~engine.render.fields.hidden`): state the engine hands back to itself, such as the
  simulated dgx-1 (JSON text) or the elapsed time of an animation;
- actions: buttons; the pressed one arrives as ``values.action`` (empty otherwise);
- a store (``"session:dgx-1"``, ``"local:drill-training-memory"``): the browser keeps that hidden input on
  the reader's device, shared by every widget with the same store, across pages;
- a clock: the browser advances the hidden input ``elapsed`` while it runs (it only counts
  time; the engine computes what that time means);
- URL state: the named inputs are mirrored in the page address, so a link reproduces them.

Every widget's frame has a "Copy link" button: the link carries :attr:`Widget.link_inputs`
and points at the widget; a widget whose question is a plan declares its :attr:`Widget.command`
(the ``python -m engine`` lines that print every figure it shows), which its result offers
(:func:`copy_command`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine.numbers.errors import EngineError
from engine.render.fields import Control, Field, Numeric, Values
from engine.render.html import esc, json_island, tag, void_tag
from engine.render.table_labels import stack_tables

__all__ = ["Action", "Command", "Control", "Rendered", "Values", "Widget"]

STORE_KINDS = ("session", "local")


@dataclass(frozen=True, slots=True)
class Rendered:
    """A result's HTML plus inputs to set for the next call (name -> text), and notes to show
    beside some inputs (name -> text): accepted values a reader should know about (a context
    beyond the model's maximum), never refusals."""

    html: str
    set_inputs: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    # What the widget's command prints with --json, offered for download beside it, when the
    # render has it at hand (a plan's JSON); None: no download.
    result_json: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True)
class Command:
    """The command lines that print, at a terminal, every figure a widget shows for its
    inputs (one plan a line: a widget comparing several plans has several), and the files
    they read: (file name, its text), such as a pasted config.json, offered for download."""

    lines: tuple[str, ...]
    files: tuple[tuple[str, str], ...] = ()


RenderFunction = Callable[[Values], "str | Rendered"]
CommandFunction = Callable[[Values], Command]


@dataclass(frozen=True, slots=True)
class Action:
    """A button: ``name`` arrives as inputs['action'] when pressed."""

    name: str
    label: str
    primary: bool = False
    # Hidden as the page opens; the widget's stylesheet shows it once its result offers it
    # (launch_training's "Apply way out N", docs/css/dgx.css).
    hidden: bool = False


@dataclass(frozen=True, slots=True)
class Widget:
    """A widget: its name (used in markdown), a title, its fields and its render function."""

    name: str
    title: str
    fields: tuple[Field[Any], ...]
    render: RenderFunction
    summary: str = ""
    actions: tuple[Action, ...] = ()
    store: str = ""  # "session:KEY" or "local:KEY": keeps the hidden input `state`
    clock: bool = False  # the browser advances the hidden input `elapsed` while running
    url_state: tuple[str, ...] = ()  # inputs mirrored in the page address
    # What the widget asks of a reader, for the lesson's reading time (macros/reading_time.py):
    # a drill's correct answers that complete it (0: not a drill), and a clock's real seconds
    # from the start of its animation to its end at given inputs.
    goal_answers: int = 0
    running_seconds: Callable[[Values], float] | None = None
    # A plan's command lines for the inputs it rendered (read only after a render succeeded:
    # the inputs are then checked), shown under the result with "Copy as command".
    command: CommandFunction | None = None

    def __post_init__(self) -> None:
        names = {f.name for f in self.fields}
        if len(names) != len(self.fields):
            raise ValueError(f"widget {self.name}: two fields share a name")
        if "action" in names:
            raise ValueError("'action' is reserved for the pressed button")
        if self.store:
            kind, _, key = self.store.partition(":")
            if kind not in STORE_KINDS or not key:
                raise ValueError(f"widget {self.name}: store must be 'session:KEY' or 'local:KEY'")
            if "state" not in names:
                raise ValueError(f"widget {self.name}: a store needs a hidden 'state' input")
        if not set(self.url_state) <= names:
            raise ValueError(f"widget {self.name}: url_state names inputs it does not have")
        if self.clock and "elapsed" not in names:
            raise ValueError(f"widget {self.name}: a clock needs a hidden 'elapsed' input")
        if self.clock != (self.running_seconds is not None):
            raise ValueError(f"widget {self.name}: a clock, and only a clock, says its running_seconds")
        if self.goal_answers < 0:
            raise ValueError(f"widget {self.name}: goal_answers counts answers (0 or more)")

    @property
    def link_inputs(self) -> tuple[str, ...]:
        """The inputs a copied link carries: the address state when the widget declares one
        (a drill's seed, not the reader's answer), else every visible input. Hidden state
        (a simulation, a clock) stays on the reader's device."""
        return self.url_state or tuple(c.name for c in self.controls if c.kind != "hidden")

    @property
    def controls(self) -> tuple[Control, ...]:
        """The form controls its fields declare, in order."""
        return tuple(f.control for f in self.fields)

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

    def run(self, values: Mapping[str, str], action: str = "") -> Rendered:
        """Render for complete ``values`` (one per control) and an optional pressed action."""
        if action and action not in {a.name for a in self.actions}:
            raise EngineError(f"Widget {self.name!r} has no button {action[:40]!r}.", "action")
        typed = Values(values, action)
        result = self.render(typed)
        rendered = result if isinstance(result, Rendered) else Rendered(result)
        # A number typed as shorthand ('8k') says beside it what it was read as.
        shorthand = {f.name: note for f in typed.read() if isinstance(f, Numeric)
                     and f.name not in rendered.notes
                     and (note := f.shorthand_note(values[f.name]))}
        if shorthand:
            rendered = replace(rendered, notes={**rendered.notes, **shorthand})
        # Its tables labelled so that a phone can stack their rows (table_labels.py).
        page = stack_tables(rendered.html)
        if self.command is not None:
            page += copy_command(self.command(typed), rendered.result_json)
        return replace(rendered, html=page)


def _select_options(control: Control, value: str) -> str:
    """A select's options, those of one group (``control.option_groups``) in an optgroup; an
    option shown as its value goes without the attribute (its text is its value)."""
    groups = control.option_groups or ("",) * len(control.options)
    runs: list[tuple[str, list[str]]] = []
    for (opt, label), group in zip(control.options, groups, strict=True):
        option = tag("option", esc(label), value=None if opt == label else opt,
                     selected=(opt == value))
        if runs and runs[-1][0] == group:
            runs[-1][1].append(option)
        else:
            runs.append((group, [option]))
    return "".join(tag("optgroup", "".join(options), label=group) if group else "".join(options)
                   for group, options in runs)


def render_control(control: Control, instance: str, value: str, note: str = "") -> str:
    """A control with its visible label, unit, hint and the slot for its error message (or,
    when the result accepted it with a ``note``, that note)."""
    control_id = f"{instance}-{control.name}"
    if control.kind == "hidden":
        return void_tag("input", type="hidden", id=control_id, name=control.name, value=value)
    error_id = f"{control_id}-error"
    described = error_id + (f" {control_id}-hint" if control.hint else "")
    common = {"id": control_id, "name": control.name, "aria_describedby": described}
    if control.kind == "select":
        field_html = tag("select", _select_options(control, value), **common)
    elif control.kind == "textarea":
        field_html = tag("textarea", esc(value), rows="8", autocomplete="off", spellcheck="false",
                         data_max_chars=control.max_chars, **common)
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
            aria_valuetext=_value_text(control, value),
            data_value_texts=json.dumps(control.value_texts) if control.value_texts else None,
            autocomplete="off",
            spellcheck="false" if control.kind != "text" else None,
            **common,
        )
    shown_value = _value_text(control, value) if control.shows_value else None
    if shown_value is not None:
        # The notch's words in view; hidden from screen readers, which hear aria-valuetext.
        field_html += tag("output", esc(shown_value), for_=control_id, class_="widget-value",
                          aria_hidden="true")
    unit = tag("span", esc(control.unit), class_="widget-unit") if control.unit else ""
    hint = (
        tag("span", esc(control.hint), class_="widget-hint", id=f"{control_id}-hint")
        if control.hint
        else ""
    )
    error = tag(
        "span", esc(note), class_="widget-error" + (" widget-note" if note else ""), id=error_id,
        data_error_for=control.name, role="alert",
    )
    label = tag("label", esc(control.label), for_=control_id)
    return tag("div", label + field_html + unit + hint + error, class_="widget-field",
               hidden=control.starts_hidden or None)


def render_actions(widget: Widget) -> str:
    """The widget's buttons, and for a clock its play/pause/restart buttons (browser-side)."""
    buttons = [
        tag(
            "button",
            esc(a.label),
            type="button",
            class_="md-button" + (" md-button--primary" if a.primary else ""),
            data_action=a.name,
            hidden=a.hidden or None,
        )
        for a in widget.actions
    ]
    if widget.clock:
        buttons += [
            tag("button", "Start", type="button", class_="md-button md-button--primary", data_clock="play"),
            tag("button", "Pause", type="button", class_="md-button", data_clock="pause"),
            tag("button", "Restart", type="button", class_="md-button", data_clock="restart"),
        ]
    if not buttons:
        return ""
    errors = tag("span", "", class_="widget-error", data_error_for="action", role="alert")
    return tag("div", "".join(buttons) + errors, class_="widget-actions")


def _value_text(control: Control, value: str) -> str | None:
    """A slider's words for ``value`` (its notch, as text), or None where it has none."""
    if not control.value_texts or control.minimum is None:
        return None
    try:
        notch = int(value) - int(control.minimum)
    except ValueError:
        return None
    return control.value_texts[notch] if 0 <= notch < len(control.value_texts) else None


def _copy_row(button_label: str, button_name: str, kind: str, text_label: str,
              extra: str = "") -> str:
    """A copy button, its status (role=status) and the text field shown, selected, when the
    browser cannot write the clipboard; ``extra`` is HTML placed after them."""
    button = tag("button", esc(button_label), type="button", class_="md-button widget-copy-button",
                 data_copy=kind, aria_label=button_name)
    field = void_tag("input", type="text", readonly=True, hidden=True, class_="widget-copy-text",
                     aria_label=text_label)
    status = tag("span", "", class_="widget-copy-status", role="status")
    return tag("div", button + status + field + extra, class_=f"widget-copy widget-copy-{kind}")


# The site's page on installing the engine, named by its source file: the engine does not
# know which page a widget is on, so the build writes each link's address for its page and the
# browser keeps that address when it renders the result again.
ENGINE_PAGE = "get-engine.md"


def file_download(content: str, file_name: str, text: str,
                  media_type: str = "application/json") -> str:
    """A link that saves ``content`` as the file ``file_name`` (of ``media_type``); the file
    is in the link itself (a data: address), so it needs no script and works offline."""
    address = f"data:{media_type};base64," + base64.b64encode(content.encode()).decode()
    return tag("a", esc(text), href=address, download=file_name, class_="widget-download")


def json_download(data: Mapping[str, object], file_name: str, text: str) -> str:
    """A link that saves ``data`` as the file ``file_name``, JSON as the command line prints
    it (two-space indent, a final newline)."""
    return file_download(json.dumps(data, indent=2, allow_nan=False) + "\n", file_name, text)


def copy_command(command: Command, result_json: Mapping[str, object] | None = None) -> str:
    """A widget's command lines in its result, with a button that copies them and a link to
    the page that says how to get the engine (shown on request: it is for engineers at a
    terminal, and the reader's time goes to the lesson); each file the lines read (a pasted
    config.json) to download beside them; with ``result_json``, what the command prints
    with ``--json``, to download."""
    these = "this line" if len(command.lines) == 1 else "these lines"
    get_engine = tag("p", tag("a", "Get the engine", data_site_page=ENGINE_PAGE)
                     + f": install it into your own Python to run {these}.",
                     class_="widget-command-help")
    files = "".join(
        tag("p", file_download(content, name, f"Download {name}")
            + f": the file {these} read{'s' if len(command.lines) == 1 else ''}; save it "
            "in the folder you run from.", class_="widget-command-file")
        for name, content in command.files
    )
    download = "" if result_json is None else tag(
        "p", json_download(result_json, "plan.json", "Download the result as JSON")
        + f": what {these} print{'s' if len(command.lines) == 1 else ''} with --json.",
        class_="widget-command-json")
    shown = tag("details", tag("summary", "Show the command")
                + tag("pre", tag("code", esc("\n".join(command.lines)),
                                 class_="widget-command-text"))
                + files + download + get_engine)
    return _copy_row("Copy as command", "Copy as command: the same plan at a terminal",
                     "command", "The command, to copy", shown)


# The summary of a folded form (render_page_widget's fold_controls).
FOLDED_CONTROLS_SUMMARY = "Change inputs"


def render_page_widget(widget: Widget, instance: str, overrides: Mapping[str, object], *,
                       fold_controls: bool = False) -> str:
    """The full widget as written into the page at build time, with its build-time result.
    With ``fold_controls`` its fields (when it has one) wait in a closed <details>, its
    buttons stay: a widget the step asks the reader only to look at shows its result first.

    Raises EngineError when an override names no input or gives a value the engine refuses,
    so a bad widget line fails the build with the engine's own message.
    """
    values = widget.defaults(overrides)
    rendered = widget.run(values)
    values.update(rendered.set_inputs)
    controls = "".join(render_control(c, instance, values[c.name], rendered.notes.get(c.name, ""))
                       for c in widget.controls)
    if fold_controls and any(c.kind != "hidden" for c in widget.controls):
        # Its buttons (a clock's Start) stay in view: they are what the reader presses.
        controls = tag("details", tag("summary", FOLDED_CONTROLS_SUMMARY) + controls,
                       class_="widget-inputs")
    form = tag(
        "form", controls + render_actions(widget), class_="widget-controls", aria_label=widget.title
    )
    output_for = " ".join(f"{instance}-{c.name}" for c in widget.controls if c.kind != "hidden")
    output = tag(
        "output", rendered.html, class_="widget-result", for_=output_for, aria_live="polite"
    )
    status = tag(
        "p",
        "Build-time figures.",
        class_="widget-status",
        role="status",
    )
    title = tag("p", esc(widget.title), class_="widget-title")
    # A widget whose every input is hidden state (the dgx-1 panel: the simulation, kept on the
    # reader's device) would copy a link that carries nothing: it offers none.
    share = (
        _copy_row("Copy link", "Copy link to this widget with its inputs", "link",
                  "Link to this widget, to copy")
        if widget.link_inputs
        else ""
    )
    return tag(
        "div",
        title + form + output + share + status,
        class_="widget",
        id=instance,
        data_widget=widget.name,
        data_state="static",
        data_store=widget.store or None,
        # "true", not a bare attribute: a bare one reads as "" (falsy) in element.dataset.
        data_clock="true" if widget.clock else None,
        data_url_state=",".join(widget.url_state) or None,
        data_link_inputs=",".join(widget.link_inputs) or None,
        # Numbers that change with every input are no use in the search index, and a
        # smaller index leaves the reader's CPU to the engine while the page loads.
        data_search_exclude=True,
        # The build-time inputs as a JSON island. An attribute, not a <script> element: the
        # theme's instant navigation re-runs every inline script it finds in a new page.
        data_inputs=json_island(values),
    )
