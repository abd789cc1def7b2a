// The eoc browser demo: boots Pyodide from files served next to this page, installs the eoc
// wheel with micropip as any user's page would, and resolves what the user types.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { STAGES, formatEnergy, renderChart } from "./chart.js";
import { PageModel } from "./model.js";

const timings = (window.eocTimings = { start: performance.now() });
const $ = (id) => document.getElementById(id);
const stats = Object.fromEntries(STAGES.map((s) => [s, { count: 0, uj: 0 }]));
// What the answers given without the model avoided, summed from each answer's `avoided` part
// (eoc.ledger, the same figure eoc query, eoc serve and eoc bench run show): only answers that
// have one; with no model connected none does, and the page says nothing rather than a guess.
const ledger = { answers: 0, avoidedUj: 0, costUj: 0, provenances: new Set() };
let info = null;
let maxPromptBytes = 16384; // replaced at boot by eoc.query.MAX_PROMPT_BYTES
// The most tokens one model answer may have (?max_tokens=N, 1 to 4096): 128 is 6-10 s of the
// page's model on two threads or one, a wait a reader sits through.
let maxTokens = 128;
let asking = false; // one question at a time: the cascade waits for the model in between
let queued = null; // a question asked while the page's model answers: asked once it has stopped
const FOLD_CHARS = 200; // a longer prompt is shown folded in its answer
const utf8 = new TextEncoder();

// The longest start of ``text`` that fits in ``maxPromptBytes`` of UTF-8, whole characters only.
function fitPrompt(text) {
  if (utf8.encode(text).length <= maxPromptBytes) return text;
  const chars = Array.from(text);
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (utf8.encode(chars.slice(0, mid).join("")).length <= maxPromptBytes) lo = mid;
    else hi = mid - 1;
  }
  return chars.slice(0, lo).join("");
}

// Runs once eoc is installed: the page's own Python, a few lines over eoc's public API.
const GLUE = `
import json
import eoc
from eoc import Cascade
from eoc.errors import EocError
from eoc.assemble import default_stages
from eoc.meter import detect_all
from eoc.stages.degenerate import LOOP_RULE
from eoc.stages.browser_remote import BrowserOpenAIBackend
from eoc.stages.page_model import PageModelBackend, pyodide_run

_cascade = None
_neural = {}

def _page_model(max_tokens):
    """The backend for the model in this page, or the reason there is none."""
    import js
    model = getattr(js, "eocPageModel", None)
    if model is None:
        return None, js.eocPageModelMissing
    entry = json.loads(js.JSON.stringify(model.entry))
    model.setLoopRule(json.dumps(LOOP_RULE))  # the page stops a loop as eoc's runner does
    backend = PageModelBackend(
        pyodide_run(model.generate),
        model=entry["name"],
        identity=entry["sha256"],
        macs_per_token=entry["macs_per_token"],
        macs_per_prompt_token=entry["macs_per_prompt_token"],
        max_tokens=max_tokens,
    )
    return backend, None

def eoc_connect(url, max_tokens=128):
    """(Re)build the cascade. With no URL, its neural stage is the model that runs in this page
    (when the page has one and the browser can wait for it); with "none", it says that no model
    is connected; with a URL, it asks that OpenAI-compatible server. A URL eoc cannot use leaves
    the cascade as it was."""
    global _cascade
    url = (url or "").strip()
    why_none = None
    if not url:
        try:
            backend, why_none = _page_model(int(max_tokens))
        except EocError as exc:
            backend, why_none = None, exc.reason
        if backend is not None:
            _cascade = Cascade(default_stages(backend))
            _neural.clear()
            _neural.update(backend=backend.name, model=True, page=True, url=None, error=None,
                           max_tokens=backend.max_tokens)
            return json.dumps(_neural)
        url = "none"
    if url == "none":
        _cascade = Cascade()
        _neural.clear()
        _neural.update(backend=_cascade.stages[-1].backend.name, model=False, url=None,
                       error=None, why=why_none)
        return json.dumps(_neural)
    try:
        backend = BrowserOpenAIBackend(url)
    except EocError as exc:
        return json.dumps({"refused": type(exc).__name__, "reason": exc.reason})
    error = None
    try:
        backend.connect()  # asks the server which model it serves
    except EocError as exc:
        error = exc.reason  # kept: its questions fail clearly, the cheap tiers still answer
    _cascade = Cascade(default_stages(backend))
    _neural.clear()
    _neural.update(backend=backend.name, model=True, page=False, url=backend.base_url, error=error)
    return json.dumps(_neural)

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
        "neural": _neural,
    })
`;

function setStatus(text, state) {
  $("status-text").textContent = text;
  if (state) document.body.dataset.state = state;
}

function setEnabled(on, selector = "#prompt, #ask-button, .chip, #llm-url, #llm-button") {
  for (const node of document.querySelectorAll(selector)) node.disabled = !on;
}

const MB = (bytes) => `${(bytes / 1e6).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`;

// What the model in this page is doing, on the neural-stage line.
function describePageModel() {
  const model = window.eocPageModel;
  const name = model.entry.name;
  if (model.state === "ready") {
    const how = model.multithread
      ? `${model.threads} threads (this page is cross-origin isolated)`
      : "1 thread (this page is not cross-origin isolated, or the browser lacks SharedArrayBuffer)";
    return `Neural stage: ${name}, running in this page (llama.cpp in WebAssembly) on ${how} — its answers are estimated: a browser has no energy counter.`;
  }
  if (model.state === "failed")
    return `Neural stage: ${name} in this page — it could not load: ${model.error || "see the console"}. The next question tries again.`;
  return `Neural stage: ${name}, which runs in this page (llama.cpp in WebAssembly) — it loads (${MB(model.entry.bytes)}, from this machine) on the first question the cheap tiers cannot answer; its answers are estimated.`;
}

// Which neural backend answers: the model in this page (the default), none ("none"), or the
// OpenAI-compatible server asked for.
function connect(url) {
  const doc = JSON.parse(window.eoc.connect(url, maxTokens));
  const line = $("neural-backend");
  if (doc.refused) {
    line.textContent = `Not connected — ${doc.refused}: ${doc.reason}`;
    line.dataset.state = "error";
    return doc;
  }
  window.eoc.info = info = JSON.parse(window.eoc.infoFn());
  if (!doc.model) {
    line.textContent =
      "Neural stage: no language model is connected, so questions the cheap tiers cannot answer " +
      "get a notice saying so (never remembered)" +
      (doc.why ? ` (the model in this page is unavailable: ${doc.why})` : "") +
      ". Clear the endpoint above to use the model in this page, or connect an OpenAI-compatible server.";
    line.dataset.state = "none";
  } else if (doc.page) {
    line.textContent = describePageModel();
    line.dataset.state = "model";
  } else if (doc.error) {
    line.textContent = `Neural stage: ${doc.backend} — but the server did not answer: ${doc.error}`;
    line.dataset.state = "error";
  } else {
    line.textContent =
      `Neural stage: ${doc.backend} — its answers are estimated: no counter in the browser sees the ` +
      "remote model's work.";
    line.dataset.state = "model";
  }
  $("llm-url").value = doc.url || (doc.model ? "" : "none");
  const params = new URLSearchParams(location.search);
  if (doc.url) params.set("llm", doc.url);
  else if (!doc.model) params.set("llm", "none");
  else params.delete("llm");
  const query = params.toString();
  history.replaceState(null, "", location.pathname + (query ? `?${query}` : "") + location.hash);
  return doc;
}

// The model in this page, when the build has one and this browser can let Python wait for it.
function setUpPageModel(manifest) {
  if (!manifest.model) {
    window.eocPageModelMissing = "this build of the page has no model (web/build.py puts one in)";
    return;
  }
  if (typeof WebAssembly.Suspending !== "function") {
    window.eocPageModelMissing =
      "this browser lacks WebAssembly JSPI, which lets the Python cascade wait for the model (Chrome or Edge 137 and later have it)";
    return;
  }
  const model = (window.eocPageModel = new PageModel(manifest.model));
  const bar = $("model-progress");
  model.on("progress", (loaded, total) => {
    bar.hidden = false;
    bar.max = total;
    bar.value = loaded;
    $("model-progress-text").textContent = `Loading the model: ${MB(loaded)} of ${MB(total)}`;
  });
  model.on("state", (state) => {
    if (state !== "loading") {
      bar.hidden = true;
      $("model-progress-text").textContent =
        state === "ready" ? `Model loaded in ${(model.loadMs / 1000).toFixed(1)} s.` : "";
    }
    if (info && info.neural && info.neural.page) $("neural-backend").textContent = describePageModel();
  });
  model.on("piece", (_piece, text) => {
    const pending = document.querySelector("#answers > li.pending .payload");
    if (pending) pending.textContent = text;
  });
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

  maxPromptBytes = pyodide.runPython("from eoc.query import MAX_PROMPT_BYTES; MAX_PROMPT_BYTES");
  $("prompt").maxLength = maxPromptBytes; // characters: never fewer bytes than characters
  const ask = pyodide.globals.get("eoc_ask");
  const infoFn = pyodide.globals.get("eoc_info");
  const connectFn = pyodide.globals.get("eoc_connect");
  const params = new URLSearchParams(location.search);
  const wantedTokens = Number(params.get("max_tokens"));
  if (Number.isInteger(wantedTokens) && wantedTokens >= 1 && wantedTokens <= 4096) maxTokens = wantedTokens;
  setUpPageModel(manifest);
  // With JSPI the question is asked through callPromising, so the cascade can wait for the
  // model in this page without blocking it; without, as a plain call.
  const canWait = typeof WebAssembly.Suspending === "function";
  window.eoc = {
    pyodide,
    ask: (prompt) => JSON.parse(ask(prompt)),
    askAsync: async (prompt) => JSON.parse(canWait ? await ask.callPromising(prompt) : ask(prompt)),
    connect: connectFn,
    infoFn,
    info: null,
  };
  if (params.get("llm") && params.get("llm") !== "none") setStatus("Connecting to the model endpoint…");
  const wanted = params.get("llm") || "";
  window.eoc.neural = connect(wanted);
  if (window.eoc.neural.refused) {
    // a ?llm= eoc cannot use: say why, and serve with no model (there is no cascade yet)
    const why = $("neural-backend").textContent;
    window.eoc.neural = connect("none");
    $("neural-backend").textContent = `${why} Neural stage: no language model is connected.`;
    $("neural-backend").dataset.state = "error";
    $("llm-url").value = wanted;
  }
  $("versions").textContent = `eoc ${info.version} · Pyodide ${manifest.pyodide}`;
  $("meter-reason").textContent = `Meter in use: ${info.meter} — ${info.reason}`;
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
  let text = `${answers} answer${answers === 1 ? "" : "s"}, ${formatEnergy(total)} estimated in all.`;
  if (ledger.answers) {
    // the worst provenance among them: measured-when-made only if every figure was
    const prov = ledger.provenances.size === 1 ? [...ledger.provenances][0] : "estimated";
    const ratio = ledger.avoidedUj / ledger.costUj;
    const n = ledger.answers;
    text +=
      ` Sent to the model, the ${n} answer${n === 1 ? "" : "s"} given without it would have cost ` +
      `about ${formatEnergy(ledger.avoidedUj)} (${prov})` +
      (ratio > 1.05 ? ` — ${ratio.toLocaleString("en-US", { maximumFractionDigits: 1 })}× more.` : ".");
  }
  $("totals").textContent = text;
}

// A long prompt is shown folded (its start and how much more), with a button to unfold it.
function showPrompt(span, prompt) {
  const chars = Array.from(prompt);
  if (chars.length <= FOLD_CHARS) {
    span.textContent = prompt;
    return;
  }
  const more = chars.length - FOLD_CHARS;
  const text = document.createElement("span");
  text.className = "prompt-text";
  text.textContent = `${chars.slice(0, FOLD_CHARS).join("")}…`;
  const toggle = document.createElement("button");
  toggle.type = "button";
  toggle.className = "unfold";
  toggle.textContent = `show all (${more.toLocaleString("en-US")} more characters)`;
  toggle.addEventListener("click", () => {
    const folded = toggle.dataset.open !== "1";
    text.textContent = folded ? prompt : `${chars.slice(0, FOLD_CHARS).join("")}…`;
    toggle.textContent = folded ? "fold" : `show all (${more.toLocaleString("en-US")} more characters)`;
    toggle.dataset.open = folded ? "1" : "0";
  });
  span.dataset.folded = String(chars.length);
  span.append(text, " ", toggle);
}

// What the card says of an answer cut short: stopped by the visitor (or by a next question),
// or stopped by the page in a repetition loop. Neither is ever remembered.
function cutNote(doc, looped) {
  if (looped) return "Stopped: the model fell into a repetition loop, so the page stopped it (as eoc's runner does). This answer is never remembered.";
  if (doc.generation && doc.generation.finish_reason === "cancelled")
    return "Stopped before the model finished: the answer is cut where it stopped, and never remembered.";
  return "";
}

function renderAnswer(prompt, doc, looped = false) {
  const node = $("answer-template").content.firstElementChild.cloneNode(true);
  const badge = node.querySelector(".stage-badge");
  showPrompt(node.querySelector(".prompt"), prompt);
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
    const note = cutNote(doc, looped);
    if (note) {
      const cut = document.createElement("p");
      cut.className = "cut-note";
      cut.textContent = note;
      node.querySelector(".payload").after(cut);
      node.dataset.cut = looped ? "loop" : "stopped";
    }
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

// The card an answer from the model in this page streams into, with a stop button.
function showPending(text) {
  let node = document.querySelector("#answers > li.pending");
  if (node) return node;
  node = $("answer-template").content.firstElementChild.cloneNode(true);
  node.classList.add("pending");
  showPrompt(node.querySelector(".prompt"), text);
  const badge = node.querySelector(".stage-badge");
  badge.textContent = "neural";
  badge.classList.add("neural");
  node.querySelector(".payload").textContent = "…";
  node.querySelector(".facts").remove();
  const stop = document.createElement("button");
  stop.type = "button";
  stop.className = "stop";
  stop.textContent = "stop";
  stop.addEventListener("click", () => window.eocPageModel.stop());
  node.querySelector(".answer-head").append(stop);
  $("no-answers").hidden = true;
  $("answers").prepend(node);
  return node;
}

async function submit(text) {
  if (!window.eoc) return;
  if (asking) {
    // the page's model is answering: a next question stops it (the answer so far is served,
    // never remembered) and is asked as soon as it has stopped
    const model = window.eocPageModel;
    if (model && (model.generating || model.state === "loading")) {
      queued = text;
      if (model.generating) {
        model.stop();
        setStatus("Stopping the answer to ask your next question…");
      } else {
        setStatus("Your next question is asked once the model has loaded and answered this one…");
      }
    }
    return;
  }
  const neural = (info && info.neural) || {};
  const page = Boolean(neural.page);
  if (neural.model && !page) {
    // the request to the model blocks this thread: let the status paint first
    setStatus("Asking… (a question the cheap tiers miss goes to the model, which can take a while)");
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }
  asking = true;
  setEnabled(false);
  const t0 = performance.now();
  let doc;
  let looped = false;
  try {
    if (page) {
      window.eocPageModel.last = null;
      window.eocPageModel.on("start", () => {
        showPending(text);
        // the next question may be asked while this one streams (not another endpoint: the
        // cascade is busy with this answer until it stops)
        setEnabled(true, "#prompt, #ask-button, .chip");
        setStatus(
          "The model in this page is answering… (stop, or a next question, ends it; a stopped answer is never remembered)",
        );
      });
      doc = await window.eoc.askAsync(text);
      looped = Boolean(doc.stage === "neural" && window.eocPageModel.last && window.eocPageModel.last.looped);
    } else {
      doc = window.eoc.ask(text);
    }
  } catch (err) {
    doc = { error: "PageError", reason: String((err && err.message) || err) };
  } finally {
    asking = false;
    document.querySelector("#answers > li.pending")?.remove();
    setEnabled(true);
  }
  if (!doc.error) {
    stats[doc.stage].count += 1;
    stats[doc.stage].uj += doc.cost.uj;
    if (doc.avoided) {
      ledger.answers += 1;
      ledger.avoidedUj += doc.avoided.uj;
      ledger.costUj += doc.cost.uj;
      ledger.provenances.add(doc.avoided.provenance);
    }
    if (timings.firstAnswer === undefined) timings.firstAnswer = performance.now();
  }
  timings.lastResolveMs = performance.now() - t0;
  renderAnswer(text, doc, looped);
  renderChart($("chart"), stats);
  updateTotals();
  if (neural.model) setStatus("Ready — every figure here is estimated.");
  if (queued !== null) {
    const next = queued;
    queued = null;
    submit(next);
  }
}

// A paste past the prompt limit (counted in UTF-8 bytes, as eoc counts it) is cut, and said so.
$("prompt").addEventListener("input", () => {
  const input = $("prompt");
  const fitted = fitPrompt(input.value);
  const note = $("prompt-note");
  if (fitted !== input.value) {
    input.value = fitted;
    note.textContent =
      `Cut to ${utf8.encode(fitted).length.toLocaleString("en-US")} bytes: eoc takes prompts of at ` +
      `most ${maxPromptBytes.toLocaleString("en-US")} bytes of UTF-8.`;
    note.hidden = false;
  } else if (!note.hidden && utf8.encode(input.value).length < maxPromptBytes) {
    note.hidden = true;
  }
});

$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("prompt");
  submit(input.value);
  input.select();
});
$("llm-form").addEventListener("submit", (event) => {
  event.preventDefault();
  if (!window.eoc) return;
  setStatus("Connecting to the model endpoint…");
  // let the status paint: connecting asks the server for its model, which blocks this thread
  requestAnimationFrame(() =>
    setTimeout(() => {
      const doc = connect($("llm-url").value);
      if (!doc.refused) window.eoc.neural = doc;
      setStatus("Ready — every figure here is estimated.");
    }, 0),
  );
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
