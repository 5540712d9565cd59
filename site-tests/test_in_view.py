"""What steps 1, 5 and 10 say in view, read on the built pages with the reader model's own
parser (what shows without opening anything): the KV cache named where its bar first shows,
and every time with its basis (the MFU the clock assumes beside the expected run; both jobs
of step 10 on the expected basis their costs use, the bound beside)."""

from __future__ import annotations

from support import Site

from macros.reading_time import visible_text


def _in_view(site: Site, slug: str) -> str:
    return visible_text((site.directory / "steps" / slug / "index.html").read_text())


def test_step_1_names_the_kv_cache_its_bar_shows_and_the_request_it_is_for(root_site: Site) -> None:
    text = _in_view(root_site, "pile-of-numbers")
    assert "KV cache 1.07 GB" in text  # the bar's legend
    assert "working space the KV cache each conversation's context" in text
    assert "activations and runtime overhead" in text and "mostly the KV cache" not in text
    assert "Serving one 8,192-token request on one NVIDIA H100 SXM5 80GB" in text
    assert "Opening plan" not in text and "shows why" not in text


def test_step_5_says_the_basis_of_its_clock_and_the_expected_run(root_site: Site) -> None:
    text = _in_view(root_site, "training-run")
    assert "MFU the share of peak doing the model's maths" in text
    assert "Time left at 40 MFU 179 days Expected run 134 days 52.5 MFU at best 70.6 days" in text
    assert "loss starts at 11.76, off the top" in text


def test_step_10_compares_both_jobs_on_the_basis_of_their_costs(root_site: Site) -> None:
    text = _in_view(root_site, "side-by-side")
    assert "Throughput about 86,093 tokens s expected 52.5 MFU 164,046 at best" in text
    assert "first token about 27.1 ms expected 16.0 ms at best" in text
    assert "Cost per million tokens, both expected" in text
    assert "if 40" not in text and "throughput-bound" not in text
