"""The MkDocs hook (mkdocs.yml ``hooks``): each build event, in the order MkDocs calls them,
handed to the module that does that job.

- on_config: the stylesheets ship as one bundle (macros/style_bundle.py); the copy for
  file:// loads the search shim from the site (macros/offline_search.py); the runtime files
  the pages with widgets preload (macros/runtime_preload.py).
- on_nav: the steps are numbered from the nav's order (macros/step_numbers.py).
- on_page_content: every table's cells are labelled so that a phone can stack its rows
  (engine/render/table_labels.py); the links widget results name by page get their
  addresses (macros/site_links.py).
- on_post_page: a step's header gets its minutes, counted on the page as built
  (macros/step_minutes.py).
- on_post_build: the Home page's total minutes; a page at each step's old address
  (macros/old_addresses.py); the style bundle, the search shim and the search index's synonyms
  (macros/search_synonyms.py); the
  browser runtime, compiled, shipped and checked (macros/shipped_runtime.py), and the pages'
  preload hints checked against it;
  ``js/runtime-config.js`` (macros/runtime_config.py); last, ``sw.js``, which lists every
  file the build wrote (macros/service_worker.py). The site requests nothing outside its
  own origin.
"""

from __future__ import annotations

import sys
from html import unescape as unescape_html
from pathlib import Path
from typing import Any

from engine.render.table_labels import stack_tables
from macros import offline_search, runtime_preload, search_synonyms, style_bundle
from macros.old_addresses import write_old_addresses
from macros.runtime_config import write_runtime_config
from macros.service_worker import write_built_service_worker
from macros.shipped_runtime import ship_runtime
from macros.site_links import resolve_site_links
from macros.step_minutes import StepMinutes
from macros.step_numbers import number_nav_steps
from macros.wheel import ship_cpython_wheel

# Kept across rebuilds under `mkdocs serve`, as each page is rebuilt.
_minutes = StepMinutes()


def _project_root(config: Any) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_config(config: Any, **_: Any) -> Any:
    sys.path.insert(0, str(_project_root(config)))
    style_bundle.bundle_in_config(config)
    offline_search.use_shipped_shim(config)
    runtime_preload.put_in_config(config, _project_root(config))
    return config


def on_nav(nav: Any, config: Any, files: Any, **_: Any) -> Any:
    number_nav_steps(nav, config, files)
    return nav


def on_page_content(html: str, page: Any, files: Any, **_: Any) -> str:
    # The markdown's table heads may hold any character reference.
    return resolve_site_links(stack_tables(html, unescape=unescape_html), page, files)


def on_post_page(output: str, page: Any, config: Any, **_: Any) -> str:
    return _minutes.finish_page(output, page.url)


def on_post_build(config: Any, **_: Any) -> None:
    root = _project_root(config)
    site = Path(config.site_dir)
    _minutes.state_lesson_minutes(site, config.extra["lesson_steps"])
    if config.use_directory_urls:  # the copy opened from disk has no old links to keep
        write_old_addresses(site, config.extra["lesson_steps"])
    style_bundle.write_style_bundle(site, config)
    offline_search.copy_shim(root, site, config)
    search_synonyms.add_search_synonyms(site)
    runtime = ship_runtime(root, site)
    ship_cpython_wheel(root, site)
    runtime_preload.check_preloaded(config.extra[runtime_preload.PRELOAD_EXTRA], runtime.files)
    write_runtime_config(site, runtime)
    write_built_service_worker(
        site,
        runtime.files,
        style_bundle.style_sources(config),
        directory_urls=config.use_directory_urls,
    )
