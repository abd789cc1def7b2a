"""`eoc bench run`: suites, the report's arithmetic, and bad suites."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from eoc import Cascade
from eoc.cli.benchrun import BadSuite, load_suite, nearest_rank, parse_suite, run_suite
from eoc.cli.main import main
from tests.helpers import IN_BROWSER, cli_in_capped_process, small_stages

SUITE = Path(__file__).resolve().parents[1] / "bench" / "suites" / "core.json"


def test_nearest_rank_percentiles() -> None:
    values = [15, 20, 35, 40, 50]
    assert (
        nearest_rank(values, 50) == 35
        and nearest_rank(values, 95) == 50
        and nearest_rank(values, 30) == 20
    )
    assert nearest_rank(list(range(1, 101)), 99) == 99 and nearest_rank([], 50) is None


def test_a_run_reports_energy_accuracy_stages_and_provenance() -> None:
    cases = parse_suite(
        [
            {"id": 1, "prompt": "what is 2+2", "expected": "4"},
            {"id": 2, "prompt": "what is 2+2", "expected": "4"},
            {"id": 3, "prompt": "capital of France", "expected": "paris"},
            {"id": 4, "prompt": "why is the sky blue", "expected": None},
            {"id": 5, "prompt": "name the tallest tree", "expected": "hyperion"},
        ]
    )
    cascade = Cascade(small_stages())
    report = run_suite(cases, cascade)
    s = report.summary()
    total = sum(r.cost_uj for r in report.results)
    assert total > 0 and all(r.cost_uj >= 1 for r in report.results)
    assert s["total_j"] == pytest.approx(total / 1e6)
    assert s["accuracy"] == pytest.approx(3 / 4) and s["judged"] == 4
    assert s["j_per_correct"] == pytest.approx(total / 1e6 / 3)
    assert s["stage_share"] == {"cache": 0.2, "kv": 0.2, "graph": 0.2, "neural": 0.4}
    assert s["provenance"] == {"measured": 0, "estimated": 5, "worst": "estimated"}
    assert s["latency_us"]["p50"] is not None


def test_bad_prompts_are_recorded_not_fatal() -> None:
    report = run_suite(
        parse_suite(
            [
                {"id": "a", "prompt": "", "expected": "x"},
                {"id": "b", "prompt": "hi", "expected": None},
            ]
        ),
        Cascade(small_stages()),
    )
    s = report.summary()
    assert s["errors"] == 1 and s["answered"] == 1 and report.results[0].error


def test_a_suite_whose_every_case_refused_reports_no_energy_not_zero() -> None:
    report = run_suite(
        parse_suite([{"id": "a", "prompt": " ", "expected": "x"}]), Cascade(small_stages())
    )
    s = report.summary()
    assert s["total_j"] is None and s["j_per_correct"] is None
    table = "\n".join(report.table())
    assert "0 J" not in table and "0.000000 J" not in table
    assert "no figure: every case was refused" in table


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {},
        "x",
        [1],
        [{"prompt": "p"}],
        [{"id": 1}],
        [{"id": 1, "prompt": "p", "expected": 3}],
        [{"id": 1, "prompt": "p"}, {"id": 1, "prompt": "q"}],
        [{"id": True, "prompt": "p"}],
        [{"id": 1, "prompt": "p"}, {"id": "1", "prompt": "q"}],
        {"cases": [{"id": "x", "prompt": "p"}, {"id": "x", "prompt": "p"}]},
    ],
)
def test_malformed_suites_are_bad_suites(doc: object) -> None:
    with pytest.raises(BadSuite):
        parse_suite(doc)


def test_the_shipped_suite_exercises_all_four_stages() -> None:
    s = run_suite(load_suite(SUITE)).summary()
    assert all(share > 0 for share in s["stage_share"].values())
    assert s["accuracy"] is not None and s["accuracy"] >= 0.9


def test_cli_bench_run_json_and_exit_codes(tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["bench", "run", "--json", str(SUITE)], out=out) == 0
    doc = json.loads(out.getvalue())
    assert doc["summary"]["cases"] == len(doc["cases"]) == 20
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["bench", "run", str(bad)], out=io.StringIO()) == 2
    assert main(["bench", "run", str(tmp_path / "absent.json")], out=io.StringIO()) == 2
    dup = tmp_path / "dup.json"
    dup.write_text('[{"id": 1, "id": 2, "prompt": "p"}]')  # a duplicate key: refused, not merged
    assert main(["bench", "run", str(dup)], out=io.StringIO()) == 2


@pytest.mark.skipif(IN_BROWSER, reason="no /dev/zero or subprocess in Pyodide")
def test_bench_run_on_an_endless_file_is_refused_with_bounded_memory() -> None:
    """Issue: `eoc bench run /dev/zero` ate memory until the kernel killed it (stat() says 0)."""
    done = cli_in_capped_process("bench", "run", "/dev/zero")
    assert done.returncode == 2 and "larger than" in done.stderr
    assert main(["bench"], out=io.StringIO()) == 2


def test_a_models_tokens_and_figure_per_token_are_reported() -> None:
    from eoc.stages.neural import NeuralStage, Reply

    class Counted:
        name = "counted"

        def generate(self, prompt: str) -> Reply:
            return Reply(f"an answer about {prompt}", tokens_in=10, tokens_out=5)

    cases = parse_suite(
        [
            {"id": 1, "prompt": "tell me about owls", "expected": "owls"},
            {"id": 2, "prompt": "tell me about owls", "expected": "owls"},  # a cache hit
            {"id": 3, "prompt": "tell me about newts", "expected": "frogs"},
        ]
    )
    report = run_suite(cases, Cascade([*small_stages()[:-1], NeuralStage(Counted())]))
    model = report.summary()["model"]
    neural = [r for r in report.results if r.tokens_out is not None]
    assert model["answers"] == 2 == len(neural) and model["tokens_out"] == 10
    assert model["uj_per_token"] == round(sum(r.cost_uj for r in neural) / 10)
    assert model["worst"] == "estimated"
    assert any(line.startswith("model        : 2 answers, 10 tokens") for line in report.table())
    assert report.summary()["accuracy"] == 2 / 3


def test_what_the_answers_without_the_model_avoided_is_summed_by_provenance() -> None:
    from eoc.testing import ScriptedBackend

    cases = parse_suite(
        [
            {"id": 1, "prompt": "what is 2+2", "expected": "4"},
            {"id": 2, "prompt": "what is 2+2", "expected": "4"},
            {"id": 3, "prompt": "why is the sky blue", "expected": None},
            {"id": 4, "prompt": "why is the sky blue", "expected": None},
        ]
    )
    report = run_suite(cases, Cascade(small_stages(ScriptedBackend())))
    a = report.summary()["avoided"]
    figured = [r for r in report.results if r.avoided_uj is not None]
    assert [r.stage for r in figured] == ["kv", "cache", "cache"]
    assert {r.avoided_provenance for r in figured} == {"estimated"}
    assert a["answers"] == 3 and a["without_figure"] == 0
    assert a["j"] == pytest.approx(sum(r.avoided_uj or 0 for r in figured) / 1e6)
    assert a["by_provenance"] == {"estimated": {"answers": 3, "j": a["j"]}}
    line = next(x for x in report.table() if x.startswith("avoided"))
    assert line == (
        f"avoided      : {a['j']:.6f} J of model work by 3 answers given without it "
        f"({a['j']:.6f} J estimated over 3)"
    )


def test_with_no_model_the_avoided_total_is_no_figure_not_zero() -> None:
    from eoc.stages.neural import NoModelBackend

    cases = parse_suite([{"id": 1, "prompt": "what is 2+2", "expected": "4"}])
    report = run_suite(cases, Cascade(small_stages(NoModelBackend())))
    a = report.summary()["avoided"]
    assert a == {"answers": 0, "without_figure": 1, "j": None, "by_provenance": {}}
    assert "avoided      : no figure: no language model is configured" in "\n".join(report.table())
