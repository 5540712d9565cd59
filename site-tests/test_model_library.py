"""The config library in widgets' model selects, in a real browser: gpt-oss-20b picked in two
widgets of two pages is sized from its published config.json (the page fetches the library
once, from the site, only then), its address survives a reload, and a link naming a model
the list lacks is refused by name."""

from __future__ import annotations

from support import Site, Watched, status, visible_text, wait_live, wait_matches_cpython, widget

GPT_OSS = "openai/gpt-oss-20b"
LIBRARY_FILE = "wheels/data/config_library.json"
PICKS = (("steps/pile-of-numbers/", "model_size"), ("steps/capacity/", "capacity_gate"))


def test_gpt_oss_20b_is_sized_in_two_widgets_and_survives_a_reload(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    for path, name in PICKS:
        selector = f"[data-widget={name}]"
        page.goto(root_site.page_url(path))
        wait_live(page)
        fetched = [u for u in watched.requests if u.endswith(LIBRARY_FILE)]
        assert path != PICKS[0][0] or not fetched, "the library was fetched before it was chosen"
        group = page.locator(f'{selector} select[name=model] optgroup[label="Library: openai"]')
        assert group.locator("option").all_inner_texts() == [GPT_OSS]
        page.select_option(f"{selector} select[name=model]", GPT_OSS)
        wait_matches_cpython(page, name, selector, timeout_ms=30_000)
        shown = page.inner_text(f"{selector} .widget-result")
        assert "20.9 billion parameters" in shown and GPT_OSS in shown
        assert any(u.endswith(LIBRARY_FILE) for u in watched.requests)
        page.wait_for_function(
            "([key, id]) => new URLSearchParams(location.search).get(key) === id",
            arg=[f"{name}.model", GPT_OSS])
        page.reload()
        wait_live(page)
        assert page.input_value(f"{selector} select[name=model]") == GPT_OSS
        wait_matches_cpython(page, name, selector, timeout_ms=30_000)
        assert "20.9 billion parameters" in page.inner_text(f"{selector} .widget-result")


def test_a_link_naming_a_model_the_list_lacks_is_refused_by_name(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/pile-of-numbers/") + "?model_size.model=openai/gpt-oss-21b")
    wait_live(page)
    assert page.input_value("[data-widget=model_size] select[name=model]") == "llama-3.1-8b"
    said = visible_text(status(widget(page, "model_size")))
    assert "Ignored" in said and '"openai/gpt-oss-21b"' in said
