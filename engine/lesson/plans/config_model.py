"""A model read from a config.json, for people: its shapes as rows, what the engine assumed or
left unused as sentences, and the same as plain JSON values (``python -m engine inspect``)."""

from __future__ import annotations

from engine.numbers.catalog.config_library import LibraryConfig
from engine.numbers.catalog.hf_config import ConfigModel
from engine.numbers.catalog.models import ModelSpec
from engine.numbers.formats import FormatId
from engine.numbers.memory import kv_cache_bytes_per_token
from engine.words.format import format_bytes, format_count

KV_FORMAT: FormatId = "bf16"


def _attention(m: ModelSpec) -> str:
    if m.attention == "mla":
        return (f"multi-head latent (MLA): {m.heads:,} heads; the cache keeps a latent of "
                f"{m.kv_lora_rank:,} plus a shared RoPE key of {m.qk_rope_head_dim:,}")
    kind = ("multi-head" if m.kv_heads == m.heads
            else "multi-query" if m.kv_heads == 1 else "grouped-query")
    return (f"{m.heads:,} query heads, {m.kv_heads:,} KV heads of {m.head_dim:,} ({kind})")


def embedding_params(m: ModelSpec) -> int:
    """The token tables: the input embedding, the output head when it is not tied to it, and
    learned positions (what model cards leave out of a "non-embedding" count)."""
    tables = 1 if m.tied_embeddings else 2
    return (tables * m.vocab + m.learned_positions) * m.hidden


def non_embedding_params(m: ModelSpec) -> int:
    """The parameters outside the token tables (as Qwen's and Gemma's cards count them)."""
    return m.params - embedding_params(m)


def active_params_without_input_embedding(m: ModelSpec) -> int:
    """Active parameters less the input embedding, a lookup that reads one row per token
    (as gpt-oss's and DeepSeek-V3's cards count their active parameters)."""
    return m.active_params - (m.vocab + m.learned_positions) * m.hidden


def _mlp(c: ConfigModel) -> str:
    m = c.model
    kind = "gated (3 matrices)" if m.gated_mlp else "plain (2 matrices)"
    if not m.is_moe:
        return f"{kind}, {m.ffn:,} wide"
    words = (f"{kind}: {m.experts:,} experts of {m.moe_ffn:,}, {m.experts_per_token:,} per "
             "token")
    if m.shared_experts:
        words += f", {m.shared_experts:,} shared"
    if c.moe_layout:
        words += f"; {c.moe_layout}, {m.ffn:,} wide"
    elif m.dense_layers:
        words += f"; the first {m.dense_layers:,} layers dense, {m.ffn:,} wide"
    return words


def _window(m: ModelSpec) -> str:
    if not m.sliding_window:
        return "none (every layer attends to the whole context)"
    local = m.local_layers or m.layers
    return f"{m.sliding_window:,} tokens in {local:,} of {m.layers:,} layers"


def shape_rows(c: ConfigModel) -> list[tuple[str, str]]:
    """(label, value) for each shape read and each count derived."""
    m = c.model
    rows = [
        ("Read as", f"{c.family} (model_type {c.model_type or 'not given'!r})"),
        ("Layers", f"{m.layers:,}"),
        ("Hidden size", f"{m.hidden:,}"),
        ("Attention", _attention(m)),
        ("MLP", _mlp(c)),
        ("Vocabulary", f"{m.vocab:,} tokens, "
                       f"{'tied to' if m.tied_embeddings else 'separate from'} the output head"),
        ("Longest context", f"{m.max_context:,} tokens"),
        ("Sliding window", _window(m)),
        ("Parameters", f"{format_count(m.params)} ({m.params:,})"),
    ]
    rows.append(("Non-embedding parameters", f"{format_count(non_embedding_params(m))} "
                                             f"({non_embedding_params(m):,})"))
    if m.is_moe:
        bare = active_params_without_input_embedding(m)
        rows.append(("Active per token", f"{format_count(m.active_params)} "
                                         f"({m.active_params:,}); {format_count(bare)} "
                                         "without the input embedding (a lookup)"))
    rows.append((f"KV cache per token ({KV_FORMAT})",
                 format_bytes(kv_cache_bytes_per_token(m, KV_FORMAT))))
    return rows


def library_source(e: LibraryConfig) -> str:
    """Where a library model's config.json was found: the GitHub repository, the file, the
    entry in it (when the file holds more than the one config) and the commit."""
    entry = f" ({e.entry})" if e.entry else ""
    return (f"Its published config.json, as vendored on GitHub in {e.repo}: {e.path}{entry}, "
            f"at commit {e.commit}.")


def config_notes(c: ConfigModel) -> list[str]:
    """What the engine assumed, left out of the count, or read and did not use."""
    notes = list(c.assumed)
    notes += [f"Left out of the count: {w}." for w in c.left_out]
    if c.unused:
        notes.append("Read but not used (they do not change the sizes here): "
                     + ", ".join(c.unused) + ".")
    return notes


def inspect_to_dict(c: ConfigModel) -> dict[str, object]:
    """The shapes, the counts and the notes as plain JSON values."""
    m = c.model
    shapes = {k: v for k, v in m.to_dict().items() if k not in (
        "id", "name", "family", "source", "published_params", "published_active_params", "params_source",
        "reference_only", "note", "confidence", "declared_params", "assumptions", "params",
        "active_params", "routed_params")}
    return {
        "name": m.name,
        "model_type": c.model_type,
        "family": c.family,
        "shapes": shapes,
        "params": float(m.params),
        "active_params": float(m.active_params),
        "active_params_without_input_embedding": float(active_params_without_input_embedding(m)),
        "non_embedding_params": float(non_embedding_params(m)),
        "kv_cache_bytes_per_token": {KV_FORMAT: kv_cache_bytes_per_token(m, KV_FORMAT)},
        "assumed": list(c.assumed),
        "left_out": list(c.left_out),
        "unused": list(c.unused),
    }


def inspect_text(c: ConfigModel) -> str:
    """The plain-text answer of ``python -m engine inspect``."""
    width = max(len(label) for label, _ in shape_rows(c))
    lines = [c.model.name, "=" * len(c.model.name)]
    lines += [f"{label:<{width}}  {value}" for label, value in shape_rows(c)]
    notes = config_notes(c)
    if notes:
        lines.append("Assumptions and fields not used:")
        lines += ["  - " + n for n in notes]
    return "\n".join(lines)
