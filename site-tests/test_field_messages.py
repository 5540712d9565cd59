"""The playground's messages in a real browser, beside the field they are about: a refusal
beside the input the reader changed (Servers, not the GPU count it overrides); a note, not a
refusal, beside the other task's junk (kept as typed, refused once that task is chosen) and
beside a context beyond the model's maximum; a huge size in a pasted config said as 1e308."""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect
from support import ROOT, Site, Watched, error_at, visible_text, wait_for_error, wait_live

PAGE = "steps/playground/"
SELECTOR = "[data-widget=playground]"
CONFIG = ROOT / "tests" / "fixtures" / "configs" / "Qwen3-30B-A3B.json"


def box(page: Page, label: str) -> Locator:
    return page.locator(SELECTOR).get_by_role("textbox", name=label, exact=True)


def open_playground(watched: Watched, site: Site) -> Page:
    page = watched.page
    page.goto(site.page_url(PAGE))
    wait_live(page)
    return page


def is_stale(page: Page) -> bool:
    return "is-stale" in (page.locator(f"{SELECTOR} .widget-result").get_attribute("class") or "")


def test_servers_the_model_cannot_split_over_are_refused_beside_the_servers(
    watched: Watched, root_site: Site
) -> None:
    page = open_playground(watched, root_site)
    servers, gpus = box(page, "Servers"), box(page, "GPUs (or chips)")
    servers.fill("5")
    said = wait_for_error(servers)
    assert "40 GPUs cannot share evenly" in said
    expect(servers).to_have_attribute("aria-invalid", "true")
    expect(error_at(gpus)).to_be_empty()
    assert gpus.get_attribute("aria-invalid") is None
    servers.fill("")
    expect(error_at(servers)).to_be_empty()


def test_the_other_tasks_junk_is_kept_with_a_note_and_refused_once_that_task_is_chosen(
    watched: Watched, root_site: Site
) -> None:
    page = open_playground(watched, root_site)
    task = page.locator(SELECTOR).get_by_role("combobox", name="Task")
    # Training reads MFU: junk typed there is refused beside the field, and kept.
    task.select_option("train")
    mfu = box(page, "MFU")
    mfu.fill("abc")
    expect(mfu).to_have_attribute("aria-invalid", "true")
    refused = visible_text(error_at(mfu))
    assert refused.startswith("MFU must be a number, not 'abc'") and "Unused" not in refused
    # Serving hides the training fields and does not read them: the junk is kept with a
    # note (on the hidden field) and the serving result is live, not stale.
    task.select_option("serve")
    # Hidden, the field leaves the accessibility tree: found by its name instead.
    hidden = page.locator(SELECTOR + " [name=mfu]")
    expect(hidden).to_be_hidden()
    note = error_at(hidden)
    expect(note).to_contain_text("Unused while serving, and training would refuse it: MFU must "
                                 "be a number, not 'abc'")
    expect(note).to_contain_text("Your text is kept.")
    expect(hidden).not_to_have_attribute("aria-invalid", "true")  # a note, not a refusal
    assert not is_stale(page)
    expect(hidden).to_have_value("abc")
    # Training again: refused again, beside the same field, the text still there.
    task.select_option("train")
    expect(mfu).to_have_attribute("aria-invalid", "true")
    expect(mfu).to_have_value("abc")
    mfu.fill("0.4")
    expect(error_at(mfu)).to_be_empty()
    assert not is_stale(page)


def test_a_context_beyond_the_models_maximum_gets_a_note_beside_it(
    watched: Watched, root_site: Site
) -> None:
    page = open_playground(watched, root_site)
    context = box(page, "Context per request")
    context.fill("200000")
    note = wait_for_error(context)
    assert note.startswith("200,000 tokens is beyond Llama 3.1 8B's maximum context of 131,072")
    assert context.get_attribute("aria-invalid") is None
    assert not is_stale(page)
    expect(page.locator(f"{SELECTOR} .widget-result")).to_contain_text("Serving timeline")
    context.fill("131072")
    expect(error_at(context)).to_be_empty()


def test_a_huge_size_in_a_pasted_config_is_said_as_1e308(
    watched: Watched, root_site: Site
) -> None:
    page = open_playground(watched, root_site)
    page.locator(SELECTOR).get_by_role("combobox", name="Model", exact=True).select_option("config")
    data = json.loads(Path(CONFIG).read_text(encoding="utf-8"))
    data["hidden_size"] = 1e308
    config = page.locator(SELECTOR).get_by_role("textbox", name="Your config.json")
    config.fill(json.dumps(data))
    said = wait_for_error(config)
    assert "hidden_size: 1e308 is absurdly large (at most 1,048,576)" in said
    assert re.search(r"\d[\d,]{20,}", said) is None
