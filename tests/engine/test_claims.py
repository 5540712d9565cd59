"""Each claim the lesson makes, checked against the engine, so a prose
number and the widget beside it cannot drift apart again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from widget_text import render, text_of

from engine.lesson.figures import prose as figures
from engine.numbers import quantities
from engine.numbers.catalog import get_hardware, get_model, prices
from engine.numbers.compute import training_flops_per_token
from engine.numbers.cost import rent_vs_own_from_catalog
from engine.numbers.expected_serving import expected_serve
from engine.numbers.roofline import micro_batch_intensity
from engine.numbers.serving import prefill
from engine.numbers.training_run import initial_loss
from engine.words.format import format_percent, format_seconds

STEPS = Path(__file__).resolve().parents[2] / "docs" / "steps"


def test_the_opening_plan_and_train_vs_serve_show_one_serving_total_for_the_same_model_and_gpu() -> None:
    opening = figures.serve_total("llama-3.1-8b", "h100-sxm")  # pile-of-numbers.md
    beside_training = text_of(render("train_vs_serve"))
    assert f"Serving: {opening} of" in beside_training
    assert "8,192 tokens, the lesson's default request" in beside_training


def test_training_run_starts_the_loss_at_ln_of_the_models_vocabulary() -> None:
    # Llama 3.1's tokenizer has 128,256 tokens (config.json vocab_size); ln 128,256 = 11.76.
    assert get_model("llama-3.1-8b").vocab == 128_256
    assert initial_loss(128_256) == pytest.approx(11.7618, abs=1e-4)
    text = text_of(render("training_run"))
    assert "ln 128,256 = 11.76" in text and "32,000" not in text
    assert "ln(128,256) = 11.76" in text  # the assumptions list says the same


def test_compute_prose_quotes_the_time_its_widget_shows() -> None:
    time = figures.get_figure("example_train_time")(tokens="llama-3.1")
    mfu = figures.get_figure("example_mfu")(model="llama-3.1-8b")
    html = render("mfu_calculator")
    text = text_of(html)
    # Llama 3.1 8B's 15e12 tokens / 86,100 tokens/s = 1.742e8 s / 31,557,600 s a year.
    assert time == "5.52 years"
    assert f"= {time}" in text and f"MFU {mfu}." in text
    # The figures the prose quotes are in view as the page opens; the arithmetic is in details.
    seen = text_of(html.split("<details")[0])
    assert f"take {time}" in seen and f"MFU {mfu}." in seen
    assert figures.get_figure("example_throughput")() == "86,100 tokens/s"
    # 48.2e9 FLOPs a token x 86,100 tokens/s / (8 x 989.4e12) = 0.525
    assert mfu == "52.5 %"


def test_compute_quotes_step_10s_expected_training_speed_not_a_typed_one() -> None:
    # The step's example is the lesson's own expected figure for Llama 3.1 8B on dgx-1, the
    # one side_by_side (step 10) shows as "about 86,100 tokens/s expected (52.5 % MFU)".
    beside = text_of(render("side_by_side"))
    speed = figures.get_figure("example_throughput")()
    mfu = figures.get_figure("example_mfu")(model="llama-3.1-8b")
    shown = re.search(r"Throughput: about ([\d,]+) tokens/s expected \(([^)]*) MFU\)", beside)
    assert shown is not None and shown.group(2) == mfu
    # the prose rounds the widget's figure to three significant figures
    widget_rate = float(shown.group(1).replace(",", ""))
    assert f"{float(f'{widget_rate:.3g}'):,.0f} tokens/s" == speed
    prose = _in_view("compute.md")
    assert '{{ step("side-by-side") }}\'s expected figure' in prose
    assert "good for a large run" not in prose and "60,000" not in prose
    # The widget's arithmetic says 6 x the weights a token multiplies, not 3 x 15.0 billion.
    working = text_of(render("mfu_calculator"))
    assert "6 × 7.50 billion weights a token multiplies" in working
    assert "3 × 15.0 billion" not in working


def test_roofline_says_the_longer_is_the_bound_and_the_sum_the_upper_end() -> None:
    prose = " ".join((STEPS / "roofline.md").read_text(encoding="utf-8").split())
    assert "never the sum" not in prose
    assert "whichever is longer: the bound" in prose and "is the sum: the upper end" in prose


def _in_view(step: str) -> str:
    """A step's markdown up to its first closed details, on one line: what shows as it opens
    (macros unexpanded)."""
    return " ".join((STEPS / step).read_text(encoding="utf-8").split("<details")[0].split())


def test_compute_says_the_good_mfu_band_once_in_view() -> None:
    html = render("mfu_calculator")
    seen = text_of(html.split("<details")[0])
    assert seen.count("35–55 %") == 1 and "good for large runs: 35–55 %" in seen
    assert "mfu_good_band" not in (STEPS / "compute.md").read_text(encoding="utf-8")


def test_bandwidth_says_the_decode_time_is_a_minimum_for_the_weights_alone() -> None:
    # (8,030,261,248 parameters - the untied input embedding's 128,256 x 4,096, looked up one
    # row per token) x 2 bytes = 15.01 GB / 3.35 TB/s = 4.48 ms is the least a token can take;
    # follow-one-request, roofline, five-questions and playground say 4.52-4.53 ms because
    # they read the KV cache too.
    prose = _in_view("bandwidth.md")
    assert 'at least {{ figure("decode_time", model="llama-3.1-8b") }} per token (the weights alone' \
        in prose
    assert 'so at most **{{ figure("decode_ceiling", model="llama-3.1-8b") }}**' in prose
    with_cache = text_of(render("roofline_chart"))
    assert "4.52 ms at best" in with_cache and figures.decode_time("llama-3.1-8b") == "4.48 ms"


def test_roofline_says_in_view_why_296_and_where_the_kv_cache_stops_the_rule() -> None:
    prose = _in_view("roofline.md")
    assert "while weight reads dominate (2 FLOPs per 2-byte weight per request)" in prose
    assert "just past the ridge" in prose
    assert '{{ figure("decode_kv_ceiling", context=8192) }}' in prose
    # The chart opens at 1,024 tokens: the rule's cap there is in view too, and below the ridge.
    assert '{{ figure("decode_kv_ceiling", context=1024) }}' in prose
    assert figures.get_figure("decode_kv_ceiling")(context=1024) == "116 FLOP/byte"
    # The ridge is 295.3 FLOP/byte, the batch 296: with no context Llama 3.1 8B does
    # 2 x 7,504,658,432 matmul FLOPs per request over 2 x (7,504,924,672 weights streamed +
    # 4,096 per request looked up) bytes: 0.99996 FLOP/byte per request (the norms' 266,240
    # weights are read but do no maths).
    assert figures.get_figure("decode_compute_batch")() == "296"
    assert figures.get_figure("decode_kv_ceiling")(context=8192) == "18 FLOP/byte"


def test_side_by_side_gives_the_intensity_of_one_micro_batch_not_of_the_state() -> None:
    model = get_model("llama-3.1-8b")
    # 6 N + attention FLOPs per token x 4,096 tokens over 8 bytes per parameter: the weights
    # are read in the forward and the backward pass and the gradients added in, every time;
    # the untied input embedding (128,256 x 4,096 = 525,336,576) only its gradients (4 bytes
    # each) and the 4,096 rows of 4,096 bf16 numbers the tokens look up.
    per_token = training_flops_per_token(model, 4096).model
    table = 128_256 * 4096
    expected = per_token * 4096 / (8 * (model.params - table) + 4 * table + 4096 * 4096 * 2)
    assert micro_batch_intensity(model, micro_batch=1, seq_len=4096) == pytest.approx(expected)
    assert 3_000 < expected < 3_500  # about 0.75 x the micro-batch's tokens, not 786,432
    text = text_of(render("side_by_side"))
    assert f"{expected:,.0f} FLOPs per byte read for each micro-batch of 1 × 4,096 tokens" in text
    assert "786,432" not in text and "per byte of training state" not in text


@pytest.mark.parametrize(("cpu_id", "clock_hz"), [("xeon-8480c", 2.0e9), ("epyc-9654", 2.4e9)])
def test_cpu_and_gpu_counts_cpu_lanes_as_its_fp32_peak_assumes(cpu_id: str, clock_hz: float) -> None:
    # fp32 peak = lanes x 2 FLOPs (a fused multiply-add) x base clock: 56 cores x 2 AVX-512
    # FMA units x 16 lanes for the Xeon (DGX H100 datasheet: 2.0 GHz); 96 x 16 for the EPYC.
    cpu = get_hardware(cpu_id)
    assert cpu.lanes * 2 * clock_hz == pytest.approx(cpu.peak_flops_per_s("fp32"), rel=1e-3)


def test_cpu_and_gpu_names_the_cores_its_table_shows() -> None:
    prose = (STEPS / "cpu-and-gpu.md").read_text(encoding="utf-8")
    assert "a few dozen large, clever cores" not in prose
    assert figures.get_figure("server_cpu_cores")() == "112"
    assert "112 cores" in text_of(render("cpu_vs_gpu"))


def test_cpu_and_gpu_prose_ratios_are_the_widgets_server_against_server() -> None:
    matrix = figures.get_figure("server_gpu_over_cpu")()
    vector = figures.get_figure("server_gpu_over_cpu")(path="vector")
    measured = figures.get_figure("server_gpu_over_cpu")(measured=True)
    # 8 x 989.4 / (2 x 114.688) = 34.5; / (2 x 7.168) = 552; measured 0.803 / 0.187 of those.
    assert (matrix, vector, measured) == ("34.5×", "552×", "148×")
    # same-prompt-on-cpus: one H100 on paper against both sockets' AMX, 989.4 / (2 x 114.688), about 4x.
    assert figures.get_figure("server_gpu_over_cpu")(gpus=1) == "4.3×"
    # Each ratio titles a chart, in view as the page opens (not in the closed details), and
    # names both sides: the vector units' ratio is against the same bf16 tensor cores.
    seen = text_of(render("cpu_vs_gpu").split("<details")[0])
    assert (
        f"Paper peak, AMX matrix units (bf16) against tensor cores (bf16, dense): GPU / CPU = "
        f"{matrix} (AVX-512 vector units (fp32): {vector})" in seen
    )
    assert (
        f"Measured matrix multiply, AMX matrix units against tensor cores: GPU / CPU = "
        f"{measured}" in seen
    )


@pytest.mark.parametrize("name", ["request_timeline", "five_questions", "playground"])
def test_the_request_five_questions_and_playground_give_the_prefill_as_a_bound_with_the_expected_value(name: str) -> None:
    text = text_of(render(name))
    model, gpu = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    prompt, output = quantities.TYPICAL_PROMPT_TOKENS, quantities.TYPICAL_OUTPUT_TOKENS
    bound = prefill(model, gpu, prompt_tokens=prompt).seconds
    expected = expected_serve(model, gpu, prompt_tokens=prompt, output_tokens=output).ttft_seconds
    assert expected > bound
    assert format_seconds(bound) in text and format_seconds(expected) in text
    if name != "five_questions":  # its answer words it 'at best ... expected' in a sentence
        assert f"{format_seconds(bound)} at best" in text
    # no first-token time stands alone: every mention of the bound says it is one
    for found in re.finditer(re.escape(format_seconds(bound)), text):
        after = text[found.end():found.end() + 40]
        before = text[max(0, found.start() - 60):found.start()]
        chart_label = before.endswith(("prefill: ", "first token ")) and not before.endswith(
            "Time to first token ")  # the timeline's own labels, drawn beside its legend
        assert "at best" in after or chart_label


def test_where_ai_runs_owning_pays_for_the_building_network_and_staff() -> None:
    # Epoch AI (2026-05-14): TCO $8.5B a year, servers $5B over 5 years, energy $0.6B, so the
    # rest is (8.5 - 5 - 0.6) / (5 x 5) = 0.116 of the server purchase a year.
    assert prices().overhead_fraction_per_year == pytest.approx((8.5 - 5 - 0.6) / 25, abs=1e-3)
    with_overhead = rent_vs_own_from_catalog()
    bare = rent_vs_own_from_catalog(overhead_fraction_per_year=0.0)
    assert with_overhead.break_even_utilisation is not None
    assert bare.break_even_utilisation is not None
    assert with_overhead.break_even_utilisation > bare.break_even_utilisation + 0.1
    assert figures.get_figure("break_even")() == f"{format_percent(with_overhead.break_even_utilisation)}"
    text = text_of(render("own_vs_rent"))
    assert "not included (0 %)" not in text and "11.6 % of the purchase price a year" in text
    prose = (STEPS / "where-ai-runs.md").read_text(encoding="utf-8")
    assert "are left out" not in prose and 'figure("ownership_overhead")' in prose


def test_the_reality_page_quotes_llama_cpps_int8_rate_from_the_catalogue() -> None:
    # llama.cpp PR #7676: Llama 3 8B Q4_0 prefill on an RTX 4090 at 10,358.75 tokens/s, which
    # the catalogue reads as 0.33 of the int8 peak (efficiency.toml [matmul.ggml]).
    assert figures.get_figure("llama_cpp_int8_share")() == "33 %"
    prose = (STEPS.parent / "reality-check.md").read_text(encoding="utf-8")
    assert '{{ figure("llama_cpp_int8_share") }} of the chip' in prose


def test_cpu_and_gpu_shows_the_measured_range_from_matrix_to_vector_units() -> None:
    # Measured: 8 H100s x 794.5 TFLOP/s (0.803 of 989.4) over 2 sockets x 0.187 x 114.688
    # TFLOP/s (AMX) = 148x; over 2 x 0.93 x 7.168 TFLOP/s (AVX-512 sgemm) = 477x.
    assert figures.get_figure("server_gpu_over_cpu")(measured=True, path="vector") == "477×"
    notes = (STEPS / "cpu-and-gpu.md").read_text(encoding="utf-8").split("<summary>Measured", 1)[1]
    notes = " ".join(notes.split("</details>", 1)[0].split())
    assert ('{{ figure("server_gpu_over_cpu", measured=True) }} to {{ figure("server_gpu_over_cpu", '
            'measured=True, path="vector") }} faster on the GPUs') in notes
    # What the range measures (a matrix multiply) and why step 12's whole jobs gain less.
    assert "a tuned matrix multiply runs" in notes and "Whole jobs gain less" in notes
    assert '{{ step("same-prompt-on-cpus") }}' in notes


def test_the_reality_page_counts_the_405b_runs_attention_from_the_engine() -> None:
    from engine.lesson.tables.registry import get_table
    from engine.numbers.training_runs import LLAMA_3_1_405B_PRETRAINING_TOKENS
    from engine.words.format import format_flops

    model = get_model("llama-3.1-405b")
    tokens = LLAMA_3_1_405B_PRETRAINING_TOKENS  # 15.6 trillion (Llama 3 paper)
    rule = 6 * model.params * tokens
    # Meta's 8,192-token sequences (the run's own, as step 6 counts them).
    with_attention = training_flops_per_token(model, seq_len=8192).model * tokens
    share = with_attention / rule - 1.0
    assert 0.03 < share < 0.04  # causal attention over 8,192 tokens: a few per cent of 6 N
    sentence = (f"The lesson's steps count attention too: {format_flops(with_attention)}, "
                f"{format_percent(share)} more.")
    assert sentence == "The lesson's steps count attention too: 3.94 × 10^25 FLOPs, 3.65 % more."
    html = get_table("reality")(topic="compute")
    assert sentence.replace("'", "&#x27;") in html
    # The page itself types neither figure: both come from the table the engine renders.
    prose = (STEPS.parent / "reality-check.md").read_text(encoding="utf-8")
    assert "3.94" not in prose and "3.65" not in prose


def test_capacity_says_what_does_not_fit_runs_only_offloaded_not_never() -> None:
    from engine.numbers.plan import plan

    prose = _in_view("capacity.md")
    assert "what does not fit never runs at GPU speed." in prose
    refused = text_of(render("capacity_gate"))
    assert "Refused:" in refused and "Nothing runs" not in refused
    # The engine itself runs it with CPU offload: Llama 3.1 70B in bf16 with 40 of its 80
    # layers on one H100 fits, and each token waits on the host link for the other 40.
    offloaded = plan(model="llama-3.1-70b", hardware="h100-sxm", task="serve", gpu_layers=40)
    on_two = plan(model="llama-3.1-70b", hardware="h100-sxm", gpus=2, task="serve")
    assert offloaded.memory.fits and offloaded.serve is not None and on_two.serve is not None
    assert offloaded.serve.tpot_seconds > 10 * on_two.serve.tpot_seconds


def test_where_ai_runs_calls_a_near_tie_break_even() -> None:
    r = rent_vs_own_from_catalog()
    # $1.41 / 0.50 + $0.162 = $2.98 owned against $2.99 rented: 0.3 % apart, a tie.
    assert abs(r.owned_usd_per_used_gpu_hour - r.rent_usd_per_gpu_hour) < 0.01 * r.rent_usd_per_gpu_hour
    assert r.cheaper == "same"
    text = text_of(render("own_vs_rent"))
    assert "owning and renting cost within 1 % of each other: break-even" in text
    assert "owning is cheaper" not in text
    # Farther apart than 1 % the verdict still names the cheaper side.
    assert "owning is cheaper" in text_of(render("own_vs_rent", utilisation="90"))
    # The power per GPU says its basis: a share of the whole server's draw.
    assert "per GPU, a share of the whole purchase's draw" in text


def test_the_race_qualifies_its_bound_and_the_takeaway_says_why_the_cpus_fall_behind() -> None:
    import inspect

    from engine.numbers.plan import plan

    # The bound is plain work: plan() takes no speculative decoding and no cached prefix
    # (only the load simulator, engine.numbers.load, models them), so they can beat it.
    keywords = inspect.signature(plan).parameters
    assert not any(k.startswith(("spec", "prefix", "draft")) for k in keywords)
    notes = text_of(render("cpu_gpu_race"))
    assert ("no real system beats it without a cached prompt or speculative decoding, which the "
            "bound does not count") in notes
    prose = " ".join((STEPS / "same-prompt-on-cpus.md").read_text(encoding="utf-8").split())
    # One H100 against both sockets' AMX, then the share AMX reaches (oneDNN #1992: 18.7 %).
    assert ('but AMX reaches {{ figure("matmul_share", hardware="xeon-8480c") }} of its peak, so '
            "the CPUs finish far behind") in prose
    assert figures.get_figure("matmul_share")(hardware="xeon-8480c") == "18.7 %"
    assert "passes a hundred times" not in prose


def test_cpu_and_gpu_gives_the_cpus_memory_in_gib_per_socket_and_its_channels_per_socket() -> None:
    # DGX H100: 2 TB of DDR5 as 32 x 64 GiB DIMMs, 16 per socket: 2 x 1,024 GiB x 2^30 bytes =
    # 2,199.0 GB for both, over 8 memory channels on each socket.
    assert get_hardware("xeon-8480c").memory_bytes == 1024 * 2**30
    text = text_of(render("cpu_vs_gpu"))
    assert "2,199 GB DDR5-4800 (8 channels a socket)" in text
    assert "1,024 GiB per socket" in text and "1,024 GB per socket" not in text


def test_the_cheat_sheet_says_out_of_memory_is_mostly_arithmetic_as_step_19_does() -> None:
    sheet = " ".join((STEPS / "cheat-sheet.md").read_text(encoding="utf-8").split())
    five = " ".join((STEPS / "five-questions.md").read_text(encoding="utf-8").split())
    assert "Out of memory is mostly arithmetic" in sheet and "Out of memory is mostly arithmetic" in five
    assert "long inputs and allocator fragmentation can still strike mid-run" in sheet
    assert "Out of memory is arithmetic:" not in sheet


def test_side_by_sides_worked_problem_shows_the_subtraction_behind_its_conversations() -> None:
    # Llama 3.1 70B in bf16 over 8 H100s: 84.94 GB - 141.1 GB / 8 of weights - the working
    # space (vLLM's 8,192-token profiling step) and 1.5 GB runtime overhead = 64.07 GB of KV
    # cache per GPU; a 32,768-token conversation's 10.74 GB is split over the 8 (1.34 GB
    # each): 64.07 / 1.342 = 47.7, so 47.
    room = figures.get_figure("serve_kv_room")(model="llama-3.1-70b", gpus=8)
    share = figures.get_figure("kv_per_request_per_gpu")(model="llama-3.1-70b", context=32768,
                                                         gpus=8)
    count = figures.get_figure("serve_concurrent")(model="llama-3.1-70b", context=32768, gpus=8)
    assert (room, share, count) == ("64.07 GB", "1.34 GB", "47")
    assert int(64.07 / 1.342) == 47
    prose = " ".join((STEPS / "side-by-side.md").read_text(encoding="utf-8").split())
    assert 'leave each GPU {{ figure("serve_kv_room", model="llama-3.1-70b", gpus=8) }}' in prose
    assert '{{ figure("kv_per_request_per_gpu", model="llama-3.1-70b", context=32768, gpus=8) }}' \
        ' on every GPU' in prose


def test_step_1_says_why_a_token_costs_a_little_under_two_flops_per_parameter_in_view() -> None:
    # 15.0 billion FLOPs per token, not 2 x 8.03 billion = 16.06: the untied input embedding
    # (128,256 x 4,096) is looked up. Step 1 says so itself, not by pointing at step 2's
    # closed details.
    prose = _in_view("pile-of-numbers.md")
    assert "(a little under: the token table is looked up, not multiplied)" in prose
    assert "shows why" not in prose


def test_follow_one_request_shows_how_its_time_per_token_at_best_comes_about() -> None:
    # Llama 3.1 8B on an H100, 1,024 tokens in, 256 out: the first decode step reads the
    # weights a token multiplies (15.01 GB: the token table gives one row) and 1,024 x 131,072
    # bytes of KV cache = 15.14 GB; at 3.35 TB/s that is 4.52 ms, the last step's 15.18 GB
    # 4.53 ms, and the answer's mean 4.53 ms, the figure in view.
    text = text_of(render("request_timeline"))
    assert ("KV cache so far: 15.14 GB at the first step, 15.18 GB at the last, at 3.35 TB/s: "
            "4.52 ms to 4.53 ms, 4.53 ms on average.") in text
    assert "Time per output token 4.53 ms at best" in text
    assert pytest.approx(4.52e-3, abs=5e-6) == (15.01e9 + 1024 * 131072) / 3.35e12
