"""What every drill shows as the page opens (its question) and what waits in its one closed
details (the score, the rules, the question's assumptions); counted as the step's minutes
count them (macros/reading_time.py)."""

from __future__ import annotations

import json
import re

import pytest
from widget_text import text_of

from engine.browser import update
from engine.lesson.drills import cluster_memory as drill_cluster
from engine.lesson.drills import fit as drill_fit
from engine.lesson.drills import speed as drill_speed
from engine.lesson.drills import training_memory as training_drill
from engine.lesson.drills.core import Score
from engine.lesson.drills.view import SECONDARY_SUMMARY
from macros.reading_time import visible_words

# widget: (the question of seed 1, the words of the rendered output a reader sees at most)
DRILLS = {
    "drill_training_memory": (training_drill.training_memory_question, 75),
    "drill_will_it_fit": (drill_fit.fit_question, 80),
    "drill_speed": (drill_speed.speed_question, 80),
    "drill_cluster_memory": (drill_cluster.pod_memory_question, 100),
}
DETAILS = re.compile(r'<details class="widget-notes"><summary>(.*?)</summary>(.*?)</details>', re.S)


def rendered(name: str, seed: int, action: str = "") -> str:
    inputs = {"seed": str(seed), "answer": "", "fits": "", "limit": "",
              "state": Score(2, 1, 1, None).to_text(), "action": action}
    html: str = json.loads(update(name, json.dumps(inputs)))["html"]
    return html


@pytest.mark.parametrize("name", sorted(DRILLS))
def test_the_question_shows_and_the_score_and_rules_wait_in_one_closed_details(name: str) -> None:
    question, _ = DRILLS[name]
    for seed in (1, 2, 3, 17):
        html = rendered(name, seed)
        (summary, inside), = DETAILS.findall(html)
        assert summary == (SECONDARY_SUMMARY if name != "drill_cluster_memory" else "Score and rules")
        assert "<details open" not in html
        shown = text_of(DETAILS.sub("", html))
        q = question(seed)
        assert q.lead in shown and q.ask in text_of(html)
        for _term, value in q.givens():
            assert value in shown
        assert "Score: 1 correct of 2 answered, streak 1." in text_of(inside)
        assert "Score" not in shown
        assert "Answers within 2 % of the engine's figure count." in text_of(inside)
        assert "Only your first answer" in text_of(inside)


@pytest.mark.parametrize("name", ["drill_training_memory", "drill_will_it_fit", "drill_speed"])
def test_each_questions_assumptions_are_in_the_details(name: str) -> None:
    question, _ = DRILLS[name]
    for seed in range(1, 30):
        html = rendered(name, seed)
        (_, inside), = DETAILS.findall(html)
        notes = question(seed).notes()  # type: ignore[attr-defined]
        assert notes
        for line in notes:
            assert line in text_of(inside)


@pytest.mark.parametrize("name", sorted(DRILLS))
def test_a_drill_reads_in_few_words_as_the_page_opens(name: str) -> None:
    """The output's visible words, as the step header counts them, stay within the drill's
    share of its step's budget (drill-training-memory at most 150 words, drill-will-it-fit at most 230)."""
    _, most = DRILLS[name]
    for seed in range(1, 40):
        html = rendered(name, seed)
        assert visible_words(f"<article>{html}</article>") <= most, seed


@pytest.mark.parametrize("name", sorted(DRILLS))
def test_the_completed_drill_mark_stays_in_the_page_inside_the_details(name: str) -> None:
    """progress.js finds the mark by selector, so a closed details does not hide it."""
    question, _ = DRILLS[name]
    state = Score(4, 4, 4, None).to_text()
    for seed in range(1, 60):
        q = question(seed)
        if name == "drill_speed":
            inputs = {"answer": f"{q.answer:.6g}", "limit": q.limit, "fits": ""}
        else:
            inputs = {"answer": f"{q.answer_GB:.6g}", "fits": "yes" if q.fits else "no",
                      "limit": ""}
        out = json.loads(update(name, json.dumps(
            {**inputs, "seed": str(seed), "state": state, "action": "check"})))
        if 'data-correct="true"' in out["html"]:
            break
    else:
        raise AssertionError("no question answered right")
    (_, inside), = DETAILS.findall(out["html"])
    assert "data-drill-complete" in inside
