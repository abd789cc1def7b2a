"""The eoc command: output, JSON, exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading

import pytest

from eoc.cli.main import main
from tests.helpers import IN_BROWSER


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_query_prints_stage_payload_cost_basis_and_receipt() -> None:
    code, text = run("query", "what is 2+2")
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == "stage : kv"
    assert lines[1] == "payload : 4"
    assert lines[2].startswith("cost : ") and lines[2].endswith(" µJ estimated")
    assert lines[3].startswith("hit : kv estimate")
    # the tests' default neural stage says no model is connected: nothing to compare with
    assert lines[4] == "avoided : no figure: no language model is configured, so nothing says " + (
        "what one would have spent"
    )
    assert lines[5].startswith("receipt : ") and lines[5].endswith("(v2)")
    assert len(lines[5].split()[2]) == 64


def test_query_prints_what_an_answer_without_the_model_avoided() -> None:
    from eoc import Cascade
    from eoc.cli.query import format_response
    from eoc.testing import ScriptedBackend
    from tests.helpers import small_stages

    with Cascade(small_stages(ScriptedBackend())) as cascade:
        fact = cascade.resolve("what is 2+2")
        neural = cascade.resolve("why is the sky blue")
    assert fact.avoided is not None
    line = format_response(fact)[4]
    a = fact.avoided
    assert line == (
        f"avoided : {a.uj:,} µJ estimated ({a.uj - fact.cost.uj:,} µJ net of this answer's cost)"
        f": {a.basis}"
    )
    assert not any(x.startswith("avoided") for x in format_response(neural))


def test_query_explain_says_why_each_kv_candidate_was_served_or_refused() -> None:
    code, text = run("query", "--explain", "What is the speed of light in water?")
    assert code == 0 and "kv candidates (nearest first):" in text
    assert (
        "refused  'what is the speed of light'  (the query adds water: it may ask something "
        "narrower)" in text
    )
    code, raw = run("query", "--json", "--explain", "tell me the speed of light please")
    doc = json.loads(raw)
    first = doc["explain"]["kv"][0]
    assert doc["stage"] == "kv" and first["served"] and first["reason"] == ""
    assert first["stored"] == "what is the speed of light"


def test_query_answers_graph_questions_out_of_the_box() -> None:
    code, text = run("query", "what is the capital of Japan")
    assert code == 0 and "stage : graph" in text and "payload : Tokyo" in text


def test_query_json_round_trips_through_verify(tmp_path) -> None:
    code, text = run("query", "--json", "what is 2+2")
    doc = json.loads(text)
    assert code == 0 and doc["stage"] == "kv" and doc["payload"] == "4"
    assert doc["cost"]["provenance"] == "estimated"
    f = tmp_path / "r.json"
    f.write_text(text, encoding="utf-8")
    code, out = run("verify", str(f))
    assert code == 0 and "receipt consistent" in out and "unsigned" in out
    code, out = run("verify", "--json", str(f))
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True and doc["signed_by"] is None and doc["version"] == 2


@pytest.mark.parametrize(
    "path,value",
    [
        (("payload",), "5"),  # the shown answer altered, receipt left alone
        (("receipt", "payload"), "5"),
        (("receipt", "cost_uj"), 1),
        (("cost", "uj"), 1),
        (("cost", "provenance"), "measured"),
        (("receipt", "provenance"), "measured"),
        (("stage",), "cache"),
        (("cost", "basis"), "measured on rapl:psys"),
        (("receipt", "basis"), "measured on rapl:psys"),
        (("cost", "counter"), "rapl:psys"),
        (("receipt", "counter_kind"), "hardware"),
        (("cost", "counter_kind"), "hardware"),
    ],
)
def test_verify_refuses_an_altered_answer_with_exit_1(tmp_path, path, value) -> None:
    _, text = run("query", "--json", "what is 2+2")
    doc = json.loads(text)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    f = tmp_path / "r.json"
    f.write_text(json.dumps(doc), encoding="utf-8")
    code, _ = run("verify", str(f))
    assert code == 1


@pytest.mark.parametrize("content", ["", "not json", "[]", '{"receipt": {}}', "{" * 10])
def test_verify_malformed_input_is_a_usage_error(tmp_path, content: str) -> None:
    f = tmp_path / "r.json"
    f.write_text(content, encoding="utf-8")
    code, _ = run("verify", str(f))
    assert code == 2


def test_verify_missing_file_is_a_usage_error(tmp_path, capsys) -> None:
    assert run("verify", str(tmp_path / "absent.json"))[0] == 2
    assert "absent.json does not exist" in capsys.readouterr().err
    assert run("verify", str(tmp_path))[0] == 2
    assert "is a folder, not a receipt file" in capsys.readouterr().err


@pytest.mark.skipif(IN_BROWSER, reason="no named pipes in Pyodide")
def test_verify_of_a_named_pipe_ends(tmp_path, capsys) -> None:
    """It hung: opening a FIFO nobody writes to blocks until someone does."""
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    done: list[int] = []
    reader = threading.Thread(target=lambda: done.append(run("verify", str(fifo))[0]), daemon=True)
    reader.start()
    reader.join(10)
    assert done == [2]
    assert "receipt is empty" in capsys.readouterr().err


@pytest.mark.parametrize("prompt", ["", "   ", "x" * 20_000])
def test_query_bad_prompt_exits_2_with_a_reason(prompt: str, capsys) -> None:
    code, _ = run("query", prompt)
    assert code == 2
    assert "eoc query:" in capsys.readouterr().err


def test_query_bad_prompt_in_json_mode_prints_a_json_error() -> None:
    code, text = run("query", "--json", "")
    assert code == 2 and json.loads(text)["error"] == "EmptyPrompt"


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["query"], ["meter", "--seconds", "nope"]])
def test_usage_errors_exit_2(argv: list[str]) -> None:
    assert run(*argv)[0] == 2


def test_meter_says_there_is_no_counter_and_why() -> None:
    # this suite's hosts have no live counter: none at all, or one that does not advance (a VM
    # may expose perf's energy-psys frozen at 0); either way the meter says so and why
    code, text = run("meter")
    assert code == 0
    assert "no energy counter on this host" in text or ": FROZEN (advanced in 0 of" in text
    assert "every figure is estimated (no live counter)" in text
    assert "rapl" in text or ".[native]" in text or (IN_BROWSER and "browser" in text)
    code, text = run("meter", "--json")
    doc = json.loads(text)
    assert code == 0 and doc["live"] is False and doc["chosen"] == "stub" and doc["reason"]


def test_meter_rejects_an_out_of_range_window() -> None:
    assert run("meter", "--seconds", "0")[0] == 2


def test_hit_cost_reports_each_tier_or_why_there_is_no_figure() -> None:
    code, text = run("hit-cost", "--json")
    doc = json.loads(text)
    assert code == 0 and set(doc["tiers"]) == {"cache", "kv", "graph"}
    for tier, entry in doc["tiers"].items():
        assert entry["answered_at"] == tier
        assert entry["per_hit_nj"] is None and "no live counter" in entry["reason"]
        assert entry["charged"]["provenance"] == "estimated" and entry["lookup_ns"] > 0
    code, text = run("hit-cost")
    assert code == 0 and "no figure: no live counter" in text


def test_version() -> None:
    assert run("--version")[0] == 0


@pytest.mark.skipif(sys.platform == "emscripten", reason="needs a subprocess")
def test_console_script_exit_codes_and_stdin_verify() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "eoc", "query", "--json", "what is 2+2"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0
    verified = subprocess.run(
        [sys.executable, "-m", "eoc", "verify", "-"],
        input=ok.stdout,
        capture_output=True,
        text=True,
    )
    assert verified.returncode == 0, verified.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "eoc", "verify", "-"],
        input=ok.stdout.replace('"4"', '"5"'),
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "ReceiptMismatch" in bad.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "eoc", "query", ""], capture_output=True, text=True
    )
    assert usage.returncode == 2


def test_meter_with_a_live_counter_reports_the_idle_draw(monkeypatch) -> None:
    import eoc.cli.meter as cli
    from eoc.meter import CounterStatus, Detection
    from eoc.testing import FakeCounter

    live = FakeCounter(step_uj=50_000, name="fake-rapl")
    frozen = FakeCounter.frozen(
        0, name="perf/energy-psys", status=CounterStatus.frozen("advanced in 0 of 12")
    )
    monkeypatch.setattr(
        cli,
        "detect_all",
        lambda: Detection(live, ((frozen, frozen.status()), (live, live.status()))),
    )
    code, text = run("meter", "--seconds", "0.05")
    assert code == 0
    assert "perf/energy-psys [fake; whole work] : FROZEN (advanced in 0 of 12)" in text
    assert "cascade meters with fake-rapl (fake counter): idle draw" in text
    code, text = run("meter", "--json", "--seconds", "0.05")
    doc = json.loads(text)
    assert doc["live"] is True and doc["idle_draw_uw"] > 0
    assert [c["status"] for c in doc["counters"]] == ["frozen", "live"]


def test_meter_refuses_an_idle_draw_from_a_counter_that_holds(monkeypatch) -> None:
    import eoc.cli.meter as cli
    from eoc.meter import Detection
    from eoc.testing import FakeCounter

    holds = FakeCounter.frozen(7, name="claims-live")  # says LIVE, but does not advance
    monkeypatch.setattr(cli, "detect_all", lambda: Detection(holds, ((holds, holds.status()),)))
    monkeypatch.setattr(cli, "survey_extras", lambda: ([], []))
    code, text = run("meter", "--seconds", "0.05")
    assert code == 0 and "refused: idle draw of claims-live" in text and "did not advance" in text
    doc = json.loads(run("meter", "--json", "--seconds", "0.05")[1])
    assert doc["idle_draw_uw"] is None and "did not advance" in doc["idle_reason"]


def test_calibrate_is_an_alias_of_hit_cost() -> None:
    code, text = run("calibrate", "--json")
    assert code == 0 and set(json.loads(text)["tiers"]) == {"cache", "kv", "graph"}


@pytest.mark.skipif(IN_BROWSER, reason="the browser takes no counter, not even a simulated one")
def test_query_on_the_fake_meter_says_fake_in_every_line_field_and_receipt(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("EOC_MODEL", "none")
    code, text = run("query", "--meter", "fake", "what is the capital of Japan")
    lines = text.splitlines()
    assert code == 0 and len(lines) >= 5
    assert all(line.startswith("[fake meter] ") for line in lines), text
    assert "simulated, 15 W (fake counter)" in lines[0]
    assert "on simulated (fake counter)" in text and "calibrated on simulated (fake)" in text
    code, raw = run("query", "--meter", "fake", "--json", "write a poem about the sea")
    doc = json.loads(raw)
    assert doc["meter"]["kind"] == "fake" and doc["meter"]["simulated"] is True
    assert doc["stage"] == "neural"
    assert doc["cost"]["counter_kind"] == "fake" and doc["receipt"]["counter_kind"] == "fake"
    assert "(fake)" in doc["cost"]["basis"]
    f = tmp_path / "r.json"
    f.write_text(raw, encoding="utf-8")
    code, out = run("verify", str(f))
    assert code == 0 and "fake counter" in out


@pytest.mark.skipif(not IN_BROWSER, reason="natively the fake meter runs")
def test_the_browser_refuses_even_a_simulated_meter() -> None:
    code, _ = run("query", "--meter", "fake", "what is 2+2")
    assert code != 0


def test_model_progress_lines_on_a_pipe_and_on_a_terminal() -> None:
    from eoc.cli.query import _ModelWork

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, tty in ((io.StringIO(), False), (Tty(), True)):
        show = _ModelWork(stream)
        for i in (1, 2):
            show.progress(f"loading m.gguf: layer {i}/2", i / 2)
        show.progress("compiling the matmul kernels: the first run only", 0.0)
        show.piece("Blue")
        show.done()
        text = stream.getvalue()
        assert "loading m.gguf: layer 2/2 (100%)" in text
        assert "compiling the matmul kernels: the first run only\n" in text  # no percentage
        assert text.endswith("neural : Blue\n"), (tty, text)
