// The language model that runs in this page: SmolLM2-135M (the GGUF file the native runner uses)
// on llama.cpp compiled to WebAssembly (@wllama/wllama, which runs it in its own Web Worker, so
// the page never freezes). Both are served from this page's own origin; nothing else is fetched.
//
// The cascade (Python, in Pyodide) calls generate() and waits for its Promise with
// pyodide.ffi.run_sync; generate() loads the model on first use (with a progress report in
// bytes), streams each piece of the answer to the page's listener, and can be stopped: by the
// visitor (stop(), or a next question), or by eoc's loop rule (loops.js) when the model falls into
// a repetition loop. Either way generate() returns at once with the text so far; the worker
// winds the generation down behind it, and the next answer waits for that.

import { DEFAULT_RULE, LoopWatch } from "./loops.js";

// Threads: llama.cpp's threaded build needs cross-origin isolation (SharedArrayBuffer). With it,
// every logical core up to 4 (half of them past 4, where the other half are usually hyperthreads),
// at most 8; without it, one thread.
export function threadsWanted() {
  if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer === "undefined") return 1;
  const cores = navigator.hardwareConcurrency || 1;
  return Math.max(1, Math.min(8, cores <= 4 ? cores : Math.floor(cores / 2)));
}

export class PageModel {
  // entry: the manifest's "model" object (file, name, bytes, sha256, ...)
  constructor(entry, { wllamaUrl = "./wllama/esm/index.js", wasmUrl = "./wllama/esm/wasm/wllama.wasm" } = {}) {
    this.entry = entry;
    this.wllamaUrl = new URL(wllamaUrl, location.href).href;
    this.wasmUrl = new URL(wasmUrl, location.href).href;
    this.modelUrl = new URL(entry.file, location.href).href;
    this.wllama = null;
    this.loading = null;
    this.state = "not loaded"; // "loading", "ready", "failed"
    this.threads = null;
    this.multithread = null;
    this.loadMs = null;
    this.listeners = { progress: () => {}, piece: () => {}, state: () => {}, start: () => {} };
    this.last = null; // the last reply, for the benchmark
    this.controller = null;
    this.stopNow = null; // ends the answer being generated at once (stop(), the loop rule)
    this.windingDown = null; // a stopped generation the worker is still ending
    this.loopRule = DEFAULT_RULE;
  }

  // The loop rule's figures, from the core (eoc.stages.degenerate.LOOP_RULE, as JSON text).
  setLoopRule(json) {
    const rule = JSON.parse(json);
    for (const key of ["period", "repeats", "min_tokens"])
      if (!Number.isInteger(rule[key]) || rule[key] < 1) throw new Error(`the loop rule's ${key} is not a count`);
    this.loopRule = rule;
  }

  // Whether an answer is being generated (and so can be stopped).
  get generating() {
    return this.stopNow !== null;
  }

  on(event, fn) {
    this.listeners[event] = fn;
  }

  setState(state) {
    this.state = state;
    this.listeners.state(state, this);
  }

  // Loads once; a failed load is tried again on the next question.
  load() {
    if (this.wllama) return Promise.resolve(this.wllama);
    if (!this.loading) {
      this.loading = this._load().catch((err) => {
        this.loading = null;
        this.error = String((err && err.message) || err);
        this.setState("failed");
        throw err;
      });
    }
    return this.loading;
  }

  async _load() {
    const t0 = performance.now();
    this.setState("loading");
    const { Wllama } = await import(this.wllamaUrl);
    const wllama = new Wllama({ default: this.wasmUrl }, { suppressNativeLog: true, parallelDownloads: 1 });
    const total = this.entry.bytes;
    this.listeners.progress(0, total);
    await wllama.loadModelFromUrl(this.modelUrl, {
      n_ctx: 2048,
      n_threads: threadsWanted(),
      n_gpu_layers: 0, // the CPU build: the same arithmetic on every machine, and no GPU figures
      useCache: false, // served from this machine: no second copy in the browser's storage
      progressCallback: ({ loaded }) => this.listeners.progress(loaded, total),
    });
    this.threads = wllama.getNumThreads();
    this.multithread = wllama.isMultithread();
    this.loadMs = performance.now() - t0;
    this.wllama = wllama;
    this.setState("ready");
    return wllama;
  }

  // Stops the answer being generated (its text so far is served, never remembered).
  stop() {
    if (this.stopNow) this.stopNow("visitor");
  }

  // One greedy answer, as JSON text for eoc.stages.page_model.PageModelBackend.
  async generate(prompt, maxTokens) {
    this.listeners.start();
    const wllama = await this.load();
    if (this.windingDown) await this.windingDown; // the worker ends the stopped one first
    const controller = (this.controller = new AbortController());
    const reply = {
      text: "",
      finish_reason: null,
      stopped: false,
      looped: false,
      prompt_tokens: 0,
      completion_tokens: 0,
    };
    const watch = new LoopWatch(this.loopRule);
    let why = null;
    const ended = new Promise((resolve) => {
      this.stopNow = (reason) => {
        if (why) return;
        why = reason;
        controller.abort();
        resolve();
      };
    });
    const started = performance.now();
    let chunks = 0;
    let timings = null;
    const running = wllama.createChatCompletion({
      messages: [{ role: "user", content: prompt }],
      max_tokens: maxTokens,
      temperature: 0,
      stream: true,
      timings_per_token: true, // token counts arrive with every piece, so a stopped answer has them
      abortSignal: controller.signal,
      onData: (chunk) => {
        if (why) return; // stopped: the answer is what was shown when it stopped
        const choice = chunk.choices && chunk.choices[0];
        const piece = choice && choice.delta && choice.delta.content;
        if (chunk.timings) timings = chunk.timings;
        if (piece) {
          chunks += 1;
          const now = performance.now() - started;
          if (reply.first_token_ms === undefined) reply.first_token_ms = now;
          reply.last_token_ms = now;
          reply.text += piece;
          this.listeners.piece(piece, reply.text);
          if (watch.add(piece)) this.stopNow("loop");
        }
        if (choice && choice.finish_reason) reply.finish_reason = choice.finish_reason;
        if (chunk.usage) {
          reply.prompt_tokens = chunk.usage.prompt_tokens;
          reply.completion_tokens = chunk.usage.completion_tokens;
        }
      },
    });
    // a rejection after a stop is the abort itself; any other is the model's failure
    const finished = running.then(
      () => null,
      (err) => (controller.signal.aborted ? null : err),
    );
    try {
      const failed = await Promise.race([finished, ended.then(() => null)]);
      if (failed) throw failed;
    } finally {
      this.controller = null;
      this.stopNow = null;
    }
    if (why) {
      const done = (this.windingDown = finished.then(() => {
        if (this.windingDown === done) this.windingDown = null;
      }));
      if (why === "loop") {
        reply.looped = true;
        reply.finish_reason = "stop";
      } else {
        reply.stopped = true;
      }
    }
    if (!reply.completion_tokens) {
      // no usage came (a stop): the model's own counts of the last piece, else the pieces seen
      reply.prompt_tokens = timings ? timings.prompt_n + timings.cache_n : 0;
      reply.completion_tokens = timings ? Math.max(timings.predicted_n, chunks) : chunks;
    }
    if (timings) {
      reply.prompt_ms = timings.prompt_ms;
      reply.decode_ms_per_token = timings.predicted_per_token_ms;
    }
    reply.threads = this.threads;
    reply.seconds = (performance.now() - started) / 1000;
    this.last = reply;
    return JSON.stringify(reply);
  }
}
