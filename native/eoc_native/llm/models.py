"""The ``eoc.models`` entry point: a process whose questions never reach the model (a kv or
graph hit) pays nothing for it.

:func:`open_local_model` is the entry point the core finds (see :mod:`eoc.plugins`): it resolves
the file first (:mod:`eoc_native.llm.locate`, without importing numpy or the runner), and only
then loads the runner (:class:`eoc_native.llm.backend.LocalModel`, which reads the weights on
its first question).
"""

from __future__ import annotations

import os
from typing import Any

from eoc_native.llm.locate import resolve_model_path


def open_local_model(path: str | os.PathLike[str] | None = None, **options: Any) -> Any:
    """A :class:`~eoc_native.llm.backend.LocalModel` over ``path`` (default: as
    :func:`resolve_model_path` finds it).

    Raises:
        MissingExtra: no model file is given or installed (before numpy is imported).
    """
    found = resolve_model_path(path)
    from eoc_native.llm.backend import LocalModel

    return LocalModel(found, **options)


__all__ = ["open_local_model"]
