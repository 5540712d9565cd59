"""The words a reader sees as a page opens, and the minutes a step header states from them."""

from __future__ import annotations

import pytest

from macros import authoring
from macros.reading_time import READING_WORDS_PER_MINUTE, step_minutes, visible_words


def test_only_the_article_counts() -> None:
    page = "<nav>Home Steps Glossary</nav><article><p>Four words are here.</p></article><footer>x y</footer>"
    assert visible_words(page) == 4


def test_a_closed_details_shows_its_summary_only_and_an_open_one_shows_all() -> None:
    closed = "<article><details><summary>Assumptions</summary><ul><li>one two three</li></ul></details></article>"
    opened = closed.replace("<details>", "<details open>")
    assert visible_words(closed) == 1
    assert visible_words(opened) == 4


def test_scripts_tooltips_hidden_elements_and_unchosen_options_do_not_count() -> None:
    page = (
        "<article><script>var a = 1;</script><style>p { color: red }</style>"
        '<abbr title="a long tooltip nobody sees">KV</abbr>'
        '<svg><title>chart title</title><text x="1">used 18 GB</text></svg>'
        '<p hidden>not shown</p><select><option value="a">Alpha one</option>'
        '<option value="b" selected>Beta</option></select><br><input value="8192"></article>'
    )
    # KV, used, 18, GB, Beta
    assert visible_words(page) == 5


def test_the_step_header_itself_does_not_count() -> None:
    page = '<article><p class="step-meta" data-step="1">Step 1 of 21</p><p>one two</p></article>'
    assert visible_words(page) == 2


def test_minutes_are_words_at_reading_speed_plus_the_widget_allowance() -> None:
    assert step_minutes(READING_WORDS_PER_MINUTE * 3, 1.0) == 4
    assert step_minutes(0, 0) == 1  # never "about 0 minutes"


def test_the_header_states_the_minutes_of_the_built_page() -> None:
    steps = ("steps/a/", "steps/b/")
    markdown = "{{ widget('model_size') }} {{ widget('serve_plan') }}"
    header = authoring.step_header({}, "steps/b/", markdown, steps)
    prose = " ".join(["word"] * (READING_WORDS_PER_MINUTE * 2))
    hidden = "<details><summary>More</summary><p>" + prose * 3 + "</p></details>"
    built, minutes = authoring.finish_step_header(f"<article>{header}<p>{prose}</p>{hidden}</article>")
    # 476 words + "More", 2 widgets at half a minute: 3 minutes.
    assert minutes == pytest.approx(477 / READING_WORDS_PER_MINUTE + 1.0)
    assert "Step 2 of 2 · about 3 minutes (477 words, 2 widgets)" in built
    assert 'data-minutes="3" data-words="477"' in built


def test_a_page_without_a_step_header_is_left_alone() -> None:
    assert authoring.finish_step_header("<article><p>x</p></article>") == (
        "<article><p>x</p></article>",
        None,
    )


def test_the_home_page_states_the_sum_of_the_steps_rounded_once() -> None:
    text = authoring.lesson_minutes_html()
    done = authoring.finish_lesson_minutes(text, {"steps/a/": 2, "steps/b/": 3}, ["steps/a/", "steps/b/"])
    assert "about 5 minutes" in done
    # Three steps of 1.4 minutes each say "about 1 minute", and together take 4, not 3.
    three = {"steps/a/": 1.4, "steps/b/": 1.4, "steps/c/": 1.4}
    done = authoring.finish_lesson_minutes(text, three, list(three))
    assert "about 4 minutes" in done
    with pytest.raises(authoring.AuthoringError, match="steps/b/"):
        authoring.finish_lesson_minutes(text, {"steps/a/": 2}, ["steps/a/", "steps/b/"])


def test_a_field_shown_only_for_another_model_choice_does_not_count() -> None:
    def widget(chosen: str) -> str:
        return (
            '<article><div class="widget"><form><div class="widget-field"><label>Model</label>'
            f'<select name="model"><option value="llama" {"selected" if chosen == "llama" else ""}>'
            f'Llama</option><option value="config" {"selected" if chosen == "config" else ""}>'
            "Yours</option></select></div>"
            '<div class="widget-field"><label>Your config</label><textarea name="config">'
            '</textarea><span class="widget-hint">Paste it here</span></div></form></div></article>'
        )

    assert visible_words(widget("llama")) == 2  # Model, Llama
    assert visible_words(widget("config")) == 7  # Model, Yours, Your config, Paste it here


def test_a_summary_inside_a_closed_details_does_not_show() -> None:
    nested = (
        "<article><details><summary>Outer</summary><p>hidden words</p>"
        "<details><summary>Inner summary</summary><p>more</p></details></details></article>"
    )
    assert visible_words(nested) == 1
