"""mkdocs-macros module: registers the authoring macros; all work happens in engine/ and macros/authoring.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.lesson.diagrams.registry import DIAGRAMS
from engine.lesson.figures.prose import FIGURES
from engine.lesson.tables.registry import TABLES
from engine.registry import widget_names
from macros import authoring
from macros.wheel import DOWNLOAD_DIR, wheel_file_name


def on_pre_page_macros(env: Any) -> None:
    """Each page numbers its widgets from 1, also across rebuilds under `mkdocs serve`."""
    authoring.reset_page_counter(str(getattr(env.page, "url", "")))


def define_env(env: Any) -> None:
    """Register `widget`, `figure`, `diagram`, `table`, `step` and the page macros for use in markdown pages."""

    env.variables["widget_list"] = ", ".join(f"`{n}`" for n in widget_names())
    env.variables["figure_list"] = ", ".join(f"`{n}`" for n in sorted(FIGURES))
    env.variables["diagram_list"] = ", ".join(f"`{n}`" for n in sorted(DIAGRAMS))
    env.variables["table_list"] = ", ".join(f"`{n}`" for n in sorted(TABLES))

    def current_page() -> str:
        page = getattr(env, "page", None)
        return str(getattr(page, "url", "") or getattr(page, "file", ""))

    @env.macro  # type: ignore[untyped-decorator]
    def widget(name: str, **inputs: object) -> str:
        """A live widget: `{{ widget("serve_plan", model="llama-3.1-8b") }}`."""
        return authoring.widget_html(name, current_page(), inputs)

    @env.macro  # type: ignore[untyped-decorator]
    def figure(name: str, **inputs: object) -> str:
        """A number from the engine in prose: `{{ figure("weights", model="llama-3.1-8b") }}`."""
        return authoring.figure_text(name, inputs)

    @env.macro  # type: ignore[untyped-decorator]
    def diagram(name: str, **inputs: object) -> str:
        """A diagram drawn by the engine: `{{ diagram("transformer_layer") }}`."""
        return authoring.diagram_html(name, inputs)

    @env.macro  # type: ignore[untyped-decorator]
    def step_header() -> str:
        """'Step N of M · about K minutes': N and M from the nav's order (macros/step_numbers.py)."""
        steps = env.conf["extra"]["lesson_steps"]
        return authoring.step_header(env.page.meta, current_page(), env.markdown, steps)

    @env.macro  # type: ignore[untyped-decorator]
    def lesson_minutes() -> str:
        """'about N minutes': the steps' minutes added up, filled in after the build."""
        return authoring.lesson_minutes_html()

    @env.macro  # type: ignore[untyped-decorator]
    def step_count() -> int:
        """How many steps the lesson has: the step pages in the nav (macros/step_numbers.py)."""
        return len(env.conf["extra"]["lesson_steps"])

    @env.macro  # type: ignore[untyped-decorator]
    def step(slug: str, capital: bool = False, link: bool = False) -> str:
        """'step 13' for `{{ step("compute") }}`: the step named by its file's name in
        docs/steps/, numbered by the nav (macros/step_numbers.py); `capital=True` starts a
        sentence, `link=True` makes it a link to the step."""
        steps = env.conf["extra"]["lesson_steps"]
        page_src = str(getattr(getattr(env.page, "file", None), "src_uri", ""))
        return authoring.step_reference(slug, steps, page_src, capital=capital, link=link)

    @env.macro  # type: ignore[untyped-decorator]
    def next_step() -> str:
        """A button to the next page of the navigation (empty on the last page)."""
        following = getattr(env.page, "next_page", None)
        if following is None:
            return ""
        url = following.file.url_relative_to(env.page.file)  # relative: any sub-path
        return authoring.next_step_link(str(following.title), url)

    @env.macro  # type: ignore[untyped-decorator]
    def glossary() -> str:
        """Every glossary term and its definition (the same file gives the tooltips)."""
        return authoring.glossary_html(Path(env.project_dir) / "includes" / "glossary.md")

    @env.macro  # type: ignore[untyped-decorator]
    def table(name: str, **inputs: object) -> str:
        """A table rendered by the engine: `{{ table("formats") }}`."""
        return authoring.table_html(name, inputs)

    @env.macro  # type: ignore[untyped-decorator]
    def engine_wheel(link: bool = False, file: bool = False) -> str:
        """The engine's wheel for CPython, as the build ships it in the site (macros/wheel.py):
        its full address for ``pip install`` (the site_url this build was made for), with
        ``link=True`` a download link to it from this page, with ``file=True`` its file name
        (what ``pip install`` takes once the link has saved it)."""
        name = wheel_file_name(Path(env.project_dir))
        if file:
            return name
        if not link:
            return f"{env.conf['site_url']}{DOWNLOAD_DIR}/{name}"
        page_url = str(getattr(env.page, "url", ""))
        return authoring.download_link(f"{DOWNLOAD_DIR}/{name}", page_url, name)
