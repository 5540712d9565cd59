"""No traceback from the command line: hostile arguments and hostile config.json files end
in exit 0 or 2 with a message, never an exception (hypothesis drives both)."""

import io
import json
import os
import tempfile
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main

fast = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

FLAGS = ["--model", "--params", "--hardware", "--gpus", "--task", "--tp", "--pp", "--batch",
         "--mfu", "--tokens", "--context", "--format", "--sharding", "--nodes", "--seq-len",
         "--global-batch", "--interleave", "--config", "--json"]
HOSTILE_TEXT = st.one_of(
    st.sampled_from(["", "-1", "0", "nan", "inf", "-inf", "1e308", "1e-308", "9" * 5000,
                     "1" + "0" * 4400, "0x10", "1_000", "８", "None", "llama-3.1-8b", "h100-sxm",
                     "Qwen/Qwen3-8B", "serve", "train", "\x00", "💥", "../../etc/passwd",
                     "-" * 3, "1e9999", "2**64", " 4 ", "8k", "128K", "1.5M", "2e12", "8kk",
                     "1e", "k", "-3k", "NaN", "1e400", "1e400k", "9" * 400 + "T", "2m"]),
    st.text(max_size=20),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse's --help
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@fast
@given(st.lists(st.tuples(st.sampled_from(FLAGS), HOSTILE_TEXT), max_size=6))
def test_plan_with_hostile_arguments_never_raises(pairs: list[tuple[str, str]]) -> None:
    args = ["plan"]
    for flag, value in pairs:
        args += [flag] if flag == "--json" else [flag, value]
    code, out, err = run_cli(args)
    assert code in (0, 2)
    assert "Traceback" not in out + err
    if code == 2:
        assert err.strip()


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**6), max_value=10**6),
              st.floats(allow_nan=False), st.text(max_size=10),
              st.sampled_from(["sliding_attention", "full_attention"])),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from([
    "model_type", "architectures", "num_hidden_layers", "hidden_size", "num_attention_heads",
    "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size", "num_local_experts",
    "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
    "n_shared_experts", "first_k_dense_replace", "decoder_sparse_step", "mlp_only_layers",
    "interleave_moe_layer_step", "moe_layers", "layer_types", "sliding_window", "text_config",
    "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
    "tie_word_embeddings", "attention_bias", "shared_expert_intermediate_size",
    "intermediate_size_mlp", "moe_layer_freq", "max_position_embeddings"])
MODEL_TYPES = st.sampled_from(["llama", "mixtral", "qwen3_moe", "deepseek_v3", "gpt_oss",
                               "llama4", "gemma3", "olmo2", "falcon", "gpt2", "mystery"])


@st.composite
def hostile_configs(draw: st.DrawFn) -> str:
    base = dict(draw(st.sampled_from([
        {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
         "intermediate_size": 128, "vocab_size": 100},
        {},
    ])))
    base["model_type"] = draw(MODEL_TYPES)
    base.update(draw(st.dictionaries(KEYS, JSON_VALUES, max_size=6)))
    text = json.dumps(base)
    if draw(st.booleans()):  # a number of thousands of digits, as a key's value
        key = draw(KEYS)
        text = text[:-1] + (", " if len(base) else "") + f'"{key}": {"9" * 5000}' + "}"
    return text


@fast
@given(hostile_configs(), st.booleans())
def test_inspect_and_plan_with_hostile_configs_never_raise(text: str, plan: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "config.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        args = (["plan", "--config", path, "--hardware", "h100-sxm", "--json"] if plan
                else ["inspect", path])
        code, out, err = run_cli(args)
    assert code in (0, 2)
    assert "Traceback" not in out + err


@pytest.mark.parametrize("command", ["inspect", "plan"])
def test_a_number_of_thousands_of_digits_is_refused_by_its_key(
        command: str, tmp_path: "os.PathLike[str]") -> None:
    path = os.path.join(tmp_path, "config.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": ' + "9" * 5000
                + ', "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 8}')
    args = ["inspect", path] if command == "inspect" else ["plan", "--config", path]
    code, _out, err = run_cli(args)
    assert code == 2
    assert "hidden_size: a number of 5,000 digits is absurdly large" in err
