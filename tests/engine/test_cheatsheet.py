"""The cheat sheet's tables: every cell is the engine's own number, bad author
arguments are refused naming the argument, and all text is escaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from engine.lesson.figures import prose as figures
from engine.lesson.tables import cheatsheet
from engine.lesson.tables.registry import TABLES, get_table
from engine.numbers.catalog import get_hardware, get_model
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


def test_the_four_tables_are_registered_for_authors() -> None:
    assert set(CHEAT) == {"cheat_formats", "cheat_fits", "cheat_hardware", "cheat_flops_rules"}
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


# The sheet names the convention; its parts (2 + 2 + 4 + 4 + 4) are step 3's.
TRAIN_ROW = "Train with Adam, mixed precision"


def test_formats_table_is_bytes_per_parameter_and_weights_size() -> None:
    cells = grid(cheatsheet.cheat_formats())
    m8, m70 = get_model("llama-3.1-8b"), get_model("llama-3.1-70b")
    assert list(cells) == [FORMATS[f].label for f in cheatsheet.SHEET_FORMATS] + [TRAIN_ROW]
    for format_id in cheatsheet.SHEET_FORMATS:
        f = FORMATS[format_id]
        row = cells[f.label]
        assert row["Bytes per parameter"] == f"{f.bytes_per_number:g}"
        assert row["Llama 3.1 8B"] == format_GB(m8.params * f.bytes_per_number)
        assert row["Llama 3.1 70B"] == format_GB(m70.params * f.bytes_per_number)
    assert cells["BF16 (bfloat16)"]["Llama 3.1 8B"] == figures.weights("llama-3.1-8b")
    # Independent anchors: 8,030,261,248 and 70,553,706,496 parameters (Meta's model cards)
    # times 2 and 0.5 bytes, worked by hand.
    assert cells["BF16 (bfloat16)"]["Llama 3.1 8B"] == "16.06 GB"
    assert cells["BF16 (bfloat16)"]["Llama 3.1 70B"] == "141.1 GB"
    assert cells["INT4"]["Llama 3.1 8B"] == "4.02 GB"


def test_formats_table_ends_with_the_lessons_training_state() -> None:
    train = grid(cheatsheet.cheat_formats())[TRAIN_ROW]
    assert train["Bytes per parameter"] == f"{sum(state_bpp('adam', 'mixed-16').values()):g}"
    assert train["Llama 3.1 8B"] == figures.train_state("llama-3.1-8b")
    # The lesson's numbers: 8.03e9 x 16 = 128.5 GB.
    assert (train["Bytes per parameter"], train["Llama 3.1 8B"]) == ("16", "128.5 GB")
    other = grid(cheatsheet.cheat_formats(convention="mixed-20", formats="bf16"))
    assert [row["Bytes per parameter"] for row in other.values()] == ["2", "20"]
    assert list(other)[-1] == "Train with Adam, mixed-20"
    assert "mixed-20" in CONVENTIONS


def test_flops_rules_are_the_engines_multipliers() -> None:
    m = get_model("llama-3.1-8b")
    cells = grid(cheatsheet.cheat_flops_rules())
    use, train = cells["Use it (one token in or out)"], cells["Train (forward + backward)"]
    assert use["Rule"] == "2 × N"
    assert train["Rule"] == f"{training_flops(1, 1):g} × N + attention"
    assert [r["Rule"][0] for r in (use, train)] == ["2", "6"]
    assert use["Llama 3.1 8B"] == figures.flops_per_token("llama-3.1-8b")
    assert train["Llama 3.1 8B"] == f"{format_count(training_flops_per_token(m).model)} FLOPs"
    assert (use["Llama 3.1 8B"], train["Llama 3.1 8B"]) == (
        "15.0 billion FLOPs",  # 2 x 7.505e9 matmul weights (the embedding is a lookup)
        # 6 x 7.505e9 + causal attention 12 x 32 x 4,096 x 4,097 / 2 = 48.25e9
        "48.2 billion FLOPs",
    )


def test_hardware_table_has_the_sheets_chips_their_ridges_and_decode_ceilings() -> None:
    cells = grid(cheatsheet.cheat_hardware())
    chips = [get_hardware(i) for i in cheatsheet.SHEET_GPUS]
    assert list(cells) == [cheatsheet.short_name(h) for h in chips]
    for h in chips:
        row = cells[cheatsheet.short_name(h)]
        assert row["Memory"] == format_GB(h.memory_bytes)
        assert row["BF16 ridge"] == f"{ridge_point(h, 'bf16'):,.0f}"
        # No text of the lesson uses an fp8 ridge: the sheet leaves it out.
        assert "FP8 ridge" not in row
    h100 = cells["H100 SXM5 80GB"]
    assert h100["BF16 ridge"] == "295"  # the lesson's figure
    # The decode columns are bounds, and the caption says so.
    assert "decode in bf16, one user, at best: bandwidth ÷ weight bytes" in cheatsheet.cheat_hardware()
    assert h100["Llama 3.1 8B decode"] == figures.decode_ceiling("llama-3.1-8b")
    assert cells["H200 SXM 141GB"]["Llama 3.1 8B decode"] == (
        figures.decode_ceiling("llama-3.1-8b", hardware="h200"))
    m70, h = get_model("llama-3.1-70b"), get_hardware("h100-sxm")
    n = min_gpus_to_serve(serving_memory(m70, h))
    assert n is not None and n > 1
    step = decode_step(m70, h, gpus=n)
    assert h100["Llama 3.1 70B decode"] == f"{step.tokens_per_s_per_user:,.0f} tokens/s on {n} GPUs"
    assert cells["B200 (HGX, 1000 W)"]["Llama 3.1 70B decode"].endswith("tokens/s")  # on one


def test_the_a100_80gb_lists_more_bytes_than_the_h100_80gb_and_the_caption_says_why() -> None:
    a100, h100 = get_hardware("a100-80gb"), get_hardware("h100-sxm")
    # Both carry 80 GiB; a program gets 79.25 GiB of the A100's, 79.11 GiB of the H100's.
    assert a100.memory_marketed_GB == h100.memory_marketed_GB == 80
    assert a100.memory_bytes > h100.memory_bytes
    assert "the A100 and H100 each carry 80 GiB; the H100 reserves more" in caption(
        cheatsheet.cheat_hardware())
    assert cheatsheet.same_name_memory_note([a100, get_hardware("h200")]) == ""


def test_fits_matrix_is_serving_memory_on_one_gpu() -> None:
    html = cheatsheet.cheat_fits()
    cells = grid(html)
    assert "one 8,192-token request" in caption(html)
    assert list(cells) == [get_model(i).name for i in cheatsheet.SHEET_MODELS]
    for model_id in cheatsheet.SHEET_MODELS:
        m = get_model(model_id)
        row = cells[m.name]
        needs = []
        for hw_id in cheatsheet.SHEET_GPUS:
            h = get_hardware(hw_id)
            mem = serving_memory(m, h)
            needs.append(mem.per_gpu_bytes)
            assert row[cheatsheet.short_name(h)] == ("fits" if mem.fits else "no")
        assert row["Needs"] == f"{format_GB(min(needs))[:-3]}–{format_GB(max(needs))}"
    assert cells["Llama 3.1 8B"]["H100 SXM5 80GB"] == "fits"
    assert cells["Llama 3.1 70B"]["H100 SXM5 80GB"] == "no"
    # Only the working space differs: vLLM profiles a step of max_num_batched_tokens tokens,
    # 2,048 on the A100 and 8,192 on the others (EngineArgs.get_batch_defaults), so the A100
    # needs (8,192 - 2,048) x (2 x 4,096 + 2 x 14,336) x 2 B = 452,984,832 B less: 18.79 GB
    # against the H100's 19.24 GB.
    assert cells["Llama 3.1 8B"]["Needs"] == "18.79–19.24 GB"
    assert figures.serve_total("llama-3.1-8b") == "19.24 GB"
    assert figures.serve_total("llama-3.1-8b", hardware="a100-80gb") == "18.79 GB"


def test_fits_matrix_follows_its_arguments() -> None:
    cells = grid(cheatsheet.cheat_fits(models="llama-3.1-70b", hardware="h100-sxm", format="fp8"))
    m, h = get_model("llama-3.1-70b"), get_hardware("h100-sxm")
    mem = serving_memory(m, h, weight_format="fp8")
    assert cells == {
        m.name: {"Model": m.name, "Needs": format_GB(mem.per_gpu_bytes), "H100 SXM5 80GB": "fits"}
    }


@pytest.mark.parametrize(
    ("name", "inputs", "field"),
    [
        ("cheat_fits", {"models": "gpt-9"}, "model"),
        ("cheat_fits", {"hardware": "h100-sxm,<script>"}, "hardware"),
        ("cheat_fits", {"context": "-1"}, "context"),
        ("cheat_fits", {"format": "fp7"}, "format"),
        ("cheat_fits", {"models": " , "}, "models"),
        ("cheat_hardware", {"models": "llama-3.1-8b,nope"}, "model"),
        ("cheat_hardware", {"hardware": "quantum"}, "hardware"),
        ("cheat_hardware", {"format": "fp7"}, "format"),
        ("cheat_formats", {"models": "x"}, "model"),
        ("cheat_formats", {"optimizer": "lion"}, "optimizer"),
        ("cheat_formats", {"convention": "mixed-17"}, "convention"),
        ("cheat_formats", {"formats": "bf16,fp5"}, "format"),
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
