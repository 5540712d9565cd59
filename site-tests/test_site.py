"""The site as a whole: every page stays on its origin, logs no error and passes axe;
instant navigation keeps widgets live; an offline reload after one visit stays live;
the site works under a sub-path; the downloadable copy opens from disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from support import (
    Site,
    Watched,
    open_watched,
    pages,
    run_axe,
    wait_for_text,
    wait_live,
    widget_pages,
)


def test_every_page_stays_on_its_origin_logs_no_error_and_passes_axe(
    browser: Browser, root_site: Site
) -> None:
    all_pages = pages(root_site.directory)
    assert len(all_pages) >= 4
    with_widgets = widget_pages(root_site.directory)
    for path in all_pages:
        w = open_watched(browser)
        try:
            w.page.goto(root_site.page_url(path))
            if path in with_widgets:
                wait_live(w.page)
            else:
                w.page.wait_for_load_state("networkidle")
            assert w.outside(root_site.origin) == [], path
            assert w.console_errors == [], path
            assert run_axe(w.page) == [], path
        finally:
            w.context.close()


def test_widgets_stay_live_across_instant_navigation(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/serve-the-model/"))
    wait_live(page)
    page.evaluate("window.__sameDocument = true")
    # Fetches of the worker's script, each a worker started (the page's preload hint for it, a
    # <link>, starts none).
    engine_workers = (
        "() => performance.getEntriesByType('resource').filter(e =>"
        " e.name.endsWith('/js/engine-worker.js') && e.initiatorType !== 'link').length"
    )
    assert page.evaluate(engine_workers) == 1
    page.click("a.md-footer__link--next")
    page.wait_for_url("**/steps/follow-one-request/")
    wait_live(page)
    # Instant navigation swapped the page without a reload, and reused the one engine worker.
    assert page.evaluate("window.__sameDocument") is True
    assert page.evaluate(engine_workers) == 1
    assert len([w for w in page.workers if w.url.endswith("/js/engine-worker.js")]) == 1
    page.fill("[data-widget=request_timeline] input[name=prompt_tokens]", "65536")
    page.wait_for_function(
        # The prompt length shows in the re-rendered chart's label (the figures in view are times).
        "() => !!document.querySelector("
        "'[data-widget=request_timeline] .widget-result [aria-label*=\"65,536 tokens in\"]')"
    )


def test_an_offline_reload_after_one_visit_stays_live(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/pile-of-numbers/"))
    wait_live(page)
    # The service worker registers once the engine is live; wait until it controls the page
    # and has cached this page.
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=60_000)
    # The worker keeps a file under its digest (?sha=...). Polled here: wait_for_function would
    # take the promise an async predicate returns for a true value.
    for _ in range(240):
        if page.evaluate("() => caches.match(location.href, { ignoreSearch: true }).then(Boolean)"):
            break
        page.wait_for_timeout(250)
    else:
        pytest.fail("the service worker did not keep the page within a minute")
    watched.context.set_offline(True)
    page.reload()
    wait_live(page)
    page.select_option("[data-widget=model_size] select[name=format]", "int4")
    wait_for_text(page, "[data-widget=model_size]", "4.02 GB", timeout_ms=30_000)


def test_the_site_works_under_a_sub_path(watched: Watched, subpath_site: Site) -> None:
    page = watched.page
    page.goto(subpath_site.page_url(""))
    page.click("a[href$='steps/pile-of-numbers/']")
    page.wait_for_url("**/lesson/steps/pile-of-numbers/")
    wait_live(page)
    assert page.evaluate("location.pathname").startswith("/lesson/")
    requested_paths = {
        u.split("/", 3)[3] for u in watched.requests if u.startswith(subpath_site.origin)
    }
    assert all(p.startswith("lesson/") for p in requested_paths), requested_paths


def test_the_offline_copy_opens_from_disk_with_build_time_numbers(
    browser: Browser, offline_copy: Path
) -> None:
    w = open_watched(browser)
    try:
        index = offline_copy / "steps" / "pile-of-numbers.html"
        assert index.exists(), "the offline copy uses .html page files"
        w.page.goto(index.as_uri())
        result = w.page.inner_text("[data-widget=model_size] .widget-result")
        assert "16.06 GB" in result
        status = w.page.inner_text("[data-widget=model_size] .widget-status")
        assert "local static server" in status
        assert w.page.get_attribute("[data-widget=model_size]", "data-state") == "static"
        assert [u for u in w.requests if not u.startswith(("file:", "data:", "blob:"))] == []
    finally:
        w.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_widgets_are_readable_in_both_colour_schemes(
    browser: Browser, root_site: Site, scheme: str
) -> None:
    w = open_watched(browser, color_scheme=scheme)
    try:
        w.page.goto(root_site.page_url("steps/serve-the-model/"))
        wait_live(w.page)
        assert run_axe(w.page) == []
    finally:
        w.context.close()


def test_search_works_after_the_engine_is_live(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/pile-of-numbers/"))
    wait_live(page)
    page.click("label.md-search__icon, .md-search__input", timeout=10_000)
    # The index is built in the background after the engine is live; a query typed before it
    # is ready gets no answer, so type it again until results come (up to a minute).
    for _ in range(12):
        page.fill(".md-search__input", "")
        page.type(".md-search__input", "KV cache", delay=30)  # the theme listens to keys
        try:
            page.wait_for_selector(".md-search-result__item", timeout=5_000)
            break
        except PlaywrightTimeoutError:
            continue
    assert page.locator(".md-search-result__item").count() >= 1
