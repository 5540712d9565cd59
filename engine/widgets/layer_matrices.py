"""docs/steps/ai-ml-dl.md: the matrices of one layer, how they add up to the model, and the FLOPs of a token."""

from __future__ import annotations

from engine.numbers.architecture import (
    Component,
    attention_flops_per_token,
    components,
    layer_components,
)
from engine.render.html import definition_list, esc, table, tag
from engine.render.options import (
    CONFIG,
    CONTEXT,
    catalog_model_field,
    chosen_model,
    noting_your_model,
)
from engine.render.secondary import secondary
from engine.render.widget import Values, Widget
from engine.words.format import format_count, format_percent

# Which layers a component belongs to: (scope, how many such layers the model has).
_LAYER_SCOPES = ("layer", "dense-layer", "moe-layer")
_SCOPE_WORDS = {
    "layer": "layer",
    "dense-layer": "dense layer",
    "moe-layer": "mixture-of-experts layer",
}


def _shape(c: Component) -> str:
    """The tensor's shape, led by its copies where the model holds more than one (norms,
    experts), and the share of them a token uses."""
    shape = f"{c.rows:,} × {c.cols:,}" if c.cols != 1 else f"{c.rows:,}"
    if c.bias:
        shape += f" + bias {c.bias:,}"
    if c.copies > 1:
        shape = f"{c.copies:,} × {shape}"
    if c.active_fraction < 1.0:
        shape += f" ({format_percent(c.active_fraction)} used per token)"
    return shape


def _layers_in_scope(model_layers: int, dense_layers: int, experts: int, scope: str) -> int:
    if scope == "layer":
        return model_layers
    if scope == "dense-layer":
        return dense_layers
    return model_layers - dense_layers if experts > 1 else model_layers


MODEL = catalog_model_field(your_model=True)
EARLIER_TOKENS = CONTEXT.but(
    label="Context",
    default="1024",
    hint="Earlier tokens attended to.",
).within(minimum=0)


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    context = values[EARLIER_TOKENS]
    layer = layer_components(model)
    layer_rows = [
        (c.name, _shape(c), f"{c.params:,}", f"{c.flops_per_token:,.0f}") for c in layer
    ]
    layer_params = sum(c.params for c in layer)
    layer_flops = sum(c.flops_per_token for c in layer)
    layer_rows.append(("One layer in all", "", f"{layer_params:,}", f"{layer_flops:,.0f}"))
    layer_table = table(
        ("Matrix", "Shape (copies × rows × columns)", "Parameters", "FLOPs per token"),
        layer_rows,
        caption=f"The matrices of one {model.name} layer",
    )

    every = components(model)
    total_rows = []
    for scope in _LAYER_SCOPES:
        in_scope = [c for c in every if c.scope == scope]
        if not in_scope:
            continue
        n = _layers_in_scope(model.layers, model.dense_layers, model.experts, scope)
        params = sum(c.params for c in in_scope)
        flops = sum(c.flops_per_token for c in in_scope)
        total_rows.append(
            (
                f"{n:,} × one {_SCOPE_WORDS[scope]} ({params // n:,} parameters each)",
                f"{params:,}",
                f"{flops:,.0f}",
            )
        )
    for c in every:
        if c.scope not in _LAYER_SCOPES:
            total_rows.append((c.name, f"{c.params:,}", f"{c.flops_per_token:,.0f}"))
    total_params = sum(c.params for c in every)
    total_flops = sum(c.flops_per_token for c in every)
    total_rows.append(("The whole model", f"{total_params:,}", f"{total_flops:,.0f}"))
    totals_table = table(
        ("Part", "Parameters", "FLOPs per token"),
        total_rows,
        caption="Layers plus embeddings and output head: the model's parameter count",
    )

    two_x = 2.0 * model.active_params
    attention = attention_flops_per_token(model, context)
    used = "parameters used per token" if model.active_params < model.params else "parameters"
    figures = definition_list(
        [
            (
                "Parameters, summed from the shapes",
                f"{format_count(total_params)} ({total_params:,})",
            ),
            ("FLOPs per token through the matrices", f"{format_count(total_flops)} FLOPs"),
            (f"2 × {used}", f"{format_count(two_x)} FLOPs"),
        ]
    )
    # Attention is taught with serving (serve-the-model): its extra FLOPs wait in the details.
    attention_line = definition_list(
        [
            (
                f"Attention scores on top, at {context:,} tokens of context",
                f"{format_count(attention)} FLOPs",
            ),
        ]
    )
    why = tag(
        "p",
        esc(
            "The input embedding is a table lookup and the norms are a few FLOPs per "
            "number, so the sum stays a little under 2 × parameters. Attention scores are "
            "extra work that grows with the context, not with the weights."
        ),
    )
    share = definition_list([("Sum as a share of 2 × parameters", format_percent(total_flops / two_x))])
    # One layer's matrices are the step's content, in view; the sums over the model wait.
    details = secondary("How the layers add up to the model",
                        figures + totals_table + share + attention_line + why)
    return layer_table + details


WIDGET = Widget(
    name="layer_matrices",
    title="The matrices inside a model",
    fields=(MODEL, CONFIG, EARLIER_TOKENS),
    render=noting_your_model(render, MODEL),
    summary="The matrices of one layer with shapes, parameters and FLOPs per token, adding up "
    "to the model's parameter count and about 2 × parameters FLOPs.",
)
