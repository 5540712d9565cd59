"""The cheat sheet's tables: every cell is the engine's own number, bad author
arguments are refused naming the argument, and all text is escaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from engine.lesson.figures import prose as figures
from engine.lesson.tables import cheatsheet
from engine.lesson.tables.registry import TABLES, get_table
from engine.numbers.catalog import get_hardware, get_model, list_hardware
from engine.numbers.compute import training_flops, training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS
from engine.numbers.memory import CONVENTIONS, min_gpus_to_serve, serving_memory
from engine.numbers.memory import training_state_bytes_per_param as state_bpp
from engine.numbers.roofline import ridge_point
from engine.numbers.serving import decode_step
from engine.words.format import format_count, format_GB


class _Grid(HTMLParser):
    """A table's cells by row header and column header."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._in_head = False
        self.caption = ""
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "thead":
            self._in_head = True
        elif tag == "tr" and not self._in_head:
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []
        elif tag == "caption":
            self._in_caption = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_head = False
        elif tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            (self.headers if self._in_head else self.rows[-1]).append(text)
            self._cell = None
        elif tag == "caption":
            self._in_caption = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_caption:
            self.caption += data


def grid(html: str) -> dict[str, dict[str, str]]:
    parser = _Grid()
    parser.feed(html)
    return {row[0]: dict(zip(parser.headers, row, strict=True)) for row in parser.rows}


def caption(html: str) -> str:
    parser = _Grid()
    parser.feed(html)
    return parser.caption


CHEAT = [name for name in TABLES if name.startswith("cheat_")]


def test_the_six_tables_are_registered_for_authors() -> None:
    assert set(CHEAT) == {
        "cheat_formats",
        "cheat_bytes_per_param",
        "cheat_flops_rules",
        "cheat_hardware",
        "cheat_fits",
        "cheat_decode_ceilings",
    }
    for name in CHEAT:
        assert get_table(name) is cheatsheet.CHEAT_TABLES[name]


@pytest.mark.parametrize("name", CHEAT)
def test_each_table_renders_finite_numbers_with_a_caption_and_row_headers(name: str) -> None:
    html = get_table(name)()
    assert f'data-cheat="{name}"' in html
    assert "<caption>" in html and 'scope="row"' in html and 'role="region"' in html
    text = re.sub(r"<[^>]+>", " ", html)
    assert not re.search(r"\bnan\b|\binf\b|infinity", text, re.IGNORECASE)
    assert grid(html)


def test_formats_table_is_bytes_per_number_and_weights_size() -> None:
    cells = grid(cheatsheet.cheat_formats())
    m8, m70 = get_model("llama-3.1-8b"), get_model("llama-3.1-70b")
    for f in FORMATS.values():
        row = cells[f.label]
        assert row["Bytes per number"] == f"{f.bytes_per_number:g}"
        assert row["Bits"] == str(f.bits)
        assert row["Llama 3.1 8B weights"] == format_GB(m8.params * f.bytes_per_number)
        assert row["Llama 3.1 70B weights"] == format_GB(m70.params * f.bytes_per_number)
    assert cells["BF16 (bfloat16)"]["Llama 3.1 8B weights"] == figures.weights("llama-3.1-8b")
    # Independent anchors: 8,030,261,248 and 70,553,706,496 parameters (Meta's model cards)
    # times 2 and 0.5 bytes, worked by hand.
    assert cells["BF16 (bfloat16)"]["Llama 3.1 8B weights"] == "16.06 GB"
    assert cells["BF16 (bfloat16)"]["Llama 3.1 70B weights"] == "141.1 GB"
    assert cells["INT4"]["Llama 3.1 8B weights"] == "4.02 GB"


def test_bytes_per_param_table_has_the_16_18_20_conventions_from_the_engine() -> None:
    cells = grid(cheatsheet.cheat_bytes_per_param())
    m = get_model("llama-3.1-8b")
    totals = {}
    for convention in CONVENTIONS:
        if not convention.startswith("mixed-"):
            continue
        total = sum(state_bpp("adam", convention).values())
        row = cells[f"Train, adam, {convention}"]
        assert row["Bytes per parameter"] == f"{total:g}"
        assert row["Llama 3.1 8B"] == format_GB(m.params * total)
        totals[convention] = total
    # The lesson's three conventions, as the engine sums them.
    assert sorted(totals.values()) == [16, 18, 20]
    assert cells["Train, adam, mixed-16"]["Llama 3.1 8B"] == figures.train_state("llama-3.1-8b")
    # The lesson's numbers: 8.03e9 x 16 = 128.5 GB; x 20 = 160.6 GB.
    assert cells["Train, adam, mixed-16"]["Llama 3.1 8B"] == "128.5 GB"
    assert cells["Train, adam, mixed-20"]["Llama 3.1 8B"] == "160.6 GB"
    assert cells["Serve, bf16 weights"]["Bytes per parameter"] == "2"
    assert cells["Serve, int4 weights"]["Bytes per parameter"] == "0.5"


def test_flops_rules_are_the_engines_multipliers() -> None:
    m = get_model("llama-3.1-8b")
    cells = grid(cheatsheet.cheat_flops_rules())
    use, train, full = (
        cells["Use it (one token in or out)"],
        cells["Train (forward + backward)"],
        cells["Train, full recomputation"],
    )
    assert use["Rule (N = parameters)"] == "2 × N per token"
    assert train["Rule (N = parameters)"] == f"{training_flops(1, 1):g} × N per token + attention"
    assert full["Rule (N = parameters)"] == (
        f"{training_flops(1, 1, 'full'):g} × N per token + attention")
    assert [r["Rule (N = parameters)"][0] for r in (use, train, full)] == ["2", "6", "8"]
    assert use["Llama 3.1 8B, per token"] == figures.flops_per_token("llama-3.1-8b")
    assert train["Llama 3.1 8B, per token"] == (
        f"{format_count(training_flops_per_token(m).model)} FLOPs")
    assert (use["Llama 3.1 8B, per token"], train["Llama 3.1 8B, per token"],
            full["Llama 3.1 8B, per token"]) == (
        "15.0 billion FLOPs",  # 2 x 7.505e9 matmul weights (the embedding is a lookup)
        # 6 x 7.505e9 + causal attention 12 x 32 x 4,096 x 4,097 / 2 = 48.25e9
        "48.2 billion FLOPs",
        "64.3 billion FLOPs",  # x 8/6 with full recomputation = 64.33e9
    )


def test_hardware_table_has_ridge_points_for_bf16_and_fp8_where_the_chip_has_it() -> None:
    cells = grid(cheatsheet.cheat_hardware())
    for h in list_hardware():
        name = cheatsheet.short_name(h)
        if h.kind not in ("gpu", "tpu"):
            assert name not in cells
            continue
        row = cells[name]
        assert row["BF16 ridge"] == f"{ridge_point(h, 'bf16'):,.0f}"
        if h.has_peak("fp8"):
            assert row["FP8 ridge"] == f"{ridge_point(h, 'fp8'):,.0f}"
        else:
            assert row["FP8 ridge"] == cheatsheet.NOT_AVAILABLE
    assert cells["H100 SXM5 80GB"]["BF16 ridge"] == "295"  # the lesson's figure
    assert cells["A100 SXM4 80GB"]["FP8 TFLOP/s"] == cheatsheet.NOT_AVAILABLE
    only_cpus = grid(cheatsheet.cheat_hardware(kind="cpu"))
    assert set(only_cpus) == {cheatsheet.short_name(h) for h in list_hardware() if h.kind == "cpu"}


def test_fits_matrix_is_serving_memory_on_one_gpu() -> None:
    html = cheatsheet.cheat_fits()
    cells = grid(html)
    assert "8,192 tokens" in caption(html)
    for model_id in cheatsheet.FIT_MODELS:
        m = get_model(model_id)
        row = cells[m.name]
        for hw_id in cheatsheet.SHEET_GPUS:
            h = get_hardware(hw_id)
            mem = serving_memory(m, h)
            assert row["Needs"] == format_GB(mem.per_gpu_bytes)
            assert row[cheatsheet.chip_header(h)] == ("fits" if mem.fits else "no")
    h100 = cheatsheet.chip_header(get_hardware("h100-sxm"))
    assert cells["Llama 3.1 8B"][h100] == "fits"
    assert cells["Llama 3.1 70B"][h100] == "no"
    assert cells["Llama 3.1 8B"]["Needs"] == figures.serve_total("llama-3.1-8b")


def test_fits_matrix_follows_its_arguments() -> None:
    cells = grid(cheatsheet.cheat_fits(models="llama-3.1-70b", hardware="h100-sxm", format="fp8"))
    m, h = get_model("llama-3.1-70b"), get_hardware("h100-sxm")
    mem = serving_memory(m, h, weight_format="fp8")
    assert cells == {
        m.name: {"Model": m.name, "Needs": format_GB(mem.per_gpu_bytes),
                 "H100 SXM5 80GB · 84.94 GB": "fits"}
    }


def test_decode_ceilings_are_bandwidth_bound_decode_steps() -> None:
    cells = grid(cheatsheet.cheat_decode_ceilings())
    h100 = cells["H100 SXM5 80GB"]
    assert h100["Llama 3.1 8B"].startswith(figures.decode_ceiling("llama-3.1-8b"))
    assert f"({figures.decode_time('llama-3.1-8b')})" in h100["Llama 3.1 8B"]
    m70, h = get_model("llama-3.1-70b"), get_hardware("h100-sxm")
    n = min_gpus_to_serve(serving_memory(m70, h))
    assert n is not None and n > 1
    step = decode_step(m70, h, gpus=n)
    assert h100["Llama 3.1 70B"].endswith(f"on {n} GPUs")
    assert h100["Llama 3.1 70B"].startswith(f"{step.tokens_per_s_per_user:,.0f} tokens/s")
    assert cells["B200 (HGX, 1000 W)"]["Llama 3.1 70B"].endswith(")")  # fits on one


@pytest.mark.parametrize(
    ("name", "inputs", "field"),
    [
        ("cheat_fits", {"models": "gpt-9"}, "model"),
        ("cheat_fits", {"hardware": "h100-sxm,<script>"}, "hardware"),
        ("cheat_fits", {"context": "-1"}, "context"),
        ("cheat_fits", {"format": "fp7"}, "format"),
        ("cheat_fits", {"models": " , "}, "models"),
        ("cheat_decode_ceilings", {"models": "llama-3.1-8b,nope"}, "model"),
        ("cheat_hardware", {"kind": "quantum"}, "kind"),
        ("cheat_formats", {"models": "x"}, "model"),
        ("cheat_bytes_per_param", {"optimizer": "lion"}, "optimizer"),
        ("cheat_bytes_per_param", {"serve_formats": "bf16,fp5"}, "format"),
        ("cheat_flops_rules", {"model": "<b>"}, "model"),
    ],
)
def test_bad_author_arguments_are_refused_naming_them(
    name: str, inputs: dict[str, str], field: str
) -> None:
    with pytest.raises(EngineError) as caught:
        get_table(name)(**inputs)
    assert caught.value.field == field


def test_text_in_cells_is_escaped() -> None:
    html = cheatsheet._sheet("t", ["<h>"], [["<script>x</script>", "a & b"]], caption='"c"')
    assert "<script>" not in html and "&lt;script&gt;" in html and "a &amp; b" in html
    assert "&lt;h&gt;" in html and "&quot;c&quot;" in html
