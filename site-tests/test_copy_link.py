"""Copy link, copy as command, phones.

A widget's "Copy link" gives an address that, opened in a fresh browser (a new context: no
storage, no history), shows the same inputs and the same result; without the clipboard API
the link is shown in a selected text field instead. A plan's "Copy as command" copies the
command lines the engine wrote, and those lines run through the command line give the answers
the widget shows; a pasted config.json is offered for download beside them. At 390 px no table cell on any page lies outside the screen.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect
from support import (
    Site,
    Watched,
    hidden_in_details,
    open_watched,
    pages,
    result,
    run_axe,
    wait_live,
    wait_matches_cpython,
)

from engine.cli import main
from engine.lesson.plans.fields import COMMAND
from engine.registry import get_widget
from engine.render.fields import Values

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"

CLIPBOARD = {"permissions": ["clipboard-read", "clipboard-write"]}
NO_CLIPBOARD = "Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined });"

# One widget per kind of input: selects only, a typed number, a plan; and one input to
# change once the link is open.
CASES = [
    ("steps/bandwidth/", "bandwidth_ceiling",
     {"model": "llama-3.1-70b", "format": "fp8", "hardware": "h200"}, ("format", "bf16")),
    ("steps/capacity/", "capacity_gate", {"context": "32768", "format": "int8"},
     ("context", "4096")),
    ("steps/five-questions/", "five_questions",
     {"task": "train", "model": "llama-3.1-70b", "gpus": "64", "mfu": "0.35",
      "sharding": "zero3"}, ("gpus", "32")),
]


@contextlib.contextmanager
def opened(browser: Browser, **options: object) -> Iterator[Watched]:
    watched = open_watched(browser, **options)
    try:
        yield watched
        assert watched.console_errors == []
    finally:
        watched.context.close()


def change(page: Page, selector: str, inputs: dict[str, str]) -> None:
    for name, value in inputs.items():
        field = page.locator(f"{selector} .widget-controls [name={name}]")
        if field.evaluate("f => f.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)


def copy(page: Page, selector: str, kind: str) -> str:
    """Press the widget's copy button of ``kind``; the clipboard's text once it says so."""
    row = f"{selector} .widget-copy-{kind}"
    page.click(f"{row} [data-copy={kind}]")
    page.wait_for_function(
        "row => document.querySelector(row + ' .widget-copy-status').textContent.startsWith('Copied.')",
        arg=row,
    )
    return str(page.evaluate("navigator.clipboard.readText()"))


@pytest.mark.parametrize(("path", "name", "inputs", "later"), CASES, ids=[c[1] for c in CASES])
def test_a_copied_link_shows_the_same_state_in_a_fresh_browser(
    browser: Browser, root_site: Site, path: str, name: str, inputs: dict[str, str],
    later: tuple[str, str],
) -> None:
    selector = f"[data-widget={name}]"
    with opened(browser, **CLIPBOARD) as first:
        page = first.page
        page.goto(root_site.page_url(path))
        wait_live(page)
        change(page, selector, inputs)
        shown = wait_matches_cpython(page, name)
        assert {k: shown.inputs[k] for k in inputs} == inputs
        widget_id = page.get_attribute(selector, "id")
        link = copy(page, selector, "link")
    parts = urlsplit(link)
    assert parts.fragment == widget_id
    assert parts.path == urlsplit(root_site.page_url(path)).path
    # Every input a link carries, defaults too, under the widget's name; nothing else.
    assert dict(parse_qsl(parts.query, keep_blank_values=True)) == {
        f"{name}.{k}": v for k, v in shown.inputs.items()
    }
    with opened(browser) as fresh:
        page = fresh.page
        page.goto(link)
        wait_live(page)
        again = wait_matches_cpython(page, name)
        assert again == shown
        assert "Ignored" not in page.inner_text(f"{selector} .widget-status")
        # The address keeps following the widget the link opened.
        change(page, selector, dict([later]))
        page.wait_for_function(
            "([key, value]) => new URLSearchParams(location.search).get(key) === value",
            arg=[f"{name}.{later[0]}", later[1]],
        )


def test_without_the_clipboard_the_link_is_shown_selected(browser: Browser, root_site: Site) -> None:
    path, name, inputs, _ = CASES[1]
    selector = f"[data-widget={name}]"
    with opened(browser) as first:
        page = first.page
        page.add_init_script(NO_CLIPBOARD)
        page.goto(root_site.page_url(path))
        wait_live(page)
        change(page, selector, inputs)
        shown = wait_matches_cpython(page, name)
        page.click(f"{selector} [data-copy=link]")
        field = page.locator(f"{selector} .widget-copy-link .widget-copy-text")
        field.wait_for(state="visible")
        assert page.inner_text(f"{selector} .widget-copy-link .widget-copy-status").startswith(
            "Selected: press Ctrl+C"
        )
        link = field.input_value()
        assert page.evaluate("() => String(window.getSelection())") == link or field.evaluate(
            "f => f === document.activeElement && f.selectionStart === 0 "
            "&& f.selectionEnd === f.value.length"
        )
        assert field.get_attribute("aria-label")
        # A changed input clears the status: the link shown no longer says what is on screen.
        change(page, selector, {"context": "4096"})
        field.wait_for(state="hidden")
    with opened(browser) as fresh:
        fresh.page.goto(link)
        wait_live(fresh.page)
        assert wait_matches_cpython(fresh.page, name) == shown


def test_copy_as_command_gives_the_answers_the_widget_shows(
    watched: Watched, root_site: Site
) -> None:
    path, name, inputs, _ = CASES[2]
    selector = f"[data-widget={name}]"
    watched.context.grant_permissions(CLIPBOARD["permissions"])
    page = watched.page
    page.goto(root_site.page_url(path))
    wait_live(page)
    change(page, selector, inputs)
    wait_matches_cpython(page, name)
    command = copy(page, selector, "command")
    assert command == page.text_content(f"{selector} .widget-command-text")
    assert "--task train" in command and "--mfu 0.35" in command and "--gpus 64" in command
    words = shlex.split(command)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*words[len(COMMAND) - 1:], "--json"]) == 0
    answers = json.loads(out.getvalue())["answers"]
    # The full answers are the widget's workings, in its closed details (one line each shows).
    workings = hidden_in_details(result(page.locator(selector)).locator("details.widget-notes"))
    for words_shown in answers.values():
        assert words_shown in workings
    # Beside the command, a link to the page that says how to get the engine: still there
    # after the live renders above (the engine's HTML carries no address; the build's stays).
    result(page.locator(selector)).locator(".widget-copy-command summary").click()
    page.click(f"{selector} .widget-command-help a")
    page.wait_for_url(root_site.page_url("get-engine/"))
    # Instant navigation moves the address first and swaps the article after.
    expect(page.locator("article")).to_contain_text("pip install")


def test_copy_as_command_of_a_widget_of_several_plans_and_its_pasted_config(
    watched: Watched, root_site: Site
) -> None:
    # capacity_gate: one line for the plan asked for and one for each way out, copied as the
    # engine wrote them for the inputs on screen; with a pasted config, the file they name
    # to download beside them.
    name = "capacity_gate"
    selector = f"[data-widget={name}]"
    watched.context.grant_permissions(CLIPBOARD["permissions"])
    page = watched.page
    page.goto(root_site.page_url("steps/capacity/"))
    wait_live(page)
    change(page, selector, {"context": "32768", "format": "int8"})
    shown = wait_matches_cpython(page, name)
    widget = get_widget(name)
    assert widget.command is not None
    lines = widget.command(Values(shown.inputs)).lines
    assert len(lines) > 1
    assert copy(page, selector, "command") == "\n".join(lines)
    for line in lines:
        words = shlex.split(line)
        with contextlib.redirect_stdout(io.StringIO()):
            assert main([*words[len(COMMAND) - 1:], "--json"]) == 0, line
    config = (FIXTURES / "configs" / "Llama-3.1-8B.json").read_text()
    change(page, selector, {"model": "config", "config": config})
    wait_matches_cpython(page, name)
    command = copy(page, selector, "command")
    assert all(" --config config.json " in f" {line} " for line in command.split("\n"))
    link = page.locator(f"{selector} .widget-command-file a")
    assert link.get_attribute("download") == "config.json"
    href = str(link.get_attribute("href"))
    assert base64.b64decode(href.split(",", 1)[1]).decode() == config


PHONE = {"width": 390, "height": 844}
# Table cells outside the screen. A stacked table's head row is off screen on purpose (kept
# for screen readers), its body cells carrying the heads as labels instead.
CELLS_OFF_SCREEN = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const table of document.querySelectorAll('.md-content table')) {
    if (!table.getBoundingClientRect().width) continue;  // in a closed panel
    const stacked = getComputedStyle(table).display === 'block';
    if (stacked && table.querySelector('td:not([data-label])')) out.push('unlabelled stacked cells');
    for (const cell of table.querySelectorAll('th, td')) {
      if (stacked && cell.closest('thead')) continue;
      const box = cell.getBoundingClientRect();
      if (box.width && (box.left < -0.5 || box.right > width + 0.5)) {
        out.push(cell.textContent.trim().slice(0, 40));
      }
    }
  }
  return out;
}"""


def test_on_a_phone_every_table_cell_is_on_screen(browser: Browser, root_site: Site) -> None:
    every = pages(root_site.directory)
    assert len(every) >= 21
    stacked = 0
    with opened(browser, viewport=PHONE) as phone:
        page = phone.page
        for path in every:
            page.goto(root_site.page_url(path), wait_until="domcontentloaded")
            assert page.evaluate(CELLS_OFF_SCREEN) == [], path
            stacked += page.locator('table[data-stack="rows"]').count()
        # The side-by-side comparison stacks its rows, each value under its column's name.
        page.goto(root_site.page_url("steps/side-by-side/"), wait_until="domcontentloaded")
        cell = page.locator(".side-by-side td[data-label]").first
        assert cell.evaluate("td => getComputedStyle(td, '::before').content") == '"Training job: "'
        # Stacked, the tables keep passing axe (their heads are still there for screen readers).
        for path in ("steps/side-by-side/", "steps/roofline/", "steps/cheat-sheet/", "reality-check/"):
            page.goto(root_site.page_url(path), wait_until="domcontentloaded")
            assert run_axe(page) == [], path
    assert stacked >= 20
