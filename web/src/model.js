// The language model that runs in this page: SmolLM2-135M (the GGUF file the native runner uses)
// on llama.cpp compiled to WebAssembly (@wllama/wllama, which runs it in its own Web Worker, so
// the page never freezes). Both are served from this page's own origin; nothing else is fetched.
//
// The cascade (Python, in Pyodide) calls generate() and waits for its Promise with
// pyodide.ffi.run_sync; generate() loads the model on first use (with a progress report in
// bytes), streams each piece of the answer to the page's listener, and can be stopped.

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
    if (this.controller) this.controller.abort();
  }

  // One greedy answer, as JSON text for eoc.stages.page_model.PageModelBackend.
  async generate(prompt, maxTokens) {
    this.listeners.start();
    const wllama = await this.load();
    const controller = (this.controller = new AbortController());
    const reply = { text: "", finish_reason: null, stopped: false, prompt_tokens: 0, completion_tokens: 0 };
    const started = performance.now();
    let chunks = 0;
    let timings = null;
    try {
      await wllama.createChatCompletion({
        messages: [{ role: "user", content: prompt }],
        max_tokens: maxTokens,
        temperature: 0,
        stream: true,
        timings_per_token: true, // token counts arrive with every piece, so a stopped answer has them
        abortSignal: controller.signal,
        onData: (chunk) => {
          const choice = chunk.choices && chunk.choices[0];
          const piece = choice && choice.delta && choice.delta.content;
          if (piece) {
            chunks += 1;
            const now = performance.now() - started;
            if (reply.first_token_ms === undefined) reply.first_token_ms = now;
            reply.last_token_ms = now;
            reply.text += piece;
            this.listeners.piece(piece, reply.text);
          }
          if (choice && choice.finish_reason) reply.finish_reason = choice.finish_reason;
          if (chunk.usage) {
            reply.prompt_tokens = chunk.usage.prompt_tokens;
            reply.completion_tokens = chunk.usage.completion_tokens;
          }
          if (chunk.timings) timings = chunk.timings;
        },
      });
    } catch (err) {
      if (!controller.signal.aborted) throw err;
      reply.stopped = true;
    } finally {
      this.controller = null;
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
