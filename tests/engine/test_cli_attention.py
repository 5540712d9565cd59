"""The command line's --attention: the training step's attention kernel, one of the engine's
(training_choices.ATTENTION_KERNELS), listed in --help, refused by name where it enters, and
named in the plan JSON's basis."""

import json

import pytest

from engine.cli import main
from engine.numbers.plan import plan
from engine.numbers.training_choices import ATTENTION_KERNELS

TRAIN = ["plan", "--model", "llama-3.1-8b", "--gpus", "8", "--task", "train",
         "--seq-len", "8192"]


def _json(capsys, *args):
    assert main([*TRAIN, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _kernel_basis(data):
    return [b for b in data["train"]["expected"]["basis"]
            if b["name"].startswith("attention kernel of a training step")]


def test_help_lists_the_engines_attention_kernels(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--attention ATTENTION Attention kernel: " + ", ".join(ATTENTION_KERNELS) in text
    assert "(default fa2)" in text


@pytest.mark.parametrize("kernel", ATTENTION_KERNELS)
def test_the_flag_gives_plans_figures_and_names_the_kernel_in_the_basis(kernel, capsys):
    data = _json(capsys, "--attention", kernel)
    expected = plan(model="llama-3.1-8b", gpus=8, task="train", seq_len=8192,
                    attention=kernel).train
    assert expected is not None and expected.expected is not None
    assert data["train"]["expected"]["mfu"] == expected.expected.mfu
    (basis,) = _kernel_basis(data)
    assert ("Triton" in basis["name"]) == (kernel == "triton")


def test_without_the_flag_the_plan_runs_flashattention_2(capsys):
    assert _json(capsys) == _json(capsys, "--attention", "fa2")
    triton = _json(capsys, "--attention", "triton")
    assert triton["train"]["expected"]["mfu"] < _json(capsys)["train"]["expected"]["mfu"]


@pytest.mark.parametrize("as_json", [False, True])
def test_an_unknown_kernel_is_refused_naming_the_flag(as_json, capsys):
    argv = [*TRAIN, "--attention", "fa9", *(["--json"] if as_json else [])]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.strip() == ("--attention: Unknown attention kernel 'fa9'; choose one of: "
                           + ", ".join(ATTENTION_KERNELS) + ".")
    assert (json.loads(out)["error"] if as_json else out) == (err.strip() if as_json else "")


def test_serving_reads_no_attention_kernel(capsys):
    serve = ["plan", "--model", "llama-3.1-8b", "--task", "serve", "--json"]
    assert main(serve) == 0
    plain = capsys.readouterr().out
    assert main([*serve, "--attention", "triton"]) == 0
    assert capsys.readouterr().out == plain


def test_compare_sets_one_kernel_against_the_other(capsys):
    assert main(["compare", *TRAIN[1:], "--attention", "triton", "--vs", "--attention", "fa2",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["a"]["train"]["expected"]["mfu"] < data["b"]["train"]["expected"]["mfu"])
    assert _kernel_basis(data["a"]) != _kernel_basis(data["b"])
