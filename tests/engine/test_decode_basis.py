"""One basis for each figure of one user decoding Llama 3.1 8B on one H100 (issue 28 §2).

The lesson quotes that user's time per token on three bases, each said beside its figure:
with no context yet (the bandwidth step and the cheat sheet: the weights alone), at a
1,024-token context (the roofline), and for a 1,024-token prompt and its answer (the five
questions and the playground). Each basis is one engine call, and the 1,024 tokens are one
constant; these tests keep each figure equal to the others of its basis.
"""

from __future__ import annotations

import re
from pathlib import Path

from widget_text import render, text_of

from engine.lesson import dgx_load
from engine.lesson.figures import prose as figures
from engine.lesson.tables.cheatsheet import cheat_hardware
from engine.numbers import quantities
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.plan import plan
from engine.numbers.serving import decode_step
from engine.words.format import format_seconds, format_tokens_per_s

STEPS = Path(__file__).resolve().parents[2] / "docs" / "steps"
MODEL, GPU = "llama-3.1-8b", "h100-sxm"


def _markdown(step: str) -> str:
    return " ".join((STEPS / step).read_text(encoding="utf-8").split())


def _in_view(step: str) -> str:
    """A step's markdown up to its first closed details (macros unexpanded)."""
    return _markdown(step).split("<details")[0]


def test_no_context_the_bandwidth_step_and_the_cheat_sheet_quote_one_decode_step() -> None:
    # 15.01 GB of weights read per token / 3.35 TB/s = 4.48 ms, 1 / 4.48 ms = 223 tokens/s.
    empty = decode_step(get_model(MODEL), get_hardware(GPU), context_tokens=0)
    assert figures.decode_time(MODEL) == format_seconds(empty.seconds) == "4.48 ms"
    ceiling = figures.decode_ceiling(MODEL)
    assert ceiling == format_tokens_per_s(empty.tokens_per_s_per_user) == "223 tokens/s"
    assert "(the weights alone, no context yet)" in _in_view("bandwidth.md")
    sheet = text_of(cheat_hardware())
    h100_row = sheet.split("H100 SXM5 80GB 84.94 GB")[1].split("H200")[0]
    # "3.35 TB/s 989 295", then the 8B decode cell
    assert h100_row.split()[4:6] == ceiling.split()
    assert "decode in bf16, one user, at best: bandwidth ÷ weight bytes" in sheet


def test_the_roofline_opens_at_the_lessons_one_context_and_says_it_beside_the_time() -> None:
    context = quantities.TYPICAL_PROMPT_TOKENS
    # One 1,024: the roofline's default, the load curve's prompts, the plan's default prompt.
    assert context == 1024 == dgx_load.PROMPT_TOKENS
    serve = plan(model=MODEL).serve
    assert serve is not None and serve.prompt_tokens == context
    # The prose's KV ceiling names the context the chart opens at.
    assert f'figure("decode_kv_ceiling", context={context})' in _in_view("roofline.md")
    # (15.01 GB + 1,024 x 131,072 bytes) / 3.35 TB/s = 15.14 GB / 3.35 TB/s = 4.52 ms.
    step = decode_step(get_model(MODEL), get_hardware(GPU), context_tokens=context)
    assert format_seconds(step.seconds) == "4.52 ms"
    shown = text_of(render("roofline_chart").split("<details")[0])
    assert (f"Time per token, each user {format_seconds(step.seconds)} at best, 6.52 ms "
            "expected (1,024-token context)") in shown


def test_the_five_questions_say_the_prompt_their_speed_is_for_beside_the_fit_context() -> None:
    p = plan(model=MODEL)
    s = p.serve
    assert s is not None
    html = render("five_questions")
    shown = text_of(html.split('<details class="widget-notes">')[0])
    best, expected = format_seconds(s.tpot_seconds), format_seconds(
        s.expected.decode_seconds_per_token)
    # The fit is for one request of 8,192 tokens; the speed for a 1,024-token prompt's answer.
    assert "Past 61 requests of 8,192 tokens" in shown  # 505,472 tokens of KV room / 8,192
    assert (f"{best} per token at best, about {expected} expected (1,024-token prompt)."
            in shown)
    # The playground's time per output token is the same plan() call, on the same basis.
    playground = text_of(render("playground"))
    assert f"Time per output token {best} at best, {expected} expected" in playground
    assert (best, expected) == ("4.53 ms", "6.52 ms")


def test_the_price_problem_prices_one_user_and_64_users_at_one_context() -> None:
    problem = _markdown("playground.md").split('id="worked-problem"')[1]
    contexts = re.findall(r'figure\("decode_(?:price|throughput)", [^)]*context=(\d+)', problem)
    calls = re.findall(r'figure\("decode_(?:price|throughput)"', problem)
    typical = quantities.TYPICAL_PROMPT_TOKENS + quantities.TYPICAL_OUTPUT_TOKENS
    assert len(contexts) == len(calls) == 4 and set(contexts) == {str(typical)}
    assert f"each with {typical:,} tokens of context" in problem
    # One user at 1,280 tokens: (15.01 GB + 1,280 x 131,072 bytes) / 3.35 TB/s = 4.53 ms,
    # 221 tokens/s; $2.99 an hour / (220.7 x 3,600) tokens = $3.76 per million.
    assert figures.get_figure("decode_price")(MODEL, context=typical) == "$3.76"
