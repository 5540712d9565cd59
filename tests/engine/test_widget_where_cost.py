"""where-ai-runs and five-questions: the device ladder, own versus rent and the five questions show the
engine's numbers, bad input names its field, and hostile text is shown as text."""

from __future__ import annotations

import html as html_lib
import json
import re

import pytest
from widget_text import render, text_of

from engine.browser import update
from engine.lesson.figures.prose import get_figure
from engine.numbers.catalog import get_hardware, get_model, get_system, prices
from engine.numbers.cost import rent_vs_own, rent_vs_own_from_catalog, training_run_cost
from engine.numbers.errors import EngineError
from engine.numbers.plan import Plan, plan
from engine.registry import get_widget, widget_names
from engine.render.widget import Values
from engine.widgets.device_ladder import busy_gpus
from engine.widgets.own_vs_rent import compare, nice_axis_top
from engine.words.answer_lines import answer_lines
from engine.words.answers import answers
from engine.words.cost_explained import rent_vs_own_arithmetic, rent_vs_own_verdict
from engine.words.format import format_count, format_GB, format_percent, format_seconds, format_usd

HOSTILE = '<script>alert("x")</script>'


# The ladder as it opened before its own default (a 1B model in int4 at 4,096 tokens): Llama
# 3.1 8B, the widest format that fits, an 8,192-token context.
EIGHT_B = {"model": "llama-3.1-8b", "weights": "widest", "context_tokens": "8192"}


def ladder(**inputs: str) -> str:
    """The device ladder's HTML for Llama 3.1 8B (:data:`EIGHT_B`), changed by ``inputs``."""
    return render("device_ladder", **{**EIGHT_B, **inputs})


def rows_of(html: str, *, shown: bool = False) -> list[str]:
    """The ladder's body rows as text, one per rung: the full table (in the closed details)
    or, ``shown``, the one-line-per-rung table a reader sees as the page opens."""
    tables = html.split("<tbody>")
    assert len(tables) == 3, "the ladder has a short table shown and a full one in details"
    body = tables[1 if shown else 2].split("</tbody>", 1)[0]
    return [text_of(r) for r in body.split("</tr>") if r.strip()]


def shown_part(html: str) -> str:
    """What shows as the page opens: the widget's HTML without its closed details' bodies."""
    return re.sub(r"<details[^>]*><summary>(.*?)</summary>.*?</details>", r"\1", html,
                  flags=re.DOTALL)


def test_the_widgets_are_registered() -> None:
    assert {"device_ladder", "own_vs_rent", "five_questions"} <= set(widget_names())


# ------------------------------------------------------------------------ device_ladder


def test_ladder_has_five_rungs_from_phone_to_cluster() -> None:
    rows = rows_of(ladder())
    assert len(rows) == 5
    server = get_system("dgx-1")
    assert get_hardware("apple-a17-pro").name in rows[0]
    assert get_hardware("apple-m2-ultra").name in rows[1]
    assert get_hardware("rtx-4090").name in rows[2]
    assert f"{server.gpu_count} × {server.gpu.name}" in rows[3]
    assert f"16,384 × {server.gpu.name}" in rows[4]


def test_ladder_shows_one_line_per_rung_and_the_rest_in_details() -> None:
    html = ladder()
    shown = rows_of(html, shown=True)
    # Llama 3.1 8B: the phone's share serves it in int4 but cannot hold the training state;
    # the Mac Studio does both (decode at its bandwidth, training for years); the RTX 4090
    # serves but cannot hold the training state.
    phone = plan(model="llama-3.1-8b", hardware="apple-a17-pro", task="serve",
                 weight_format="int4")
    mac = plan(model="llama-3.1-8b", hardware="apple-m2-ultra", task="serve")
    mac_train = plan(model="llama-3.1-8b", hardware="apple-m2-ultra", task="train",
                     sharding="zero3")
    assert phone.serve is not None and mac.serve is not None and mac_train.train is not None
    # Each rung's decode speed in view is the bound beside the expected value, one basis.
    def speeds(p: Plan) -> str:
        assert p.serve is not None
        return (f"{p.serve.tokens_per_s_per_user:,.0f} at best, "
                f"{1.0 / p.serve.expected.decode_seconds_per_token:,.0f} expected")

    assert shown[0] == (f" Phone, one app's share Serves it: {speeds(phone)} Cannot hold its "
                        "training state ")
    assert shown[1] == (f" Top-end desktop (Mac Studio) Serves it: {speeds(mac)} Trains it in "
                        f"{format_seconds(mac_train.train.seconds)} ")
    assert "Serving: one user's tokens/s" in text_of(shown_part(html))
    assert shown[2].endswith(" Cannot hold its training state ")
    visible = text_of(shown_part(html))
    assert "The full ladder and its arithmetic" in visible
    assert "copies at once" not in visible and "ZeRO-3" not in visible
    assert "copies at once" in text_of(html)


def test_ladder_opens_on_a_model_the_phone_runs_and_says_what_each_rung_does() -> None:
    html = render("device_ladder")
    shown = rows_of(html, shown=True)
    # Llama 3.2 1B in int4 at 4,096 tokens: weights 1.24e9 x 0.5 bytes, the KV cache, the
    # working space and the runtime allowance fit the 6 GB iOS lends one app.
    phone = plan(model="llama-3.2-1b", hardware="apple-a17-pro", task="serve",
                 weight_format="int4", context_tokens=4096)
    assert phone.memory.fits and phone.serve is not None
    assert shown[0].startswith(
        f" Phone, one app's share Serves it: {phone.serve.tokens_per_s_per_user:,.0f} at best, ")
    assert "Cannot hold its training state" in shown[0]
    server = plan(model="llama-3.2-1b", hardware="h100-sxm", gpus=8, task="train",
                  sharding="zero3")
    assert server.train is not None
    assert f"Trains it in {format_seconds(server.train.seconds)}" in shown[3]
    assert "Yes, in int4" in rows_of(html)[0]
    # Why the Mac and the phone hold less than their marketed memory, in view.
    visible = text_of(shown_part(html))
    # Both sold in binary gigabytes: 8 GiB = 8.59 GB, 192 GiB = 206.2 GB (144 GiB = 75 %).
    assert ("Usable memory (the operating system's share): phone, one app's share, 6 GB of "
            "8.59 GB; top-end desktop (Mac Studio), 154.6 GB of 206.2 GB.") in visible
    # The reasons and the names they are sold by, one click away in the notes.
    assert ("Usable memory, phone, one app's share: 6 GB of its 8.59 GB (sold as 8 GB; what iOS "
            "lets one app use); top-end desktop (Mac Studio): 154.6 GB of its 206.2 GB (sold as "
            "192 GB; what Metal lets the GPU use by default).") in text_of(html)
    assert "sold as" not in visible
    # Llama 3.1's 15 T tokens are not said of another model.
    assert "Llama 3.1 really used" not in text_of(html)
    # One format asked for: a rung where it does not fit says so without "even".
    big = rows_of(render("device_ladder", model="llama-3.1-70b"))[0]
    assert big.startswith(" Phone, one app's share") and " No in int4 it needs " in big


def test_ladder_serving_figures_are_the_engines() -> None:
    rows = rows_of(ladder())
    # The phone lends one app about 6 GB: Llama 3.1 8B with an 8,192-token context fits it in
    # int4, not in int8 or bf16. Weights 8,030,261,248 x 0.5 bytes = 4.015 GB, KV cache
    # 32 layers x 2 x 8 heads x 128 x 2 bytes x 8,192 tokens = 1.074 GB, working space
    # 2,048 tokens x (2 x 4,096 + 2 x 14,336) x 2 bytes + 128,256 x 4 bytes = 0.152 GB, and
    # the phone's llama.cpp buffers, 254.99 MiB = 0.267 GB (not a server's 1.5 GB): 5.51 GB.
    phone = plan(model="llama-3.1-8b", hardware="apple-a17-pro", task="serve", weight_format="int4")
    assert phone.memory.fits
    assert phone.memory.per_gpu_bytes == pytest.approx(4.015e9 + 1.074e9 + 0.152e9 + 0.267e9,
                                                       abs=2e6)
    assert f"Yes, in int4 {format_GB(phone.memory.per_gpu_bytes)} of 6 GB" in rows[0]
    assert format_GB(phone.memory.per_gpu_bytes) == "5.51 GB"
    assert "Phone, one app's share" in rows[0] and "; 6 GB" in rows[0]
    # A 1B model fits the phone's share in bf16; its decode speed is the plan's.
    small = plan(model="llama-3.2-1b", hardware="apple-a17-pro", task="serve")
    assert small.memory.fits and small.serve is not None
    row = rows_of(ladder(model="llama-3.2-1b"))[0]
    assert f"Yes, in bf16 {format_GB(small.memory.per_gpu_bytes)} of 6 GB" in row
    assert f"{small.serve.tokens_per_s_per_user:,.0f} tokens/s at best memory-bound" in row
    expected = 1.0 / small.serve.expected.decode_seconds_per_token
    assert expected < small.serve.tokens_per_s_per_user
    assert f"about {expected:,.0f} expected with tuned software" in row
    # One H100 of dgx-1 holds it in bf16: the lesson's ~200 tokens/s ceiling, 8 copies.
    h100 = plan(model="llama-3.1-8b", hardware="h100-sxm", task="serve")
    assert h100.serve is not None
    assert f"Yes, in bf16 {format_GB(h100.memory.per_gpu_bytes)} of 84.94 GB" in rows[3]
    assert "8 copies at once" in rows[3]
    assert f"{h100.serve.tokens_per_s_per_user:,.0f} tokens/s" in rows[3]
    assert "16,384 copies at once" in rows[4]


def test_ladder_training_figures_are_the_engines() -> None:
    rows = rows_of(ladder())
    server = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train", sharding="zero3")
    assert server.memory.fits and server.train is not None
    assert f"Yes {format_GB(server.memory.per_gpu_bytes)} per chip, ZeRO-3 over 8" in rows[3]
    assert format_seconds(server.train.seconds) in rows[3]
    cluster = plan(
        model="llama-3.1-8b", hardware="h100-sxm", gpus=16384, task="train", sharding="zero3"
    )
    assert cluster.train is not None
    # Only the GPUs one step's batch keeps busy shorten the run (busy_gpus): 16,384 / 1,024.
    assert format_seconds(cluster.train.seconds * 16384 / busy_gpus(cluster)) in rows[4]
    # A phone cannot hold the training state; the time is shown as hypothetical.
    phone = plan(model="llama-3.1-8b", hardware="apple-a17-pro", task="train", sharding="zero3")
    assert phone.train is not None and not phone.memory.fits
    assert f"No needs {format_GB(phone.memory.per_gpu_bytes)} per chip" in rows[0]
    assert f"{format_seconds(phone.train.seconds)} if it fitted" in rows[0]


def test_ladder_big_model_uses_tensor_parallel_and_drops_lower_rungs() -> None:
    html = ladder(model="llama-3.1-405b")
    rows = rows_of(html)
    for row in rows[:3]:
        assert "No even in int4" in row
    served = plan(
        model="llama-3.1-405b", hardware="h100-sxm", gpus=8, task="serve", weight_format="int8"
    )
    assert served.memory.fits
    assert (
        f"Yes, in int8 on 8 chips (tensor parallel), {format_GB(served.memory.per_gpu_bytes)} of 84.94 GB each"
        in rows[3]
    )
    assert "tensor parallel 4" in rows[4]
    trained = plan(
        model="llama-3.1-405b",
        hardware="h100-sxm",
        gpus=16384,
        task="train",
        sharding="zero3",
        tp=4,
    )
    assert trained.memory.fits and trained.train is not None
    assert format_seconds(trained.train.seconds * 16384 / busy_gpus(trained)) in rows[4]
    assert ("Smallest rung that can serve Llama 3.1 405B: one server (dgx-1); hold its "
            "training state: cluster.") in text_of(html)


def test_ladder_labels_training_time_a_bound_and_says_where_the_batch_stops_scaling() -> None:
    html = ladder()
    shown = text_of(shown_part(html))
    # The column says its basis: 20 tokens per parameter of Llama 3.1 8B, the MFU, perfect scaling.
    tokens = format_count(20 * get_model("llama-3.1-8b").params)
    assert f"Training: {tokens} tokens (20 per parameter) at 40 % MFU, perfect scaling" in shown
    assert ("Smallest rung that can serve Llama 3.1 8B: phone, one app's share; hold its "
            "training state: top-end desktop (Mac Studio).") in shown
    # The catalogue's 4,194,304-token batch (Llama 2 / Llama 3 papers) in 4,096-token
    # sequences, one per GPU: 1,024 GPUs have work; the 16,384-GPU cluster says so.
    cluster = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=16384, task="train",
                   sharding="zero3")
    assert busy_gpus(cluster) == 4_194_304 // 4096 == 1024
    # 20 x 8,030,261,248 tokens x 48.25e9 FLOPs / (1,024 busy GPUs x 989.4e12 x 0.4) = 5.31 h.
    assert "5.31 hours its 4.19 million-token batch keeps only 1,024 GPUs busy (no pipeline)" in rows_of(html, shown=True)[4]
    assert "gives work to at most 1,024 GPUs" in text_of(html)
    # A cluster the batch fills says nothing.
    small = rows_of(ladder(cluster_gpus="1024"), shown=True)[4]
    assert "batch" not in small


def test_ladder_follows_tokens_mfu_and_cluster_size() -> None:
    rows = rows_of(ladder(tokens="15e12", mfu="0.5", cluster_gpus="1024"))
    p = plan(
        model="llama-3.1-8b",
        hardware="h100-sxm",
        gpus=1024,
        task="train",
        sharding="zero3",
        tokens=15e12,
        mfu=0.5,
    )
    assert p.train is not None
    assert f"1,024 × {get_hardware('h100-sxm').name}" in rows[4]
    assert format_seconds(p.train.seconds) in rows[4]


def test_ladder_custom_parameter_count() -> None:
    html = ladder(model="custom", params="3e9")
    assert "Generic dense model, 3 B parameters" in text_of(html)


@pytest.mark.parametrize(
    "field, value",
    [
        ("mfu", "1.5"),
        ("mfu", "0"),
        ("cluster_gpus", "0"),
        ("cluster_gpus", "2.5"),
        ("context_tokens", "abc"),
        ("tokens", "-1"),
        ("tokens", "NaN"),
        ("model", HOSTILE),
    ],
)
def test_ladder_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        ladder(**{field: value})
    assert caught.value.field == field


def test_ladder_custom_params_refused_naming_params() -> None:
    with pytest.raises(EngineError) as caught:
        ladder(model="custom", params=HOSTILE)
    assert caught.value.field == "params"


# -------------------------------------------------------------------------- own_vs_rent


def test_own_vs_rent_gives_the_break_even_over_the_published_prices() -> None:
    html = render("own_vs_rent")
    # Fixed cost per GPU-hour at $270,000 for 8 GPUs over 4 years with 11.6 % a year
    # overhead: 33,750 / 35,064 + 33,750 x 0.116 / 8,766 = $1.409; power 1.275 kW x 1.58 x
    # $0.0806 = $0.1624 a busy hour. Dearest current rent (Google Cloud a3-highgpu
    # on-demand, $11.06; AWS p5's $12.29 of March 2025 was cut in June 2025, so it is left
    # out): 1.409 / (11.06 - 0.1624) = 12.9 %; dearest purchase ($375,000 reseller) and
    # cheapest rent ($2.99): 1.409 x 375 / 270 / (2.99 - 0.1624) = 69.2 %.
    assert ("Across the catalogue's current published prices (dgx-1 bought for $270,000 to "
            "$375,000, one NVIDIA H100 SXM5 80GB rented for $2.99 to $11.06 an hour) the "
            "break-even runs from 12.9 % to 69.2 % utilisation") in text_of(shown_part(html))
    assert "In the range: DGX H100 (8x H100 SXM), reseller quote, $375,000" in text_of(html)
    assert "In the range: AWS p5.48xlarge" not in text_of(html)
    assert ("Left out of the range: AWS p5.48xlarge (8x H100 SXM) on-demand, us-east-1, "
            "$12.29 per GPU-hour") in text_of(html)
    # The reader's own inputs move the range with them: free power and no overhead.
    cheap = text_of(render("own_vs_rent", overhead_percent="0", usd_per_kWh="0"))
    # 0.9625 / 11.06 = 8.70 % (written 8.7 %); 0.9625 x 375 / 270 / 2.99 = 44.7 %.
    assert "from 8.7 % to 44.7 % utilisation" in cheap


def test_own_vs_rent_defaults_are_the_catalogues() -> None:
    widget = get_widget("own_vs_rent")
    p = prices()
    buy = p.default_purchase("h100-sxm")
    assert float(widget.control("purchase_usd").default) == buy.usd
    assert int(widget.control("gpus").default) == buy.gpu_count
    assert float(widget.control("power_W").default) == get_system("dgx-1").power_W
    assert float(widget.control("pue").default) == p.pue
    assert float(widget.control("usd_per_kWh").default) == p.power_usd_per_kWh
    assert (
        float(widget.control("rent_usd_per_gpu_hour").default)
        == p.default_cloud("h100-sxm").usd_per_gpu_hour
    )
    # Where each starting value comes from sits in the closed details, not in the hints.
    assert not widget.control("purchase_usd").hint
    text = text_of(render("own_vs_rent"))
    assert buy.date in text and buy.item in text
    assert buy.date not in text_of(shown_part(render("own_vs_rent")))


def test_own_vs_rent_figures_match_the_engine() -> None:
    html = render("own_vs_rent")
    text = text_of(html)
    r = rent_vs_own_from_catalog(utilisation=0.5)
    assert r.break_even_utilisation is not None
    assert format_usd(r.owned_usd_per_used_gpu_hour) in text
    assert f"Owning pays off above {format_percent(r.break_even_utilisation)} utilisation" in text
    assert rent_vs_own_verdict(r) in text
    for line in rent_vs_own_arithmetic(r):
        assert line in text
    # Sources and dates of the catalogue defaults are shown.
    assert p_date_in(text)
    assert 'role="img"' in html and "aria-label=" in html
    assert f"break-even {format_percent(r.break_even_utilisation)}" in text


def p_date_in(text: str) -> bool:
    p = prices()
    return all(
        d in text
        for d in (
            p.default_purchase("h100-sxm").date,
            p.default_cloud("h100-sxm").date,
            p.power_date,
        )
    )


def test_own_vs_rent_raising_utilisation_lowers_the_owned_cost() -> None:
    costs = []
    for u in ("20", "50", "90"):
        text = text_of(render("own_vs_rent", utilisation=u))
        r = rent_vs_own_from_catalog(utilisation=float(u) / 100)
        assert (
            f"Owned, per used GPU-hour at {u} % {format_usd(r.owned_usd_per_used_gpu_hour)}" in text
        )
        costs.append(r.owned_usd_per_used_gpu_hour)
    assert costs[0] > costs[1] > costs[2]
    assert "renting is cheaper" in text_of(render("own_vs_rent", utilisation="20"))
    assert "owning is cheaper" in text_of(render("own_vs_rent", utilisation="90"))


def test_own_vs_rent_never_when_power_costs_more_than_rent() -> None:
    html = render("own_vs_rent", rent_usd_per_gpu_hour="0.1")
    text = text_of(html)
    assert "Owning pays off above never" in text
    assert "owning never drops below renting" in html_lib.unescape(html)
    assert "break-even" not in html.split("</svg>")[0].split("<svg", 1)[1].split(">", 1)[1]


def test_own_vs_rent_changed_value_follows_the_engine_and_drops_its_source() -> None:
    text = text_of(render("own_vs_rent", purchase_usd="375,000", years="5"))
    r = rent_vs_own(
        rent_usd_per_gpu_hour=2.99,
        purchase_usd=375000,
        years=5,
        power_W=get_system("dgx-1").power_W,
        pue=prices().pue,
        usd_per_kWh=prices().power_usd_per_kWh,
        utilisation=0.5,
        gpus=8,
        overhead_fraction_per_year=prices().overhead_fraction_per_year,
    )
    assert format_usd(r.owned_usd_per_used_gpu_hour) in text
    assert r.break_even_utilisation is not None
    assert f"{format_percent(r.break_even_utilisation)}" in text
    # The catalogue's purchase is no longer the source of the figures (it is still one of the
    # published prices the break-even's range is taken over).
    buy = prices().default_purchase("h100-sxm")
    assert f"Source: {buy.item}: " not in text and f"In the range: {buy.item}, " in text
    assert prices().default_cloud("h100-sxm").source in text


def test_own_vs_rent_chart_marks_the_reader_utilisation() -> None:
    html = render("own_vs_rent", utilisation="75")
    r = rent_vs_own_from_catalog(utilisation=0.75)
    assert "<circle" in html
    assert f"at 75 % owning costs {format_usd(r.owned_usd_per_used_gpu_hour)}" in html_lib.unescape(
        html
    )
    assert "NaN" not in html and "inf" not in html.lower().replace("information", "")


@pytest.mark.parametrize(
    "field, value",
    [
        ("utilisation", "0"),
        ("utilisation", "150"),
        ("pue", "0.5"),
        ("years", "0"),
        ("gpus", "0"),
        ("purchase_usd", HOSTILE),
        ("rent_usd_per_gpu_hour", "-3"),
        ("usd_per_kWh", "1e400"),
        ("power_W", "abc"),
        ("rent_usd_per_gpu_hour", "0"),
        ("purchase_usd", "-1"),
        ("power_W", "-5"),
        ("pue", "0.9"),
        ("usd_per_kWh", "inf"),
        ("overhead_percent", "-10"),
    ],
)
def test_own_vs_rent_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("own_vs_rent", **{field: value})
    assert caught.value.field == field


def test_break_even_figure_checks_its_years_as_the_widget_does() -> None:
    with pytest.raises(EngineError, match=r"from 0\.1 to 100 years") as caught:
        get_figure("break_even")(years="0")
    assert caught.value.field == "years"


def test_break_even_figure_matches_the_widget() -> None:
    r = rent_vs_own_from_catalog()
    assert r.break_even_utilisation is not None
    assert get_figure("break_even")() == f"{format_percent(r.break_even_utilisation)}"
    assert get_figure("cloud_price")().startswith(format_usd(r.rent_usd_per_gpu_hour))
    assert get_figure("purchase_price")().startswith(
        format_usd(prices().default_purchase("h100-sxm").usd)
    )


# ----------------------------------------------------------------------- five_questions


def test_five_questions_are_the_plans_answers() -> None:
    html = render("five_questions")
    p = plan(model="llama-3.1-8b")
    answered, short = answers(p), answer_lines(p)
    # One line per answer shows; the full answers (the workings) wait in the closed details.
    shown = shown_part(html)
    assert shown.count("<li data-question=") == 5
    assert html.count("<li data-question=") == 10
    for key, answer in answered.items():
        assert f'data-question="{key}"' in shown
        assert html_lib.escape(short[key]) in shown
        assert html_lib.escape(answer) not in shown and html_lib.escape(answer) in html
    # 18.79 GB before vLLM's 8,192-token profiling step on an H100 (max_num_batched_tokens)
    # took 452,984,832 B more working space than a 2,048-token chunk did.
    assert short["fits"] == "Yes: 19.24 GB of 84.94 GB per GPU."
    assert short["limit"] == ("Memory bandwidth: 4.53 ms per token at best, about 6.52 ms "
                              "expected (1,024-token prompt).")
    # The cost at best beside the expected one, for one request at a time (side_by_side
    # batches 16): $2.99 an hour / (3,600 s / 4.53 ms) = $3.76 per million at best; at the
    # expected 6.52 ms per token, $2.99 / (3,600 / 6.52e-3) x 1e6 = $5.42.
    assert short["cost"] == ("At best $3.76, about $5.42 expected, per million output tokens "
                             "at $2.99 per GPU-hour, one request at a time; batching cuts it.")
    assert pytest.approx(5.42, abs=0.01) == 2.99 / (3600 / 6.52e-3) * 1e6
    batched = answer_lines(plan(model="llama-3.1-8b", batch=16))["cost"]
    assert batched.startswith("At best $") and "16 requests at a time" in batched


def test_five_answer_lines_for_training_are_the_plans_headlines() -> None:
    p = plan(model="llama-3.1-8b", task="train", gpus=8, sharding="zero3", tokens=1e12, mfu=0.5)
    assert p.train is not None and p.min_gpus is not None and p.usd_per_gpu_hour is not None
    lines = answer_lines(p)
    assert lines["fits"] == (f"Yes: {format_GB(p.memory.per_gpu_bytes)} of "
                             f"{format_GB(p.memory.capacity_bytes)} per GPU.")
    assert lines["limit"] == f"Compute: {format_seconds(p.train.seconds)} at 50 % MFU."
    assert lines["gpus"] == f"At least {p.min_gpus:,} GPUs with ZeRO-3."
    run = training_run_cost(gpus=8, seconds=p.train.seconds, usd_per_gpu_hour=p.usd_per_gpu_hour)
    assert lines["cost"].startswith(f"${run.usd:,.0f}: {run.gpu_hours:,.0f} GPU-hours at $")
    # One GPU, no sharding: it does not fit, and the lines say so without the arithmetic.
    alone = answer_lines(plan(model="llama-3.1-8b", task="train", mfu=0.4))
    assert alone["fits"].startswith("No: it needs ")
    assert alone["failure"] == "Out of memory, decided by arithmetic before it starts."
    # Without a price for the chip the line says where to give one, as the full answer does.
    free = plan(model="llama-3.1-8b", hardware="apple-m2-ultra")
    assert answer_lines(free)["cost"] == answers(free)["cost"].split(" Energy")[0]


def test_five_questions_serve_to_train_changes_the_answers() -> None:
    served = render("five_questions")
    trained = render("five_questions", task="train")
    # The widget always passes its MFU field (40 % by default), so the plan it shows is the
    # one with that MFU given.
    for answer in answers(plan(model="llama-3.1-8b", task="train", mfu=0.4)).values():
        assert html_lib.escape(answer) in trained
    assert "Out of memory" in text_of(trained)
    assert text_of(served) != text_of(trained)
    sharded = render(
        "five_questions", task="train", gpus="8", sharding="zero3", tokens="1e12", mfu="0.5"
    )
    for answer in answers(
        plan(model="llama-3.1-8b", task="train", gpus=8, sharding="zero3", tokens=1e12, mfu=0.5)
    ).values():
        assert html_lib.escape(answer) in sharded


def test_five_questions_any_hardware_and_a_typed_price() -> None:
    html = render(
        "five_questions",
        hardware="rtx-4090",
        usd_per_gpu_hour="0.5",
        weight_format="int4",
        model="custom",
        params="13e9",
    )
    p = plan(params=13e9, hardware="rtx-4090", weight_format="int4", usd_per_gpu_hour=0.5)
    for answer in answers(p).values():
        assert html_lib.escape(answer) in html


@pytest.mark.parametrize(
    "field, value",
    [
        ("gpus", "0"),
        ("gpus", HOSTILE),
        ("context_tokens", "-5"),
        ("weight_format", "fp64"),
        ("task", "dance"),
        ("hardware", HOSTILE),
        ("usd_per_gpu_hour", "abc"),
    ],
)
def test_five_questions_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("five_questions", **{field: value})
    assert caught.value.field == field


@pytest.mark.parametrize("field, value", [("tokens", "-1"), ("mfu", "2"), ("sharding", "zero9")])
def test_five_questions_training_fields_refused_when_training(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("five_questions", task="train", **{field: value})
    assert caught.value.field == field


def test_hostile_text_comes_back_as_an_error_not_markup() -> None:
    for name, field in (
        ("five_questions", "gpus"),
        ("own_vs_rent", "utilisation"),
        ("device_ladder", "mfu"),
    ):
        reply = json.loads(update(name, json.dumps({field: HOSTILE})))
        assert reply["field"] == field
        assert "html" not in reply


def _svg(html: str) -> str:
    match = re.search(r'<svg class="chart cost-chart".*?</svg>', html, re.S)
    assert match
    return match.group(0)


@pytest.mark.parametrize("utilisation", ["5", "50", "100"])
def test_own_vs_rent_chart_has_a_titled_dollar_axis_and_stays_inside_it(utilisation: str) -> None:
    svg = _svg(render("own_vs_rent", utilisation=utilisation))
    assert ">USD per used GPU-hour</text>" in svg
    top = float(re.search(r'<rect class="track" x="[0-9.]+" y="([0-9.]+)"', svg).group(1))  # type: ignore[union-attr]
    height = float(re.search(r'<rect class="track" [^>]*height="([0-9.]+)"', svg).group(1))  # type: ignore[union-attr]
    points = re.search(r'class="cost-owned" points="([^"]+)"', svg).group(1).split()  # type: ignore[union-attr]
    ys = [float(p.split(",")[1]) for p in points]
    assert min(ys) >= top - 0.05 and max(ys) <= top + height + 0.05
    # round ticks from $0 to the axis top, each labelled in dollars
    r = compare(Values(get_widget("own_vs_rent").defaults({"utilisation": utilisation})))
    y_max, step = nice_axis_top(max(3.0 * r.rent_usd_per_gpu_hour, 1.5 * r.curve[-1][1]))
    labels = re.findall(r'text-anchor="end">(\$[0-9.,]+)</text>', svg)
    assert labels[0] == "$0" and labels[-1] == format_usd(y_max)
    assert len(labels) == round(y_max / step) + 1
    # the cut curve says where it leaves the chart, with the engine's figure
    first_u, first_usd = r.curve[0]
    assert first_usd > y_max
    assert f"off the chart at {format_percent(first_u)} busy: {format_usd(first_usd)}</text>" in svg
    if r.owned_usd_per_used_gpu_hour > y_max:  # the reader's point is an arrow at the top
        assert '<polygon class="cost-now"' in svg and '<circle class="cost-now"' not in svg
    else:
        assert '<circle class="cost-now"' in svg


def test_nice_axis_top() -> None:
    assert nice_axis_top(8.97) == (10.0, 2.5)
    assert nice_axis_top(3.0) == (3.0, 1.0)
    assert nice_axis_top(0.3) == pytest.approx((0.3, 0.1))
    assert nice_axis_top(120.0) == (150.0, 50.0)
