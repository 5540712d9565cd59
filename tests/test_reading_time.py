"""The words a reader sees as a page opens, and the minutes a step header states from them."""

from __future__ import annotations

import pytest

from engine.registry import get_widget
from engine.render.fields import Values
from macros import authoring
from macros.reading_time import (
    LOOK_MINUTES,
    READING_WORDS_PER_MINUTE,
    PageReading,
    read_page,
    step_minutes,
    visible_words,
    widget_minutes,
)


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


def test_what_each_widget_asks_of_the_reader() -> None:
    assert widget_minutes("use") == 1.0
    assert widget_minutes("look") == 0.5
    assert widget_minutes("use", goal_answers=3) == 3.0  # a drill: one minute a question
    assert widget_minutes("use", running_seconds=45) == 1.75  # a clock: its animation on top
    assert widget_minutes("look", goal_answers=3) == 0.5  # a drill only shown
    with pytest.raises(ValueError, match="use or look"):
        widget_minutes("skim")


def test_a_widget_with_inputs_is_to_be_used_unless_the_author_says_look() -> None:
    race = get_widget("cpu_gpu_race")
    running = race.running_seconds
    assert running is not None
    seconds = running(Values(race.defaults()))
    assert 1 < seconds < 60  # a race picks its speed to last about ten seconds
    assert authoring.reader_minutes(race, {}) == pytest.approx(1 + seconds / 60)
    assert authoring.reader_minutes(get_widget("model_size"), {}) == 1.0
    assert authoring.reader_minutes(get_widget("model_size"), {}, "look") == 0.5
    assert authoring.reader_minutes(get_widget("drill_speed"), {}) == 3.0
    with pytest.raises(ValueError, match="reader="):
        authoring.reader_minutes(get_widget("model_size"), {}, "skim")


def test_the_reader_model_on_a_small_hand_made_page() -> None:
    """Worked by hand: 117 words shown (a paragraph of 100; a table's 2 heads and 2 cells, 5
    words as "16 GB" is two; a closed details' 1-word summary; a widget's 11: title 2, label
    1, result 8), the details' body and the code block left out; a widget to use (1 minute),
    one only to look at (0.5), a drill of three questions (3) and a clock whose animation
    runs 30 seconds (1 + 0.5): 6 minutes of widgets. 117 / 238 = 0.49 minute of reading:
    6.49 minutes, 'about 6'."""
    steps = ("steps/only/",)
    header = authoring.step_header({}, "steps/only/", "", steps)

    def frame(name: str, minutes: str, words: str) -> str:
        return (f'<div class="widget" id="w-{name}-1" data-widget="{name}" '
                f'data-reader-minutes="{minutes}">{words}</div>')

    page = (
        f"<article>{header}<p>{' '.join(['word'] * 100)}</p>"
        "<table><tr><th>Model</th><th>Memory</th></tr><tr><td>8B</td><td>16 GB</td></tr></table>"
        "<details><summary>Assumptions</summary><p>ten words that the reader opens only on purpose here</p></details>"
        "<pre><code>python -m engine plan --gpus 8</code></pre>"
        + frame("model_size", "1", "<p>Model size</p><label>Model</label><output>18 GB of weights for 8 billion parameters</output>")
        + frame("roofline_chart", "0.5", "")
        + frame("drill_speed", "3", "")
        + frame("training_run", "1.5", "")
        + "</article>"
    )
    assert read_page(page) == PageReading(117, (1.0, 0.5, 3.0, 1.5))
    built, minutes = authoring.finish_step_header(page)
    assert minutes == pytest.approx(117 / 238 + 6.0)
    assert "Step 1 of 1 · about 6 minutes (117 words, 4 widgets)" in built
    assert 'data-minutes="6" data-words="117" data-widget-minutes="6"' in built


def test_a_widget_in_a_closed_details_asks_nothing_and_one_without_minutes_stops_the_count() -> None:
    hidden = ('<article><details><summary>More</summary><div class="widget" data-widget="x" '
              'data-reader-minutes="1"></div></details></article>')
    assert read_page(hidden).widget_minutes == ()
    with pytest.raises(ValueError, match="data-reader-minutes"):
        read_page('<article><div class="widget" data-widget="x"></div></article>')


def test_the_header_states_the_minutes_of_the_built_page() -> None:
    steps = ("steps/a/", "steps/b/")
    header = authoring.step_header({}, "steps/b/", "", steps)
    prose = " ".join(["word"] * (READING_WORDS_PER_MINUTE * 2))
    hidden = "<details><summary>More</summary><p>" + prose * 3 + "</p></details>"
    widgets = authoring.widget_html("model_size", "steps/b/", {}) + authoring.widget_html(
        "model_size", "steps/b/", {"reader": "look"})
    built, minutes = authoring.finish_step_header(f"<article>{header}<p>{prose}</p>{hidden}</article>")
    # 476 words + "More": 2 minutes and a bit.
    assert minutes == pytest.approx(477 / READING_WORDS_PER_MINUTE)
    assert "Step 2 of 2 · about 2 minutes (477 words)" in built
    assert 'data-reader-minutes="1"' in widgets and 'data-reader-minutes="0.5"' in widgets
    with pytest.raises(authoring.AuthoringError, match="widget_minutes"):
        authoring.step_header({"widget_minutes": 2}, "steps/b/", "", steps)


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


def test_the_own_chip_form_counts_only_when_its_hardware_is_chosen() -> None:
    def widget(chosen: str) -> str:
        return (
            '<article><div class="widget"><form><div class="widget-field"><label>GPU</label>'
            f'<select name="hardware"><option value="h100-sxm" '
            f'{"selected" if chosen == "h100-sxm" else ""}>H100</option><option value="own" '
            f'{"selected" if chosen == "own" else ""}>Own</option></select></div>'
            '<div class="widget-field"><label>Memory</label><input name="chip_memory_GB">'
            '<span class="widget-hint">in GB</span></div></form></div></article>'
        )

    assert visible_words(widget("h100-sxm")) == 2  # GPU, H100
    assert visible_words(widget("own")) == 5  # GPU, Own, Memory, in GB


def test_a_task_select_shows_only_its_tasks_inputs_in_the_widget_that_has_it() -> None:
    def widget(chosen: str) -> str:
        options = "".join(
            f'<option value="{task}"{" selected" if chosen == task else ""}>{task.title()}</option>'
            for task in ("serve", "train", "prefill")
        )
        return (
            '<article><div class="widget"><form><div class="widget-field"><label>Task</label>'
            f'<select name="task">{options}</select></div>'
            '<div class="widget-field"><label>Batch</label><input name="batch"></div>'
            '<div class="widget-field"><label>Sharding</label><select name="sharding">'
            '<option value="none" selected>None</option></select></div></form></div>'
            '<div class="widget"><form><div class="widget-field"><label>Tokens</label>'
            '<input name="tokens"></div></form></div></article>'
        )

    # Task and its choice, then the chosen task's field; a widget without a task select
    # (the second) shows its "tokens" field whatever another widget chose.
    assert visible_words(widget("serve")) == 2 + 1 + 1
    assert visible_words(widget("train")) == 2 + 2 + 1
    # A task select with another choice (the CPU race's "prefill") hides neither task's.
    assert visible_words(widget("prefill")) == 2 + 1 + 2 + 1


def test_a_look_only_widget_shows_its_result_and_buttons_with_its_fields_folded() -> None:
    training_run = get_widget("training_run")
    html = authoring.widget_html("training_run", "page.md", {"reader": "look"})
    assert '<details class="widget-inputs"><summary>Change inputs</summary>' in html
    used = authoring.widget_html("training_run", "page.md", {})
    assert "widget-inputs" not in used
    folded, shown = read_page(f"<article>{html}</article>"), read_page(f"<article>{used}</article>")
    assert folded.words < shown.words and folded.widget_minutes[0] < shown.widget_minutes[0]
    assert 'data-clock="play"' in html.split('class="widget-result"')[0]  # Start stays
    assert training_run.controls


def test_a_summary_inside_a_closed_details_does_not_show() -> None:
    nested = (
        "<article><details><summary>Outer</summary><p>hidden words</p>"
        "<details><summary>Inner summary</summary><p>more</p></details></details></article>"
    )
    assert visible_words(nested) == 1


def test_a_widget_frames_buttons_and_status_do_not_count_but_its_result_does() -> None:
    """The frame's "Copy link", "Copy as command" with "Show the command", and its
    "Build-time figures." status are the same chrome on every widget: recognised, not read."""
    built = authoring.widget_html("capacity_gate", "steps/b/", {})
    assert "Copy link" in built and "Build-time figures." in built and "Copy as command" in built
    counted = visible_words(f"<article>{built}</article>")
    chrome = ('<div class="widget-copy widget-copy-link"><button>Copy link</button></div>'
              '<p class="widget-status" role="status">Build-time figures.</p>')
    assert visible_words(f"<article><p>Refused</p>{chrome}</article>") == 1
    as_prose = built.replace('class="widget-copy ', 'class="x ').replace('"widget-status"', '"x"')
    # Copy link; Copy as command, Show the command; Build-time figures.
    assert visible_words(f"<article>{as_prose}</article>") - counted == 2 + 3 + 3 + 2
    assert counted > 20  # the title, labels and result still count


def test_a_diagram_is_half_a_minute_to_look_at_and_its_labels_are_not_read_again() -> None:
    drawn = authoring.diagram_html("transformer_layer", {})
    page = f"<article><p>one two</p>{drawn}</article>"
    assert read_page(page) == PageReading(2, (LOOK_MINUTES,))
    closed = f"<article><details><summary>Picture</summary>{drawn}</details></article>"
    assert read_page(closed) == PageReading(1, ())


def test_a_chart_drawn_twice_is_read_once() -> None:
    """The roofline is drawn wide and narrow (plot.Narrow); the stylesheet shows one of them
    at a time, so the narrow copy's labels are not counted again."""
    wide = '<div class="chart-scroll"><svg><text>ridge point here</text></svg></div>'
    narrow = '<div class="chart-scroll narrow"><svg><text>ridge point here</text></svg></div>'
    assert visible_words(f"<article>{wide}{narrow}</article>") == 3
    built = authoring.widget_html("roofline_chart", "steps/b/", {})
    assert 'chart-scroll narrow' in built
    without = built.replace("chart-scroll narrow", "chart-scroll")
    assert visible_words(f"<article>{without}</article>") > visible_words(f"<article>{built}</article>")
