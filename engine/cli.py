"""The command line: the engine's answers for people at a terminal, or as JSON.

    python -m engine catalog [--json]
    python -m engine plan --model llama-3.1-8b --hardware h100-sxm --gpus 1 --task serve [--json]
    python -m engine plan --config path/to/config.json ... [--json]
    python -m engine inspect path/to/config.json [--json]

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
_GIVEN_OR_NOT = ("mfu", "tp")


def _build() -> _Parser:
    from engine.lesson.plans.fields import PLAN_FIELDS, cli_flag

    p = _Parser(prog="python -m engine",
                description="The maths of AI infrastructure: FLOPs, memory, bandwidth.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    c = sub.add_parser("catalog", help="models, hardware, systems and prices")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--kind", choices=("all", "models", "hardware", "systems", "prices"),
                   default="all")
    q = sub.add_parser("plan", help="the five questions for one workload")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    # The flags are the plan's fields (the playground's inputs): same names, ranges, defaults.
    q.add_argument("--model", help="catalogue model id, e.g. llama-3.1-8b")
    q.add_argument("--params", help="or a parameter count, e.g. 7.5e9 (shapes inferred)")
    q.add_argument("--config", help="or a Hugging Face config.json (shapes read from it)")
    for key, f in PLAN_FIELDS.items():
        if key in _PASSED_AS_GIVEN:
            continue
        default = f" (default {f.default})" if f.default else ""
        q.add_argument(cli_flag(f.name), dest=f.name,
                       default=None if key in _GIVEN_OR_NOT else f.default,
                       help=f"{f.help()}{default}. {f.hint}".strip())
    i = sub.add_parser("inspect", help="a model's shapes and counts from its config.json")
    i.add_argument("config", help="path to a Hugging Face config.json")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _read_config(path: str) -> ConfigModel:
    """The model of the config.json at ``path``; EngineError when it cannot be read (the
    file is read only up to the size a config.json may have)."""
    from engine.numbers.catalog.hf_config import MAX_CONFIG_CHARS, model_from_config

    try:
        with open(path, "rb") as source:
            size = os.fstat(source.fileno()).st_size
            if size > MAX_CONFIG_CHARS:
                raise EngineError(f"{path!r} is {size:,} bytes; a config.json is a few thousand "
                                  f"(at most {MAX_CONFIG_CHARS:,} are read).", "config")
            text = source.read(MAX_CONFIG_CHARS + 1)
    except OSError as exc:
        raise EngineError(f"Cannot read {path!r}: {exc.strerror or exc}.", "config") from None
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "config":  # named after its folder, as a downloaded model's is
        stem = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return model_from_config(text, name=stem)


def _inspect(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from engine.lesson.plans.config_model import inspect_text, inspect_to_dict

    read = _read_config(args.config)
    return inspect_to_dict(read), inspect_text(read)


def _plan(args: argparse.Namespace) -> tuple[dict[str, object], str]:
    from engine.lesson.plans.fields import PLAN_FIELDS, plan_arguments
    from engine.lesson.plans.plan_json import plan_to_dict
    from engine.numbers.plan import plan
    from engine.render.fields import Values
    from engine.words.answers import QUESTIONS, answers
    from engine.words.memory_explained import memory_assumptions

    given = {k: getattr(args, PLAN_FIELDS[k].name) for k in _GIVEN_OR_NOT}
    raw = {f.name: f.default if getattr(args, f.name) is None else getattr(args, f.name)
           for k, f in PLAN_FIELDS.items() if k not in _PASSED_AS_GIVEN}
    values = Values(raw)
    fields = {k: f for k, f in PLAN_FIELDS.items() if k not in _PASSED_AS_GIVEN}
    kwargs = plan_arguments(values, fields, every_task=False)
    if given["mfu"] is None:
        kwargs.pop("mfu", None)
    if given["tp"] is not None and kwargs.get("task", "serve") == "serve":
        kwargs["serve_tp"] = given["tp"]
    read = None
    if args.config is not None:
        if args.model is not None or args.params is not None:
            raise EngineError("Give --config, --model or --params, not more than one.", "config")
        read = _read_config(args.config)
    result = plan(model=read.model if read else args.model, params=args.params, **kwargs)
    data = plan_to_dict(result)
    words = answers(result)
    head = (f"{result.model.name} on {result.gpus:,} × {result.hardware.name}, "
            f"task: {result.task}")
    lines = [head, "=" * len(head)]
    for key, title in QUESTIONS:
        lines += [title, "  " + words[key]]
    lines.append("Assumptions:")
    lines += ["  - " + a for a in memory_assumptions(result.memory)]
    if read is not None:
        from engine.lesson.plans.config_model import config_notes, inspect_to_dict

        data["model"] = {**inspect_to_dict(read), **data["model"]}  # type: ignore[dict-item]
        lines += ["  - " + n for n in config_notes(read)]
    return data, "\n".join(lines)


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
    from engine.lesson.plans.fields import PLAN_FIELDS, cli_flag

    names = {f.name for f in PLAN_FIELDS.values()}
    name = PLAN_FIELDS[error.field].name if error.field in PLAN_FIELDS else error.field
    return f"{cli_flag(name)}: {error.message}" if name in names else error.message


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args_list
    try:
        args = _build().parse_args(args_list)
        run = {"plan": _plan, "inspect": _inspect, "catalog": _catalog}[args.command]
        data, text = run(args)
    except (_ArgError, EngineError) as exc:
        message = _said_of_flag(exc) if isinstance(exc, EngineError) else f"error: {exc}"
        if as_json:
            print(json.dumps({"error": message}))
        print(message, file=sys.stderr)
        return 2
    print(json.dumps(data, indent=2, allow_nan=False) if as_json else text)
    return 0
