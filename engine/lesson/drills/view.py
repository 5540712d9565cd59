"""What the drill widgets share: the question, the feedback and the score as HTML, the
render that checks an answer and keeps the score, and the controls and actions.

As the page opens a drill shows its question, the answer box and its buttons; the score, the
drill's rules (how an answer is read and checked) and the question's assumptions sit in one
closed details (:func:`engine.render.secondary.secondary`) that the reader opens on purpose.

A drill widget's question comes from its number (hidden input ``seed``, mirrored in the
address, so a link reproduces it); the score lives in the hidden input ``state``, which the
browser keeps in localStorage. A widget module fills a :class:`DrillView` with its drill's
parts and renders with it. (No widget here: this module defines no ``WIDGET``.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from engine.lesson.drills.core import TOLERANCE, BaseFeedback, Score, next_seed, parse_seed
from engine.render.fields import Text, Values, hidden
from engine.render.html import definition_list, esc, tag
from engine.render.secondary import secondary
from engine.render.widget import Action, Rendered
from engine.words.format import format_percent

GOAL = 3  # correct answers that complete a drill; more questions stay available as practice
GB_ANSWER_RULE = "Give a number in GB (10^9 bytes), such as 42.5 or 42.5 GB; a point for decimals."
SECONDARY_SUMMARY = "Score, rules and assumptions"

# Text, not a Choice: the drill's own check answers an unchosen or odd value in its words.
FITS = Text(
    "fits",
    "Does it fit?",
    "",
    control_kind="select",
    options=(("", "Choose…"), ("yes", "Yes, it fits"), ("no", "No, it does not fit")),
)
STATE = hidden("state", "Score", Score().to_text())


class ShownQuestion(Protocol):
    """What a drill's view needs of its question."""

    @property
    def seed(self) -> int: ...

    @property
    def lead(self) -> str: ...

    @property
    def ask(self) -> str: ...

    def givens(self) -> list[tuple[str, str]]: ...


Q = TypeVar("Q", bound=ShownQuestion)


def seed_field(noun: str) -> Text:
    """The hidden question number (``noun``: 'question' or 'scenario')."""
    return hidden("seed", f"{noun.capitalize()} number", "1")


def answer_field(label: str) -> Text:
    """The typed answer in GB per GPU (the drill's own check reads it; how it is read is one
    of the drill's rules, :data:`GB_ANSWER_RULE`, not a hint under the box)."""
    return Text("answer", label, "", unit="GB per GPU")


def actions(noun: str) -> tuple[Action, ...]:
    return (Action("check", "Check", primary=True), Action("new", f"New {noun}"))


def score_html(score: Score, goal: int, drill: str) -> str:
    """The score, and once ``goal`` answers are right the mark ``data-drill-complete`` (with
    the drill widget's name) that the page's progress box counts."""
    text = f"Score: {score.correct} correct of {score.answered} answered, streak {score.streak}."
    left = goal - score.correct
    if left > 0:
        more = f" {left} more correct answer{'s' if left > 1 else ''} complete the drill."
        return tag("p", esc(text + more), class_="drill-score")
    done = tag(
        "span",
        esc(f"Drill complete: {goal} or more correct answers."),
        data_drill_complete=drill,
    )
    return tag("p", esc(text) + " " + done, class_="drill-score")


@dataclass(frozen=True)
class DrillView(Generic[Q]):
    """One drill's widget: its widget's name, what it calls a question, its catalogue of mistakes,
    how it draws a question, checks an answer and draws its picture (the memory bar; '' for
    none); how a typed answer is read (``answer_rule``) and the question's assumptions
    (``notes``), both shown with the score in the closed details."""

    widget_name: str  # the drill widget's name, on its completed score
    noun: str  # 'question' or 'scenario'
    mistakes: Mapping[str, str]
    question: Callable[[int], Q]
    check: Callable[[Q, Values], BaseFeedback]
    bar: Callable[[Q], str]
    working_title: str = "The working:"
    data: Callable[[Q], Mapping[str, str]] = lambda _: {}
    goal: int = GOAL
    cleared: tuple[str, ...] = ("answer", "fits")  # the inputs a new question empties
    answer_rule: str = GB_ANSWER_RULE
    notes: Callable[[Q], Sequence[str]] = lambda _: ()
    # The id of the worked problem that ends the drill's section, on the drill's own page
    # ('' for none): every feedback links to it, naming it by its title (the words after
    # "Worked problem: " in its summary), so the link says what it shows.
    worked_problem: str = ""
    worked_problem_title: str = ""

    def rules(self) -> tuple[str, ...]:
        """How the drill reads, checks and scores an answer, in words."""
        return (
            self.answer_rule,
            f"Answers within {format_percent(TOLERANCE)} of the engine's figure count.",
            "A wrong answer gets the full working and the name of the usual slip it matches.",
            f"Only your first answer to a {self.noun} counts; the score stays in this browser.",
        )

    def secondary_html(self, q: Q, score: Score) -> str:
        """The score, the rules and the question's assumptions, in one closed details."""
        notes = tuple(self.notes(q))
        items = "".join(tag("li", esc(line)) for line in (*notes, *self.rules()))
        summary = SECONDARY_SUMMARY if notes else "Score and rules"
        return secondary(summary, score_html(score, self.goal, self.widget_name) + tag("ul", items))

    def question_html(self, q: Q) -> str:
        lead = tag("strong", esc(f"{self.noun.capitalize()} {q.seed:,}.")) + " " + esc(q.lead)
        return (
            tag("p", lead, class_="drill-question")
            + definition_list(q.givens())
            + tag("p", esc(q.ask), class_="drill-ask")
        )

    def feedback_html(self, q: Q, feedback: BaseFeedback, counted: bool) -> str:
        verdict = tag(
            "p",
            esc(feedback.headline),
            class_="widget-verdict " + ("fits" if feedback.correct else "refused"),
        )
        slip = ""
        if feedback.mistake and feedback.mistake != "unknown":
            slip = tag("strong", esc(f"Likely slip: you {self.mistakes[feedback.mistake]}.")) + " "
        explanation = tag("p", slip + esc(feedback.explanation))
        repeat = (
            ""
            if counted
            else tag(
                "p",
                esc(
                    f"Only your first answer to a {self.noun} counts, so the score is "
                    f"unchanged. Press New {self.noun} for another."
                ),
                class_="widget-notes",
            )
        )
        working = tag("ol", "".join(tag("li", esc(line)) for line in feedback.working))
        return tag(
            "div",
            verdict
            + explanation
            + repeat
            + tag("p", esc(self.working_title))
            + working
            + self.bar(q)
            + self.worked_problem_html(),
            class_="drill-feedback",
            data_correct="true" if feedback.correct else "false",
            data_mistake=feedback.mistake or None,
        )

    def worked_problem_html(self) -> str:
        """A link to the section's worked problem, below on the same page ('' for none)."""
        if not self.worked_problem:
            return ""
        link = tag("a", esc("The worked problem below"), href="#" + self.worked_problem)
        title = f", {self.worked_problem_title}," if self.worked_problem_title else ""
        return tag("p", link + esc(f"{title} works one of this section's sums step by step."),
                   class_="widget-notes")

    def render(self, values: Values) -> Rendered:
        seed = parse_seed(values.text("seed"))
        score = Score.from_text(values[STATE])
        action = values.action
        set_inputs: dict[str, str] = {}
        feedback_html = ""
        if action == "new":
            seed = next_seed(seed)
            set_inputs.update(seed=str(seed), **dict.fromkeys(self.cleared, ""))
        question = self.question(seed)
        if action == "check":
            feedback = self.check(question, values)
            score, counted = score.record(seed, feedback.correct)
            set_inputs["state"] = score.to_text()
            feedback_html = self.feedback_html(question, feedback, counted)
        html = tag(
            "div",
            self.question_html(question) + feedback_html + self.secondary_html(question, score),
            class_="drill",
            data_seed=str(seed),
            **self.data(question),
        )
        return Rendered(html, set_inputs)
