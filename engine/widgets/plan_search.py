"""docs/steps/playground.md: find the cheapest plan. Given a model, a workload (prompt and
answer lengths, requests in flight or a request rate) and targets (TTFT and TPOT at p90), or
training tokens and a deadline, the engine searches the catalogue's chips × GPU counts ×
splits × formats × batch caps (:mod:`engine.numbers.search.serve`,
:mod:`engine.numbers.search.train`) for the cheapest plan per hour or per million tokens that
meets them, and shows it, the runners-up, why the others failed and the frontier.

A search takes a second or two in the browser, so it runs when "Find the cheapest plan" is
pressed, never on each keystroke: a plain render only checks the inputs (the search's own
request checks them, naming the field at fault) and offers the command line's ``search``.
"""

from __future__ import annotations

from engine.lesson.plans.fields import shell_quote
from engine.lesson.plans.search_html import search_html, search_json
from engine.numbers.catalog import get_model
from engine.numbers.search.results import SearchResult
from engine.numbers.search.serve import ServeSearch, search_serving, serve_search_request
from engine.numbers.search.train import TrainSearch, search_training, train_search_request
from engine.render.fields import Choice, Text
from engine.render.html import esc, tag
from engine.render.options import catalog_model_field
from engine.render.widget import Action, Command, Rendered, Values, Widget
from engine.words.labels import TASK_LABELS

SEARCH = "search"
COMMAND = ("python", "-m", "engine", "search")


def _number(name: str, label: str, default: str, unit: str, hint: str = "") -> Text:
    """A number typed as text: the search's request reads and checks it (the CLI's way)."""
    return Text(name, label, default, unit=unit, hint=hint, control_kind="number")


MODEL = catalog_model_field()
TASK = Choice("task", "Task", "serve", options=tuple(TASK_LABELS.items()))
PROMPT = _number("prompt_tokens", "Prompt length", "1024", "tokens")
OUTPUT = _number("output_tokens", "Answer length", "256", "tokens")
CONCURRENCY = _number("concurrency", "Requests in flight", "16", "requests",
                      "a closed loop; or leave it empty and give a rate")
RATE = _number("rate", "Or a request rate", "", "requests/s", "an open loop (Poisson)")
TTFT = _number("ttft_p90", "TTFT target at p90", "0.5", "s")
TPOT = _number("tpot_p90", "TPOT target at p90", "0.05", "s")
TOKENS = _number("tokens", "Training tokens", "1e12", "tokens")
DEADLINE = _number("deadline_days", "Deadline", "30", "days")
CHEAPEST = Choice("cheapest", "Cheapest", "hour",
                  options=(("hour", "per hour"), ("million-tokens", "per million tokens")))

SERVE_FIELDS = (PROMPT, OUTPUT, CONCURRENCY, RATE, TTFT, TPOT)
TRAIN_FIELDS = (TOKENS, DEADLINE)
# Each input's flag on the command line (python -m engine search --help).
FLAGS = {MODEL.name: "--model", TASK.name: "--task", PROMPT.name: "--prompt",
         OUTPUT.name: "--output", CONCURRENCY.name: "--concurrency", RATE.name: "--rate",
         TTFT.name: "--ttft-p90", TPOT.name: "--tpot-p90", TOKENS.name: "--tokens",
         DEADLINE.name: "--deadline-days", CHEAPEST.name: "--cheapest"}


def _task_fields(values: Values) -> tuple[Text, ...]:
    return SERVE_FIELDS if values[TASK] == "serve" else TRAIN_FIELDS


def search_request(values: Values) -> ServeSearch | TrainSearch:
    """The checked search the inputs describe (the chosen task's inputs only)."""
    model = get_model(values[MODEL])
    objective = values[CHEAPEST]
    if values[TASK] == "serve":
        return serve_search_request(
            model, prompt_tokens=values[PROMPT], output_tokens=values[OUTPUT],
            concurrency=values[CONCURRENCY], rate=values[RATE], ttft_p90=values[TTFT],
            tpot_p90=values[TPOT], objective=objective)
    return train_search_request(model, tokens=values[TOKENS], deadline_days=values[DEADLINE],
                                objective=objective)


def searched(request: ServeSearch | TrainSearch) -> SearchResult:
    """The search's answer."""
    if isinstance(request, ServeSearch):
        return search_serving(request)
    return search_training(request)


def render(values: Values) -> Rendered:
    request = search_request(values)
    waiting = "training" if values[TASK] == "serve" else "serving"
    other = TRAIN_FIELDS if values[TASK] == "serve" else SERVE_FIELDS
    notes = {f.name: f"Not read: it is for {waiting}." for f in other if f.default}
    if values.action != SEARCH:
        return Rendered(tag("p", esc(
            "Press “Find the cheapest plan”: the engine tries every priced chip of the "
            "catalogue at each GPU count, split, format and batch cap, and keeps the "
            "cheapest that meets the target (a second or two in your browser)."),
            class_="search-ready"), notes=notes)
    result = searched(request)
    return Rendered(tag("section", search_html(result), class_="plan-search",
                        data_searched=result.task),
                    notes=notes, result_json=search_json(result))


def command(values: Values) -> Command:
    """The command line's ``search`` with the inputs the chosen task reads (empty ones left
    out, as the command line leaves them), each as typed."""
    words = list(COMMAND)
    for f in (MODEL, TASK, *_task_fields(values), CHEAPEST):
        typed = values.text(f.name).strip()
        if typed:
            words += [FLAGS[f.name], shell_quote(typed)]
    return Command((" ".join(words),))


WIDGET = Widget(
    name="plan_search",
    title="Find the cheapest plan",
    fields=(MODEL, TASK, *SERVE_FIELDS, *TRAIN_FIELDS, CHEAPEST),
    render=render,
    command=command,
    actions=(Action(SEARCH, "Find the cheapest plan", primary=True),),
    summary="A model, a workload and targets (TTFT and TPOT at p90, or training tokens and a "
    "deadline): the cheapest plan of the catalogue that meets them, per hour or per million "
    "tokens, the runners-up, why the others failed, and the throughput-per-GPU against "
    "latency frontier. The search runs when the button is pressed.",
    url_state=tuple(f.name for f in (MODEL, TASK, *SERVE_FIELDS, *TRAIN_FIELDS, CHEAPEST)),
)
