// The eoc browser demo: boots Pyodide from files served next to this page, installs the eoc
// wheel with micropip as any user's page would, and resolves what the user types.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { STAGES, formatEnergy, renderChart } from "./chart.js";

const timings = (window.eocTimings = { start: performance.now() });
const $ = (id) => document.getElementById(id);
const stats = Object.fromEntries(STAGES.map((s) => [s, { count: 0, uj: 0 }]));
let info = null;

// Runs once eoc is installed: the page's own Python, a few lines over eoc's public API.
const GLUE = `
import json
import eoc
from eoc import Cascade
from eoc.errors import EocError
from eoc.meter import detect_all

_cascade = Cascade()

def eoc_ask(prompt):
    try:
        r = _cascade.resolve(prompt)
    except EocError as exc:
        return json.dumps({"error": type(exc).__name__, "reason": exc.reason})
    return json.dumps(r.to_dict(), ensure_ascii=False)

def eoc_info():
    found = detect_all()
    return json.dumps({
        "version": eoc.__version__,
        "meter": found.counter.name,
        "reason": found.reason,
        "live": _cascade.live,
        "figures": {s.stage.value: s.figure.uj for s in _cascade.stages},
    })
`;

function setStatus(text, state) {
  $("status-text").textContent = text;
  if (state) document.body.dataset.state = state;
}

function setEnabled(on) {
  for (const node of document.querySelectorAll("#prompt, #ask-button, .chip")) node.disabled = !on;
}

async function boot() {
  const manifest = await (await fetch("manifest.json")).json();
  setStatus(`Loading the Python runtime (Pyodide ${manifest.pyodide})…`);
  const pyodide = await loadPyodide({ indexURL: new URL("./pyodide/", location.href).href });
  timings.pyodide = performance.now();

  setStatus("Installing eoc…");
  const micropipUrl = new URL(manifest.micropip_wheel, location.href).href;
  await pyodide.loadPackage([micropipUrl]); // never rejects: the import below is the check
  pyodide.runPython("import micropip");
  const micropip = pyodide.pyimport("micropip");
  await micropip.install.callKwargs(new URL(manifest.eoc_wheel, location.href).href, { deps: false });
  micropip.destroy();
  pyodide.runPython(GLUE); // imports eoc: throws if the install did not really happen
  timings.eoc = performance.now();

  const ask = pyodide.globals.get("eoc_ask");
  info = JSON.parse(pyodide.globals.get("eoc_info")());
  $("versions").textContent = `eoc ${info.version} · Pyodide ${manifest.pyodide}`;
  $("meter-reason").textContent = `Meter in use: ${info.meter} — ${info.reason}`;
  window.eoc = { pyodide, ask: (prompt) => JSON.parse(ask(prompt)), info };
  renderChart($("chart"), stats);
  updateTotals();
  setEnabled(true);
  setStatus(`Ready in ${((timings.eoc - timings.start) / 1000).toFixed(1)} s — every figure here is estimated.`, "ready");
  $("prompt").focus();

  const q = new URLSearchParams(location.search).get("q");
  if (q) submit(q);
}

function updateTotals() {
  const answers = STAGES.reduce((n, s) => n + stats[s].count, 0);
  const total = STAGES.reduce((n, s) => n + stats[s].uj, 0);
  if (!answers || !info) {
    $("totals").textContent = "No answers yet.";
    return;
  }
  const allNeural = answers * info.figures.neural;
  const ratio = allNeural / total;
  $("totals").textContent =
    `${answers} answer${answers === 1 ? "" : "s"}, ${formatEnergy(total)} estimated in all. ` +
    `Sent straight to the neural stage they would have cost about ${formatEnergy(allNeural)}` +
    (ratio > 1.05 ? ` — ${ratio.toLocaleString("en-US", { maximumFractionDigits: 1 })}× more.` : ".");
}

function renderAnswer(prompt, doc) {
  const node = $("answer-template").content.firstElementChild.cloneNode(true);
  const badge = node.querySelector(".stage-badge");
  node.querySelector(".prompt").textContent = prompt;
  if (doc.error) {
    badge.textContent = "refused";
    badge.classList.add("error");
    node.querySelector(".payload").textContent = `${doc.error}: ${doc.reason}`;
    node.querySelector(".facts").remove();
    node.dataset.error = doc.error;
  } else {
    badge.textContent = doc.stage;
    badge.classList.add(doc.stage);
    node.dataset.stage = doc.stage;
    node.dataset.json = JSON.stringify(doc);
    node.querySelector(".payload").textContent = doc.payload;
    const cost = node.querySelector(".cost");
    cost.textContent = `${doc.cost.uj.toLocaleString("en-US")} µJ`;
    const prov = document.createElement("span");
    prov.className = `prov ${doc.cost.provenance}`;
    prov.textContent = doc.cost.provenance;
    cost.append(prov);
    node.querySelector(".basis").textContent = doc.cost.basis;
    node.querySelector(".digest").textContent = doc.receipt.digest;
    node.querySelector(".copy").addEventListener("click", async (event) => {
      try {
        await navigator.clipboard.writeText(JSON.stringify(doc, null, 2));
        event.target.textContent = "copied";
      } catch {
        event.target.textContent = "copy failed";
      }
    });
  }
  $("no-answers").hidden = true;
  $("answers").prepend(node);
}

function submit(text) {
  if (!window.eoc) return;
  const t0 = performance.now();
  const doc = window.eoc.ask(text);
  if (!doc.error) {
    stats[doc.stage].count += 1;
    stats[doc.stage].uj += doc.cost.uj;
    if (timings.firstAnswer === undefined) timings.firstAnswer = performance.now();
  }
  timings.lastResolveMs = performance.now() - t0;
  renderAnswer(text, doc);
  renderChart($("chart"), stats);
  updateTotals();
}

$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("prompt");
  submit(input.value);
  input.select();
});
for (const chip of document.querySelectorAll(".chip")) {
  chip.addEventListener("click", () => {
    $("prompt").value = chip.dataset.prompt;
    submit(chip.dataset.prompt);
    $("prompt").focus();
  });
}

boot().catch((err) => {
  console.error(err);
  setStatus(`Could not start: ${err.message || err}`, "error");
});
