"""The "Going further" pages in a real browser: build-time numbers without
JavaScript, live results equal to CPython's, a refused split and a hostile input get the
engine's message beside their field, the 390 px phone layout (no chart text over another), and
axe."""

from __future__ import annotations

from playwright.sync_api import Browser, Page
from support import Site, Watched, open_watched, run_axe, wait_live, wait_matches_cpython

from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.plan import plan
from engine.words.format import format_seconds

NETWORK = "further/network/"
CLUSTER = "further/cluster/"
PAGES = {NETWORK: ("links", "roofline_three_roofs"),
         CLUSTER: ("parallelism_picture", "cluster_training", "drill_cluster_memory")}
CLUSTER_W = "[data-widget=cluster_training]"
ROOFS_W = "[data-widget=roofline_three_roofs]"


def cluster_step(**kw: object) -> dict:
    args: dict[str, object] = {"model": "llama-3.1-70b", "hardware": "h100-sxm",
                               "task": "train", "nodes": 256, "tp": 8, "pp": 4,
                               "seq_len": 8192, "sharding": "zero1", "tokens": 1e12}
    args.update(kw)
    return plan_to_dict(plan(**args))["train"]["expected"]["step"]  # type: ignore[index]


def test_build_time_numbers_without_javascript(browser: Browser, root_site: Site) -> None:
    w = open_watched(browser, java_script_enabled=False)
    try:
        for path, names in PAGES.items():
            w.page.goto(root_site.page_url(path))
            shown = w.page.eval_on_selector_all("[data-widget]", "ws => ws.map(w => w.dataset.widget)")
            assert shown == list(names)
            assert set(w.page.eval_on_selector_all(
                "[data-widget]", "ws => ws.map(w => w.dataset.state)")) == {"static"}
            assert "NaN" not in w.page.inner_text("article")
        # The engine's step split is on the page as built.
        step = cluster_step()
        text = w.page.inner_text(CLUSTER_W + " .widget-result")
        assert f"{format_seconds(step['bubble_seconds'])} (" in text
        assert "it fits" in text
    finally:
        w.context.close()


def _live(page: Page, root_site: Site, path: str) -> None:
    page.goto(root_site.page_url(path))
    wait_live(page)
    for name in PAGES[path]:
        wait_matches_cpython(page, name)


def test_live_equals_cpython_and_follows_the_reader(watched: Watched, root_site: Site) -> None:
    page = watched.page
    _live(page, root_site, NETWORK)
    page.select_option(ROOFS_W + " select[name=hardware]", "h100-sxm")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-verdict').textContent.includes('H100')",
        arg=ROOFS_W)
    wait_matches_cpython(page, "roofline_three_roofs")
    assert "the links are not the limit" in page.inner_text(ROOFS_W + " .widget-verdict")

    _live(page, root_site, CLUSTER)
    page.select_option(CLUSTER_W + " select[name=interleave]", "2")
    want = format_seconds(cluster_step(interleave=2)["bubble_seconds"])
    page.wait_for_function(
        "([sel, want]) => document.querySelector(sel + ' .widget-result').textContent"
        ".includes(want)", arg=[CLUSTER_W, f"pipeline bubble: {want}"])
    wait_matches_cpython(page, "cluster_training")


def test_a_refused_split_and_a_hostile_input_get_messages(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(CLUSTER))
    wait_live(page)
    page.fill(CLUSTER_W + " input[name=pp]", "3")
    error = CLUSTER_W + " .widget-error[data-error-for=pp]"
    page.wait_for_function(
        "sel => (document.querySelector(sel) || {textContent: ''}).textContent.length > 0",
        arg=error)
    assert "multiple of tensor parallel × pipeline stages" in page.inner_text(error)
    page.fill(CLUSTER_W + " input[name=pp]", "4")
    page.fill(CLUSTER_W + " input[name=servers]", "<img src=x onerror=alert(1)>")
    error = CLUSTER_W + " .widget-error[data-error-for=servers]"
    page.wait_for_function(
        "sel => (document.querySelector(sel) || {textContent: ''}).textContent.length > 0",
        arg=error)
    assert page.locator("img[src=x]").count() == 0
    assert "NaN" not in page.inner_text(CLUSTER_W + " .widget-result")


# Pairs of text in one chart whose boxes on screen overlap (by more than half a pixel), as
# [one, other]: a tick label over an axis title reads as neither.
OVERLAPPING_CHART_TEXT = """() => [...document.querySelectorAll('svg.chart')].flatMap(svg => {
  const boxes = [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBoundingClientRect()])
    .filter(([, r]) => r.width > 0);
  const pairs = [];
  boxes.forEach(([a, ra], i) => boxes.slice(i + 1).forEach(([b, rb]) => {
    if (ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5 && ra.top < rb.bottom - 0.5 && rb.top < ra.bottom - 0.5)
      pairs.push([a, b]);
  }));
  return pairs;
})"""


def test_phone_layout_and_axe(browser: Browser, root_site: Site) -> None:
    watched = open_watched(browser, viewport={"width": 390, "height": 844})
    try:
        page = watched.page
        for path in PAGES:
            page.goto(root_site.page_url(path))
            wait_live(page)
            # The page never scrolls sideways; each chart keeps its labels at 11 px or more.
            assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
            smallest = page.evaluate("""() => Math.min(...[...document.querySelectorAll('svg.chart')]
                .filter(svg => svg.getBoundingClientRect().width > 0)  // the drawing shown
                .flatMap(svg => { const s = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                  return [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * s); }))""")
            assert smallest >= 10.99, (path, smallest)
            assert page.evaluate(OVERLAPPING_CHART_TEXT) == [], path
            assert run_axe(page) == [], path
        assert watched.console_errors == []
    finally:
        watched.context.close()


def test_the_pod_drill_accepts_the_engines_answer(watched: Watched, root_site: Site) -> None:
    from engine.lesson.drills.cluster_memory import pod_memory_question

    drill = "[data-widget=drill_cluster_memory]"
    page = watched.page
    page.goto(root_site.page_url(CLUSTER + "?drill_cluster_memory.seed=7"))
    wait_live(page)
    page.wait_for_selector(drill + ' .drill[data-seed="7"]')
    q = pod_memory_question(7)
    assert q.lead in page.inner_text(drill + " .widget-result")
    page.select_option(drill + " select[name=fits]", "yes" if q.fits else "no")
    page.fill(drill + " input[name=answer]", f"{q.answer_GB:.3f}")
    page.click(drill + " button[data-action=check]")
    page.wait_for_selector(drill + " .drill-feedback")
    assert page.get_attribute(drill + " .drill-feedback", "data-correct") == "true"
