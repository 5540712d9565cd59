"""The models the simulation runs, by the id a job keeps: a lesson model of the catalogue
('llama-3.1-8b') or a model of the config library ('openai/gpt-oss-20b'), read from its
published config.json. A job names its model by this id in the state the browser keeps, so
every part of the simulation finds the model through :func:`model_named`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from engine.numbers.catalog import ModelSpec, get_model
from engine.numbers.catalog.config_library import is_library_id, library_model


def model_named(model_id: object) -> ModelSpec:
    """The catalogue or library model called ``model_id``; EngineError (field 'model') naming
    the id when it is neither. A library model's ``id`` is its library id, so a job keeps
    it and finds the same model again."""
    if is_library_id(model_id):
        assert isinstance(model_id, str)
        return _library_spec(model_id)
    return get_model(model_id)


@cache
def _library_spec(model_id: str) -> ModelSpec:
    # Only library ids reach here, so the cache holds at most the library's models.
    return replace(library_model(model_id).model, id=model_id)
