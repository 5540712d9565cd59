"""A library of real config.json files of popular open models, read by the config reader.

``data/config_library.toml`` holds each model's published config.json as vendored in a public
GitHub repository (``repo``, ``path``, ``commit``; ``entry`` says where in that file), reduced
to the keys :mod:`engine.numbers.catalog.hf_config` reads, with the model card's parameter
counts (``published_params``, ``published_active_params`` and their ``params_source``) kept only
to test the reader against. The ids are the models' Hugging Face names (``Qwen/Qwen3-8B``).

Widgets' model selects offer the library (:func:`library_options`: ids, names and families,
read without the configs). The browser's wheel carries only the ids; the configs are fetched
the first time a reader picks one of them (``_data.SHIPPED_APART``), so the library costs a
first visit a list of names.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers.catalog._data import entry_ids, load
from engine.numbers.catalog.hf_config import ConfigModel, model_from_config
from engine.numbers.errors import EngineError
from engine.numbers.records import Record


@dataclass(frozen=True, slots=True)
class LibraryConfig(Record):
    """One library entry: where its config.json was found, and the model card's counts.

    ``active_basis``: '' when the card's active count includes the input embedding (as the
    engine's ``active_params`` does), 'without the input embedding' when it leaves it out.
    """

    id: str
    repo: str
    path: str
    commit: str
    entry: str
    published_params: float
    published_active_params: float
    params_source: str
    active_basis: str
    config: dict[str, Any]

    @property
    def family(self) -> str:
        """The organisation part of the id ('Qwen' of 'Qwen/Qwen3-8B'), for grouping."""
        return self.id.split("/", 1)[0]


@cache
def _entries() -> dict[str, LibraryConfig]:
    raw: dict[str, dict[str, Any]] = load("config_library")["configs"]
    return {
        model_id: LibraryConfig(
            id=model_id, repo=e["repo"], path=e["path"], commit=e["commit"],
            entry=e.get("entry", ""), published_params=float(e["published_params"]),
            published_active_params=float(e.get("published_active_params", 0.0)),
            params_source=e["params_source"], active_basis=e.get("active_basis", ""),
            config=e["config"])
        for model_id, e in raw.items()
    }


@dataclass(frozen=True, slots=True)
class LibraryOption(Record):
    """One library model as a select offers it: ``id`` ('Qwen/Qwen3-8B', also its name
    there) and ``family`` (the organisation, 'Qwen', its group)."""

    id: str
    family: str


def library_ids() -> list[str]:
    """The library's model ids, in the data file's order (the configs are not read)."""
    return list(entry_ids("config_library"))


@cache
def library_options() -> tuple[LibraryOption, ...]:
    """Every library model as a select offers it, grouped by family (families in
    alphabetical order, case aside; models in the data file's order within one)."""
    options = [LibraryOption(i, family=i.partition("/")[0]) for i in library_ids()]
    return tuple(sorted(options, key=lambda o: o.family.lower()))


def library_entries() -> list[LibraryConfig]:
    """Every library entry, in the data file's order."""
    return list(_entries().values())


def is_library_id(model_id: object) -> bool:
    """Whether ``model_id`` names a library model (case as written)."""
    return isinstance(model_id, str) and model_id in _id_set()


@cache
def _id_set() -> frozenset[str]:
    return frozenset(library_ids())


def library_entry(model_id: object) -> LibraryConfig:
    """The entry called ``model_id``; EngineError (field 'model') naming a few ids if none."""
    if not is_library_id(model_id):
        shown = str(model_id)[:60]
        raise EngineError(f"No library model {shown!r}; `python -m engine models` lists them "
                          f"(e.g. {', '.join(library_ids()[:3])}).", "model")
    assert isinstance(model_id, str)
    return _entries()[model_id]


@cache
def library_model(model_id: str) -> ConfigModel:
    """The library model ``model_id`` read from its config.json by the config reader."""
    return model_from_config(library_entry(model_id).config, name=model_id)
