"""The command line: the engine's answers for people at a terminal, or as JSON.

    python -m engine catalog [--json]
    python -m engine plan --model llama-3.1-8b --hardware h100-sxm --gpus 1 --task serve [--json]
    python -m engine plan --config path/to/config.json ... [--json]
    python -m engine inspect path/to/config.json [--json]
    python -m engine plan ... --task serve --concurrency 32 [--requests 1000] [--json]
        [--spec-tokens 4 --spec-accept 0.8 [--draft-model ID]] [--prefix-tokens 512
        [--prefix-hit 0.5]] [--scheduling overlapped]
    python -m engine sweep --model llama-3.1-8b --hardware h100-sxm --concurrency 1,8,32,128
    python -m engine inspect Qwen/Qwen3-8B [--json]      (a model of the config library)
    python -m engine models [--json]                     (the config library)
    python -m engine compare --model llama-3.1-8b --hardware h100-sxm --vs --hardware h200
                             --format fp8 [--json]
        plan A from the flags before --vs; plan B is A's flags with those after --vs
        overriding them (a --model, --params or --config after --vs replaces A's model);
        a load (--rate or --concurrency) simulates both.
    python -m engine search --model llama-3.1-8b --task serve --prompt 1024 --output 256
                            --rate 4 --ttft-p90 0.5 --tpot-p90 0.05 [--json]
    python -m engine search --model llama-3.1-8b --task train --tokens 1e12
                            --deadline-days 30 [--cheapest million-tokens] [--json]
        the cheapest plan of the catalogue's chips and set-ups that meets the targets, the
        next few, each rejected set-up and why, and the throughput-against-latency frontier.
    python -m engine plan --hardware-spec my-chip.json ...   (a chip of your own, as JSON)
    python -m engine roofline --model llama-3.1-8b --hardware h100-sxm [--format bf16]
                              [--context 1024] [--batches 1,8,32,128,512] [--gpus 1] [--json]
        the chip's roof and the model's prefill, decode steps (at best, expected, memory)
        and a training micro-batch on it.

``--csv`` (sweep, compare, search): the table as CSV, a header row of names with units.

Bad input exits with status 2 and one clear line on stderr (with --json, also
``{"error": "..."}`` on stdout). argparse's own errors follow the same rule.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from engine.numbers.errors import EngineError

if TYPE_CHECKING:
    from engine.numbers.catalog.hf_config import ConfigModel
    from engine.numbers.catalog.user_hardware import UserHardware
    from engine.numbers.load.load_request import LoadRequest
    from engine.numbers.load.results import LoadResult
    from engine.numbers.plan import Plan
    from engine.numbers.serve_request import ServeRequest


class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _ArgError(message)


# Flags given as the catalogue's words, checked by plan() itself (any catalogue model).
_PASSED_AS_GIVEN = ("model", "params")  # and --config, read by the CLI
# Flags whose absence means something (so the CLI gives what the widgets give): no --mfu, the expected figures
# model the MFU (the main ones use the field's default); --tp for serving makes replicas of
# that many GPUs (without it one replica spans all --gpus).
_GIVEN_OR_NOT = ("mfu", "tp", "hardware")
# A server under load (engine.numbers.load): flag -> help. Absent, the plan has no load.
_LOAD_FLAGS = {
    "concurrency": "closed loop: requests kept in flight (a new one as each finishes)",
    "rate": "open loop: Poisson arrivals, requests/s",
    "requests": "requests simulated (default 1,000)",
    "length_dist": "prompt and answer lengths: fixed, uniform (1 to twice the mean), normal "
                   "or lognormal (default fixed; --prompt and --output are the means)",
    "length_cv": "spread of normal or lognormal lengths as a fraction of the mean (default 0.5)",
    "seed": "seed of the random lengths and arrivals (default 0)",
    "ttft_target": "goodput: a time-to-first-token target, seconds",
    "tpot_target": "goodput: a time-per-output-token target, seconds",
    "spec_tokens": "speculative decoding: draft tokens a step (with --spec-accept)",
    "spec_accept": "speculative decoding: the chance each draft token is accepted, 0 to 1",
    "draft_model": "speculative decoding: the draft model's id (default: one-layer heads, "
                   "as multi-token prediction or EAGLE)",
    "prefix_tokens": "prefix caching: a shared prefix's length, tokens",
    "prefix_hit": "prefix caching: the share of requests that start with it (default 1)",
    "scheduling": "synchronous (the host's work between steps after the GPU's, vLLM's "
                  "default) or overlapped (beside it, TensorRT-LLM's PyTorch backend's "
                  "default)",
}
_SWEPT = ("concurrency", "rate")


def _build() -> _Parser:

    p = _Parser(prog="python -m engine",
                description="The maths of AI infrastructure: FLOPs, memory, bandwidth.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    c = sub.add_parser("catalog", help="models, hardware, systems and prices")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--kind", choices=("all", "models", "hardware", "systems", "prices"),
                   default="all")
    q = sub.add_parser("plan", help="the five questions for one workload")
    _plan_flags(q, swept=False)
    w = sub.add_parser("sweep", help="a server's latency against throughput over loads")
    _plan_flags(w, swept=True)
    _csv_flag(w)
    i = sub.add_parser("inspect", help="a model's shapes and counts from its config.json")
    i.add_argument("config", help="path to a Hugging Face config.json, or a config library id")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    v = sub.add_parser("compare", help="two plans side by side: plan A's flags, then --vs "
                       "and the flags that change for plan B")
    _plan_flags(v, swept=False)
    v.add_argument("--vs", action="store_true",
                   help="the flags after it override plan A's to make plan B")
    _csv_flag(v)
    f = sub.add_parser("search", help="the cheapest plan that meets a latency target or a "
                       "training deadline")
    _search_flags(f)
    _csv_flag(f)
    m = sub.add_parser("models", help="the config library: real config.json files of open "
                       "models, usable as --model and by inspect")
    m.add_argument("--json", action="store_true", help="machine-readable output")
    r = sub.add_parser("roofline", help="a chip's roofline with a model's prefill, decode "
                       "steps and training micro-batch on it")
    _roofline_flags(r)
    return p


def _roofline_flags(q: argparse.ArgumentParser) -> None:
    from engine.lesson.plans.fields import cli_flag
    from engine.lesson.plans.roofline_view import ROOFLINE_FIELDS

    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.add_argument("--model", help="catalogue model id or config library id")
    q.add_argument("--params", help="or a parameter count, e.g. 7.5e9 (shapes inferred)")
    q.add_argument("--config", help="or a Hugging Face config.json (shapes read from it)")
    for f in ROOFLINE_FIELDS.values():
        q.add_argument(cli_flag(f.name), dest=f.name, default=f.default,
                       help=f"{f.help()} (default {f.default}).")


def _roofline(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from engine.lesson.plans.fields import cli_flag
    from engine.lesson.plans.roofline_view import (
        ROOFLINE_FIELDS,
        roofline_text,
        roofline_to_dict,
        roofline_view,
    )
    from engine.numbers.catalog import resolve_model
    from engine.render.fields import Values

    try:
        if args.config is not None:
            if args.model is not None or args.params is not None:
                raise EngineError("Give --config, --model or --params, not more than one.",
                                  "config")
            model = _read_config(args.config).model
        else:
            read = _library_model(args.model)
            model = read.model if read else resolve_model(args.model, args.params)
        view = roofline_view(model, Values({f.name: getattr(args, f.name)
                                            for f in ROOFLINE_FIELDS.values()}))
    except EngineError as exc:
        said = f"{cli_flag(exc.field)}: {exc.message}" if exc.field else exc.message
        raise EngineError(said, None) from None
    return roofline_to_dict(view), roofline_text(view)


def _csv_flag(q: argparse.ArgumentParser) -> None:
    q.add_argument("--csv", action="store_true",
                   help="the table as CSV: a header row of names with units, a row each")


def _plan_flags(q: argparse.ArgumentParser, *, swept: bool) -> None:
    """The plan's flags (its fields) and the load's on ``q``; ``swept``: --concurrency and
    --rate take comma-separated lists."""
    from engine.lesson.plans.fields import CLI_PLAN_FIELDS, cli_flag

    q.add_argument("--json", action="store_true", help="machine-readable output")
    # The flags are the plan's fields (the playground's inputs): same names, ranges, defaults.
    q.add_argument("--model", help="catalogue model id, e.g. llama-3.1-8b, or a config "
                   "library id, e.g. Qwen/Qwen3-8B (python -m engine models lists them)")
    q.add_argument("--params", help="or a parameter count, e.g. 7.5e9 (shapes inferred)")
    q.add_argument("--config", help="or a Hugging Face config.json (shapes read from it)")
    q.add_argument("--hardware-spec", help="instead of --hardware: a JSON file describing "
                   "your own chip (name, memory_GB, bandwidth_TB_per_s, peak_TFLOP_per_s "
                   "by format; optional power_W, usd_per_gpu_hour, links)")
    for key, f in CLI_PLAN_FIELDS.items():
        if key in _PASSED_AS_GIVEN:
            continue
        default = f" (default {f.default})" if f.default else ""
        q.add_argument(cli_flag(f.name), dest=f.name,
                       default=None if key in _GIVEN_OR_NOT else f.default,
                       help=f"{f.help()}{default}. {f.hint}".strip())
    for name, words in _LOAD_FLAGS.items():
        listed = ", comma-separated values" if swept and name in _SWEPT else ""
        q.add_argument(cli_flag(name), dest=f"load_{name}", default=None,
                       help=f"Serving under load: {words}{listed}.")


# The search's flags: dest -> help (all given as text, checked by the search's request).
_SEARCH_FLAGS = {
    "model": "catalogue model id or config library id",
    "params": "or a parameter count (shapes inferred)",
    "task": "serve (default) or train",
    "prompt_tokens": "serving: prompt length, tokens (default 1024)",
    "output_tokens": "serving: answer length, tokens (default 256)",
    "rate": "serving: open loop, requests/s",
    "concurrency": "serving: closed loop, requests in flight",
    "ttft_p90": "serving: time-to-first-token target at p90, seconds",
    "tpot_p90": "serving: time-per-output-token target at p90, seconds",
    "tokens": "training: tokens to train on",
    "deadline_days": "training: the expected time must be at most this many days",
    "cheapest": "what to minimise: hour (cost per hour, default) or million-tokens",
    "keep": "plans kept: the winner and the runners-up (default 4)",
}
_SEARCH_FLAG_NAMES = {"prompt_tokens": "--prompt", "output_tokens": "--output",
                      "objective": "--cheapest"}


def _search_flags(q: argparse.ArgumentParser) -> None:
    q.add_argument("--json", action="store_true", help="machine-readable output")
    for dest, words in _SEARCH_FLAGS.items():
        flag = _SEARCH_FLAG_NAMES.get(dest, "--" + dest.replace("_", "-"))
        q.add_argument(flag, dest=dest, default=None, help=words)


def _search(args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    from engine.lesson.plans.csv_tables import search_csv
    from engine.lesson.plans.search_view import search_text
    from engine.numbers import validate
    from engine.numbers.catalog import resolve_model
    from engine.numbers.search.serve import search_serving, serve_search_request
    from engine.numbers.search.train import search_training, train_search_request

    try:
        read = _library_model(args.model)
        model = read.model if read else resolve_model(args.model, args.params)
        task = validate.choice("serve" if args.task is None else args.task, "task",
                               ("serve", "train"))
        objective = "hour" if args.cheapest is None else args.cheapest
        keep = 4 if args.keep is None else args.keep
        if task == "serve":
            for name in ("tokens", "deadline_days"):
                if getattr(args, name) is not None:
                    raise EngineError("is for --task train.", name)
            result = search_serving(serve_search_request(
                model, prompt_tokens=args.prompt_tokens or 1024,
                output_tokens=args.output_tokens or 256, rate=args.rate,
                concurrency=args.concurrency, ttft_p90=args.ttft_p90,
                tpot_p90=args.tpot_p90, objective=objective, keep=keep))
        else:
            for name in ("prompt_tokens", "output_tokens", "rate", "concurrency", "ttft_p90",
                         "tpot_p90"):
                if getattr(args, name) is not None:
                    raise EngineError("is for --task serve.", name)
            result = search_training(train_search_request(
                model, tokens=args.tokens, deadline_days=args.deadline_days,
                objective=objective, keep=keep))
    except EngineError as exc:
        field = exc.field or ""
        flag = _SEARCH_FLAG_NAMES.get(field, "--" + field.replace("_", "-"))
        raise EngineError(f"{flag}: {exc.message}" if field else exc.message, None) from None
    return result.to_dict(), search_text(result), search_csv(result)


def _library_model(model_id: object) -> ConfigModel | None:
    """The config library's model called ``model_id``, None when it names none."""
    from engine.numbers.catalog.config_library import is_library_id, library_model

    return library_model(str(model_id)) if is_library_id(model_id) else None


def _read_bounded(path: str, *, max_bytes: int, what: str, field: str) -> bytes:
    """The bytes of the file at ``path``, at most ``max_bytes`` of them; EngineError naming
    ``field`` when it cannot be read or is larger than ``what`` can be."""
    try:
        with open(path, "rb") as source:
            size = os.fstat(source.fileno()).st_size
            if size > max_bytes:
                raise EngineError(f"{path!r} is {size:,} bytes; {what} (at most {max_bytes:,} "
                                  "are read).", field)
            return source.read(max_bytes + 1)
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL character
        raise EngineError(f"Cannot read {path!r}: {getattr(exc, 'strerror', None) or exc}.",
                          field) from None


def _read_config(path: str) -> ConfigModel:
    """The model of the config.json at ``path``; EngineError when it cannot be read (the
    file is read only up to the size a config.json may have)."""
    from engine.numbers.catalog.hf_config import MAX_CONFIG_CHARS, model_from_config

    text = _read_bounded(path, max_bytes=MAX_CONFIG_CHARS, what="a config.json is a few thousand",
                         field="config")
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "config":  # named after its folder, as a downloaded model's is
        stem = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return model_from_config(text, name=stem)


def _read_hardware_spec(path: str) -> UserHardware:
    """The chip of the hardware spec at ``path``; EngineError when it cannot be read (the
    file is read only up to the size a spec may have)."""
    from engine.numbers.catalog.user_hardware import (
        MAX_SPEC_CHARS,
        parse_spec_text,
        user_hardware_from_dict,
    )

    text = _read_bounded(path, max_bytes=MAX_SPEC_CHARS, what="a hardware spec is a few hundred",
                         field="hardware_spec")
    return user_hardware_from_dict(parse_spec_text(text), source=os.path.basename(path))


def _inspect(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from engine.lesson.plans.config_model import inspect_text, inspect_to_dict

    read = None if os.path.exists(args.config) else _library_model(args.config)
    if read is None:
        read = _read_config(args.config)
    return inspect_to_dict(read), inspect_text(read)


def _load(args: argparse.Namespace, **swept: object) -> LoadRequest | None:
    """The load the flags give (``swept``: one value of a swept flag instead of its list)."""
    from engine.numbers.load.load_request import load_request

    raw = {name: getattr(args, f"load_{name}") for name in _LOAD_FLAGS}
    raw.update(swept)
    read = _library_model(raw["draft_model"]) if raw["draft_model"] else None
    if read is not None:
        raw["draft_model"] = read.model
    return load_request(concurrency=raw["concurrency"], rate=raw["rate"],
                        requests=raw["requests"],
                        length_dist="fixed" if raw["length_dist"] is None else raw["length_dist"],
                        length_cv=raw["length_cv"],
                        seed=0 if raw["seed"] is None else raw["seed"],
                        ttft_target=raw["ttft_target"], tpot_target=raw["tpot_target"],
                        spec_tokens=raw["spec_tokens"], spec_accept=raw["spec_accept"],
                        draft_model=raw["draft_model"], prefix_tokens=raw["prefix_tokens"],
                        prefix_hit=raw["prefix_hit"], scheduling=raw["scheduling"])


def _serve_of(result: Plan, kwargs: dict[str, object]) -> ServeRequest:
    """The checked serving request of a plan made from ``kwargs``."""
    from engine.numbers.serve_request import serve_request

    return serve_request(result.model, result.hardware, gpus=result.gpus,
                         serve_tp=kwargs.get("serve_tp"), batch=kwargs["batch"],
                         weight_format=kwargs["weight_format"], kv_format=kwargs["kv_format"],
                         context_tokens=kwargs["context_tokens"],
                         prompt_tokens=kwargs["prompt_tokens"],
                         output_tokens=kwargs["output_tokens"], ep=kwargs.get("ep"))


def _load_dict(r: LoadResult, load: LoadRequest) -> dict[str, object]:
    """``serve.load``: the result's JSON, and the load's speculative decoding and shared
    prefix when given."""
    from engine.numbers.load.load_request import load_options

    return {**r.to_dict(), **load_options(load)}


def _load_line(r: LoadResult, given: LoadRequest | None = None) -> str:
    """One load's latencies and throughput in a line (``given``: its speculative decoding,
    shared prefix and an overlapped scheduling said first)."""
    load = (f"concurrency {r.concurrency:,}" if r.concurrency is not None
            else f"rate {r.rate:g} requests/s")
    if given is not None and given.spec_tokens:
        from engine.numbers.load.speculative import expected_tokens_per_step

        drafter = given.draft_model.name if given.draft_model is not None else "one-layer heads"
        load += (f", speculative decoding ({given.spec_tokens} draft tokens by {drafter}, "
                 f"acceptance {given.spec_accept:g}: "
                 f"{expected_tokens_per_step(given.spec_tokens, given.spec_accept):.2f} tokens "
                 "a step)")
    if given is not None and given.prefix_tokens:
        load += (f", a {given.prefix_tokens:,}-token shared prefix for "
                 f"{given.prefix_hit:.0%} of requests")
    if given is not None and given.scheduling != "synchronous":
        load += f", {given.scheduling} scheduling"
    return (f"{load}: TTFT p50 {r.ttft_seconds.p50 * 1e3:,.1f} ms (p99 "
            f"{r.ttft_seconds.p99 * 1e3:,.1f}), TPOT p50 {r.tpot_seconds.p50 * 1e3:,.2f} ms "
            f"(p99 {r.tpot_seconds.p99 * 1e3:,.2f}), {r.output_tokens_per_s:,.0f} output "
            f"tokens/s ({r.output_tokens_per_s_per_gpu:,.0f} per GPU), {r.requests_per_s:,.2f} "
            f"requests/s, KV cache peak {r.kv_cache_peak_fraction:.0%}, "
            f"{r.preemptions:,} preemptions")


def _models(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from engine.lesson.plans.config_model import inspect_to_dict
    from engine.numbers.catalog.config_library import library_entries, library_model
    from engine.words.format import format_count

    rows: list[dict[str, object]] = []
    lines = ["Config library (use as --model ID or: inspect ID):"]
    for e in library_entries():
        read = library_model(e.id)
        m = read.model
        active = f", {format_count(m.active_params)} active" if m.is_moe else ""
        lines.append(f"  {e.id:<38} {format_count(m.params)}{active}  ({read.family})")
        rows.append({"id": e.id, **inspect_to_dict(read), "source": {
            "repo": e.repo, "path": e.path, "commit": e.commit, "entry": e.entry},
            "published_params": e.published_params,
            "published_active_params": e.published_active_params,
            "params_source": e.params_source})
    return {"models": rows}, "\n".join(lines)


def _plan(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    data, text, _, _ = _plan_and_load(args)
    return data, text


def _plan_and_load(args: argparse.Namespace
                   ) -> tuple[dict[str, object], str, Plan, LoadResult | None]:
    """The plan's JSON and text, the plan, and its simulated load (None without one)."""
    from engine.numbers.load.load_request import serve_load

    result, kwargs, read = _planned(args)
    load = _load(args)
    if load is not None and result.task != "serve":
        raise EngineError("A load (--concurrency or --rate) is for --task serve.", "concurrency")
    run = None if load is None else serve_load(_serve_of(result, kwargs), load)
    data, text = _plan_output(result, read, run, load)
    return data, text, result, run


def _sweep(args: argparse.Namespace) -> tuple[dict[str, object] | list[object], str, str]:
    from engine.lesson.plans.csv_tables import sweep_csv
    from engine.numbers.load.load_request import serve_load

    given = [k for k in _SWEPT if getattr(args, f"load_{k}") not in (None, "")]
    if len(given) != 1:
        raise EngineError("A sweep takes --concurrency or --rate (comma-separated), not "
                          "both.", "concurrency")
    key = given[0]
    values = [v.strip() for v in str(getattr(args, f"load_{key}")).split(",")]
    result, kwargs, _ = _planned(args)
    if result.task != "serve":
        raise EngineError("A sweep is of serving: --task serve.", "task")
    serve = _serve_of(result, kwargs)
    loads = [_load(args, **{key: v, ("rate" if key == "concurrency" else "concurrency"): None})
             for v in values]
    checked = [load for load in loads if load is not None]
    runs = [serve_load(serve, load) for load in checked]
    head = (f"{result.model.name} on {result.gpus:,} × {result.hardware.name}: latency against "
            "throughput")
    return ([_load_dict(r, load) for r, load in zip(runs, checked, strict=True)],
            "\n".join([head, *(_load_line(r, load) for r, load in zip(runs, checked,
                                                                        strict=True))]),
            sweep_csv(runs))


def _planned(args: argparse.Namespace) -> tuple[Plan, dict[str, object], ConfigModel | None]:
    from engine.lesson.plans.fields import CLI_PLAN_FIELDS, plan_arguments
    from engine.numbers.plan import plan
    from engine.render.fields import Values

    given = {k: getattr(args, CLI_PLAN_FIELDS[k].name) for k in _GIVEN_OR_NOT}
    raw = {f.name: f.default if getattr(args, f.name) is None else getattr(args, f.name)
           for k, f in CLI_PLAN_FIELDS.items() if k not in _PASSED_AS_GIVEN}
    values = Values(raw)
    fields = {k: f for k, f in CLI_PLAN_FIELDS.items() if k not in _PASSED_AS_GIVEN}
    kwargs = plan_arguments(values, fields, every_task=False)
    if given["mfu"] is None:
        kwargs.pop("mfu", None)
    if given["tp"] is not None and kwargs.get("task", "serve") == "serve":
        kwargs["serve_tp"] = given["tp"]
    if args.hardware_spec is not None:
        if given["hardware"] is not None:
            raise EngineError("Give --hardware or --hardware-spec, not both.", "hardware_spec")
        chip = _read_hardware_spec(args.hardware_spec)
        kwargs["hardware"] = chip.hardware
        if kwargs.get("usd_per_gpu_hour") is None and chip.usd_per_gpu_hour is not None:
            kwargs["usd_per_gpu_hour"] = chip.usd_per_gpu_hour
    read = _library_model(args.model)
    if args.config is not None:
        if args.model is not None or args.params is not None:
            raise EngineError("Give --config, --model or --params, not more than one.", "config")
        read = _read_config(args.config)
    result = plan(model=read.model if read else args.model, params=args.params, **kwargs)
    return result, kwargs, read


def _plan_output(result: Plan, read: ConfigModel | None, run: LoadResult | None,
                 load: LoadRequest | None = None) -> tuple[dict[str, object], str]:
    from engine.lesson.plans.plan_json import plan_json
    from engine.words.answers import QUESTIONS, answers
    from engine.words.memory_explained import memory_assumptions

    data = plan_json(result, read)
    words = answers(result)
    head = (f"{result.model.name} on {result.gpus:,} × {result.hardware.name}, "
            f"task: {result.task}")
    lines = [head, "=" * len(head)]
    for key, title in QUESTIONS:
        lines += [title, "  " + words[key]]
    lines.append("Assumptions:")
    if result.hardware.links is not None:  # a chip of the user's spec: say whose figures
        from engine.numbers.catalog.user_hardware import user_hardware_dict

        data["hardware"] = user_hardware_dict(result.hardware)
        lines.append(f"  - {result.hardware.name}: {result.hardware.source}")
    lines += ["  - " + a for a in memory_assumptions(result.memory)]
    if read is not None:
        from engine.lesson.plans.config_model import config_notes

        lines += ["  - " + n for n in config_notes(read)]
    if run is not None:
        serve = data["serve"]
        assert isinstance(serve, dict)
        serve["load"] = run.to_dict() if load is None else _load_dict(run, load)
        lines += ["Under load (simulated continuous batching, vLLM's default scheduler):",
                  "  " + _load_line(run, load)]
    return data, "\n".join(lines)


_MODEL_FLAGS = ("--model", "--params", "--config")
_HARDWARE_FLAGS = ("--hardware", "--hardware-spec")  # a catalogue chip, or one of your own


def _without_model(flags: list[str], named: tuple[str, ...] = _MODEL_FLAGS) -> list[str]:
    """``flags`` less their model flags (``--model X`` or ``--model=X``), or those ``named``."""
    out: list[str] = []
    skip = False
    for flag in flags:
        if skip:
            skip = False
        elif flag in named:
            skip = True
        elif not flag.startswith(tuple(f + "=" for f in named)):
            out.append(flag)
    return out


def _compare(args_list: list[str]) -> tuple[dict[str, object], str, str]:
    """``compare A-flags --vs B-flags``: plan A, plan B (A's flags, B's overriding), compared."""
    from engine.lesson.plans.compare_view import comparison_text, comparison_to_dict
    from engine.lesson.plans.csv_tables import comparison_csv
    from engine.numbers.compare import compare_plans

    if args_list.count("--vs") != 1:
        raise _ArgError("compare takes plan A's flags, then --vs once and the flags that "
                        "change for plan B, e.g. compare --model llama-3.1-8b --vs --hardware "
                        "h200.")
    i = args_list.index("--vs")
    a_flags, b_flags = args_list[:i], args_list[i + 1:]
    if not b_flags:
        raise _ArgError("--vs: give the flags that change for plan B, e.g. --hardware h200.")
    if any(f in _MODEL_FLAGS or f.startswith(tuple(m + "=" for m in _MODEL_FLAGS))
           for f in b_flags):
        a_for_b = _without_model(a_flags)
    else:
        a_for_b = a_flags
    if any(f in _HARDWARE_FLAGS or f.startswith(tuple(h + "=" for h in _HARDWARE_FLAGS))
           for f in b_flags):
        a_for_b = _without_model(a_for_b, _HARDWARE_FLAGS)
    parser = _build()
    sides = []
    for name, flags in (("A", a_flags), ("B", [*a_for_b, *b_flags])):
        args = parser.parse_args(["plan", *flags])
        try:
            data, _, result, run = _plan_and_load(args)
        except EngineError as exc:
            raise EngineError(f"plan {name}: {_said_of_flag(exc)}", None) from None
        sides.append((result, data, run))
    (pa, da, ra), (pb, db, rb) = sides
    comparison = compare_plans(pa, pb, load_a=ra, load_b=rb)
    return (comparison_to_dict(da, db, comparison), comparison_text(pa, pb, comparison),
            comparison_csv(comparison))


def _catalog(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from engine.numbers.catalog import (
        catalog_dict,
        list_hardware,
        list_models,
        list_systems,
        prices,
    )

    data = catalog_dict()
    if args.kind != "all":
        data = {args.kind: data[args.kind]}
    lines = []
    if args.kind in ("all", "models"):
        lines.append("Models (parameters derived from shapes):")
        lines += [f"  {m.id:<16} {m.params / 1e9:>9,.2f} B  {m.name}" for m in list_models()]
    if args.kind in ("all", "hardware"):
        lines.append("Hardware (dense bf16 peak, memory, bandwidth):")
        for h in list_hardware():
            bf16 = dict(h.peaks).get("bf16")
            peak = f"{bf16 / 1e12:>8,.1f} TFLOP/s" if bf16 else "       - TFLOP/s"
            lines.append(f"  {h.id:<15} {peak} {h.memory_bytes / 1e9:>7,.0f} GB "
                         f"{h.bandwidth_bytes_per_s / 1e12:>6.3g} TB/s  {h.name}")
    if args.kind in ("all", "systems"):
        lines.append("Systems:")
        lines += [f"  {s.id:<15} {s.gpu_count} × {s.gpu.id}, {s.cpu_count} × {s.cpu.id}  "
                  f"{s.name}" for s in list_systems()]
    if args.kind in ("all", "prices"):
        lines.append("Cloud prices (USD per GPU-hour):")
        lines += [f"  {p.hardware:<15} ${p.usd_per_gpu_hour:>6.2f}  {p.provider}, {p.offer} "
                  f"({p.date})" for p in prices().cloud]
    return data, "\n".join(lines)


def _said_of_flag(error: EngineError) -> str:
    """The engine's message, opened by the flag it is about ('--gpus: ...') when there is one."""
    from engine.lesson.plans.fields import CLI_PLAN_FIELDS, cli_flag

    names = {f.name for f in CLI_PLAN_FIELDS.values()} | set(_LOAD_FLAGS) | {"hardware_spec"}
    name = CLI_PLAN_FIELDS[error.field].name if error.field in CLI_PLAN_FIELDS else error.field
    return f"{cli_flag(name)}: {error.message}" if name in names else error.message


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args_list
    data: dict[str, object] | list[object]
    table = None  # the CSV of a command that makes a table
    try:
        if as_json and "--csv" in args_list:
            raise _ArgError("give --json or --csv, not both.")
        if args_list[:1] == ["compare"] and not {"-h", "--help"} & set(args_list):
            # Two sets of the plan's flags, split at --vs: argparse cannot read that itself.
            data, text, table = _compare([a for a in args_list[1:]
                                          if a not in ("--json", "--csv")])
        else:
            args = _build().parse_args(args_list)
            if args.command in ("sweep", "search"):
                data, text, table = (_sweep if args.command == "sweep" else _search)(args)
            else:
                run = {"plan": _plan, "inspect": _inspect, "catalog": _catalog,
                       "models": _models, "roofline": _roofline}[args.command]
                data, text = run(args)
    except (_ArgError, EngineError) as exc:
        message = _said_of_flag(exc) if isinstance(exc, EngineError) else f"error: {exc}"
        if as_json:
            print(json.dumps({"error": message}))
        print(message, file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(data, indent=2, allow_nan=False))
    else:
        print(table if table is not None and "--csv" in args_list else text)
    return 0
