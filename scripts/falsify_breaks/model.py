"""Falsify breaks: quantization, compute backends, the autotuner and the model runner."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "unmeasured candidate does not void the comparison",
        "native/eoc_native/autotune/tune.py",
        "    if unmeasured:",
        "    if False:",
    ),
    (
        "profile not demoted when its counter is not live",
        "native/eoc_native/autotune/profile.py",
        "    if not status.is_live:",
        "    if False:",
    ),
    (
        "zero-joule profile entry allowed",
        "native/eoc_native/autotune/profile.py",
        "                or v <= 0",
        "                or v < 0",
    ),
    (
        "noise-level marginal accepted",
        "native/eoc_native/autotune/tune.py",
        "min_fraction=NOISE_FRACTION)",
        "min_fraction=0.0)",
    ),
    (
        "foreign signer accepted with trusted keys",
        "native/eoc_native/autotune/signing.py",
        "    if signer not in keys:",
        "    if False:",
    ),
    (
        "unsigned accepted with trusted keys",
        "native/eoc_native/autotune/signing.py",
        "        if keys:\n            # ReceiptMismatch, not NotMeasured",
        "        if False:\n            # ReceiptMismatch, not NotMeasured",
    ),
    (
        "misspelt trusted key accepted",
        "native/eoc_native/autotune/signing.py",
        "        if not _KEY_HEX.fullmatch(key):",
        "        if False:",
    ),
    (
        "unchecked signer not said to be unchecked",
        "native/eoc_native/autotune/signing.py",
        "        if self.trusted is None:\n",
        "        if False:\n",
    ),
    (
        "load_profile ignores trusted keys",
        "native/eoc_native/autotune/profile.py",
        "    check = check_signature(doc, trusted_keys)\n    profile = TuningProfile.from_dict(doc, source=str(p))",
        "    check = check_signature(doc, ())\n    profile = TuningProfile.from_dict(doc, source=str(p))",
    ),
    (
        "hand-built TuneResult recorded as measured",
        "native/eoc_native/autotune/profile.py",
        "        genuine = measured_here(result)",
        "        genuine = True",
    ),
    (
        "entry neither measured here nor imported written",
        "native/eoc_native/autotune/profile.py",
        "            if not (entry_measured_here(e) or e.origin.strip())",
        "            if False",
    ),
    (
        "imported origin relabelled on re-load",
        "native/eoc_native/autotune/profile.py",
        "        origin.strip() or default_origin,",
        "        default_origin,",
    ),
    (
        "new results mixed into an imported profile",
        "native/eoc_native/autotune/profile.py",
        "        if self.origin:  # its provenance is the import's",
        "        if False:  # its provenance is the import's",
    ),
    (
        "profile read unbounded",
        "native/eoc_native/autotune/profile.py",
        '        doc = read_json(p, MAX_PROFILE_BYTES, what="tuning profile", stdin_ok=False)',
        '        doc = json.loads(p.read_text(encoding="utf-8"))',
    ),
    (
        "profile counter asked, not probed, on load",
        "native/eoc_native/autotune/profile.py",
        "            return probe(c).status",
        "            return c.status()",
    ),
    (
        "winner not the joules-minimal backend accepted",
        "native/eoc_native/autotune/profile.py",
        "        if mine is None or mine > least:",
        "        if mine is None:",
    ),
    (
        "version true accepted as 1",
        "native/eoc_native/autotune/profile.py",
        "        if type(version) is not int or version != PROFILE_VERSION:",
        "        if version != PROFILE_VERSION:",
    ),
    (
        "entry text fields not type-checked",
        "native/eoc_native/autotune/profile.py",
        "            if not isinstance(getattr(self, name), str):",
        "            if False:",
    ),
    (
        "tuner trusts the counter's status()",
        "native/eoc_native/autotune/tune.py",
        "    return probe(counter, clock=clock, sleep=sleep)",
        '    return ProbeResult(counter.status(), 0, 0, 0, 0, counter.name, "eoc")',
    ),
    (
        "tuner takes a hand-built probe",
        "native/eoc_native/autotune/tune.py",
        "        if given.from_eoc:",
        "        if True:",
    ),
    (
        "tuner takes another counter's probe",
        "native/eoc_native/autotune/tune.py",
        "        if given.counter != counter.name:",
        "        if False:",
    ),
    (
        "tuner shows the counter's claimed kind",
        "native/eoc_native/autotune/tune.py",
        "    name, kind = counter.name, effective_kind(counter)[0]",
        "    name, kind = counter.name, counter.kind",
    ),
    (
        "4-bit kernel drops the high nibble",
        "native/eoc_native/quant/kernels.py",
        "tmp[i] += np.float32(v & 15) * lo + np.float32(v >> 4) * hi",
        "tmp[i] += np.float32(v & 15) * lo + np.float32(v & 15) * hi",
    ),
    (
        "8-bit kernel forgets the block scale",
        "native/eoc_native/quant/kernels.py",
        "                acc[i] += f16(db[i]) * tmp[i]\n",
        "                acc[i] += tmp[i]\n",
    ),
    (
        "Q4_0 read with the wrong offset",
        "native/eoc_native/quant/blocks.py",
        "_f16_bits(d.view(np.float16) * -8)",
        "_f16_bits(d.view(np.float16) * -7)",
    ),
    (
        "short tensor bytes accepted",
        "native/eoc_native/quant/blocks.py",
        "    if data.size != n_out * nb * size:",
        "    if False:",
    ),
    (
        "dispatcher prepares a weight on every call",
        "native/eoc_native/autotune/dispatch.py",
        "copy = dw.copies[backend.name] = backend.load_weight(dw.weight)",
        "copy = backend.load_weight(dw.weight)",
    ),
    (
        "dispatcher does not count a model's matmuls",
        "native/eoc_native/autotune/dispatch.py",
        "        self.calls[(backend.name, key)] += 1\n        return backend.apply(x, copy)",
        "        return backend.apply(x, copy)",
    ),
    (
        "model estimate can be 0",
        "native/eoc_native/llm/energy.py",
        "    uj = max(1, round(from_profile + from_constants))",
        "    uj = round(from_profile + from_constants)",
    ),
    (
        "unseeded samples memoized",
        "native/eoc_native/llm/backend.py",
        "    return sampler.temperature <= 0.0 or sampler.seed is not None",
        "    return True",
    ),
    (
        "a model's control characters passed on",
        "native/eoc_native/llm/backend.py",
        'piece = CONTROL_CHARS.sub("", raw)',
        "piece = raw",
    ),
    (
        "fused decode attention reads the wrong key/value head",
        "native/eoc_native/quant/kernels.py",
        "        g = h // group\n",
        "        g = h % n_kv\n",
    ),
    (
        "fused decode attention skips the newest key",
        "native/eoc_native/quant/kernels.py",
        "            for j in range(hd):\n                acc += q[j] * cache_k[t, g, j]",
        "            for j in range(hd):\n                acc += q[j] * cache_k[t, g, j] * (t < pos)",
    ),
    (
        "one-token RMSNorm forgets the mean",
        "native/eoc_native/quant/kernels.py",
        "    scale = np.float32(1.0 / np.sqrt(ss / n + eps))",
        "    scale = np.float32(1.0 / np.sqrt(ss + eps))",
    ),
    (
        "one-token SwiGLU multiplies by the gate, not up",
        "native/eoc_native/quant/kernels.py",
        "        out[i] = g / (np.float32(1) + np.exp(-g)) * gate_up[h + i]",
        "        out[i] = g / (np.float32(1) + np.exp(-g)) * gate_up[i]",
    ),
    (
        "a local model's estimate stands in for a measured span",
        "native/eoc_native/llm/backend.py",
        "            None,  # the work ran here: a live counter's span measures it",
        "            cost,  # the work ran here: a live counter's span measures it",
    ),
    (
        "Llama 3 pre-tokens merged when whole in the vocabulary",
        "native/eoc_native/llm/tokenizer.py",
        '            ignore_merges=pre == "llama-bpe",',
        "            ignore_merges=False,",
    ),
    (
        "SentencePiece merges ranked against their scores",
        "native/eoc_native/llm/tokenizer.py",
        "                    ranked.append((-float(scores[i]), i, left, right))",
        "                    ranked.append((float(scores[i]), i, left, right))",
    ),
    (
        "an empty trusted key list switches checking off",
        "native/eoc_native/autotune/signing.py",
        '    if not out and (keys or source != "the trusted keys given"):',
        "    if False:",
    ),
    (
        "a local model's origin ignores max_tokens",
        "native/eoc_native/llm/backend.py",
        "                max_tokens=self.max_tokens,\n                temperature=s.temperature,",
        "                temperature=s.temperature,",
    ),
    (
        "the local model drops message names",
        "native/eoc_native/llm/backend.py",
        "        if any(request.names):",
        "        if False:",
    ),
    (
        "the quantization layer imports the model runner above it",
        "native/eoc_native/quant/blocks.py",
        "from __future__ import annotations\n",
        "from __future__ import annotations\n\nimport eoc_native.llm.weights  # noqa: F401\n",
    ),
    (
        "generation runs on in a repetition loop",
        "native/eoc_native/llm/backend.py",
        "            if self.loop_stop:\n                tokens = until_loop(tokens)",
        "            if False:\n                tokens = until_loop(tokens)",
    ),
    (
        "the loop rule never finds a loop",
        "eoc/stages/degenerate.py",
        "        if span <= n and seen[n - span : n - period] == seen[n - span + period : n]:\n            return True",
        "        if span <= n and seen[n - span : n - period] == seen[n - span + period : n]:\n            pass",
    ),
]

BREAKS += [
    (
        "a GGUF metadata key given twice is taken",
        "native/eoc_native/llm/gguf_header.py",
        "        if key in metadata:",
        "        if False:",
    ),
    (
        "a GGUF tensor's dimension count is not checked",
        "native/eoc_native/llm/gguf_header.py",
        "        if not 1 <= n_dims <= MAX_DIMS:",
        "        if False:",
    ),
    (
        "an unknown GGUF value type is read as nothing",
        "native/eoc_native/llm/gguf_header.py",
        '        raise HeaderError(f"{what}: unknown value type {kind} at offset {self.off:,}")',
        "        return None",
    ),
]

BREAKS += [
    (
        "a first run compiles the kernels without saying so",
        "native/eoc_native/llm/generate.py",
        "        if progress is not None:\n            progress(what, 0.0)",
        "        if False:\n            progress(what, 0.0)",
    ),
    (
        "a step that starts is shown at 0 %",
        "eoc/cli/query.py",
        '        shown = what if fraction <= 0 else f"{what} ({fraction:.0%})"',
        '        shown = f"{what} ({fraction:.0%})"',
    ),
]

BREAKS += [
    (
        "a damaged layout file stops the model loading",
        "native/eoc_native/llm/layout_cache.py",
        "        except (ValueError, KeyError, TypeError):\n            blocks = None",
        "        except KeyError:\n            blocks = None",
    ),
    (
        "a damaged layout index stops the model loading",
        "native/eoc_native/llm/layout_cache.py",
        "        except (OSError, ValueError):\n            return {}",
        "        except OSError:\n            return {}",
    ),
    (
        "a layout array whose bytes do not check is taken",
        "native/eoc_native/llm/layout_cache.py",
        "            if not isinstance(digest, str) or not hmac.compare_digest(got, digest):",
        "            if False:",
    ),
    (
        "a disk that refuses the layout file stops the model loading",
        "native/eoc_native/llm/layout_cache.py",
        "        except (OSError, ValueError):\n            self._no_alloc = True",
        "        except ValueError:\n            self._no_alloc = True",
    ),
    (
        "a failed load leaves its part file",
        "native/eoc_native/llm/llama.py",
        "                layouts.close()  # a file this load began and did not finish is removed",
        "                pass",
    ),
    (
        "the first load tiles into memory and copies",
        "native/eoc_native/llm/llama.py",
        "            weight = read_weight(gf, *names, alloc=layouts.alloc, row_orders=row_orders)",
        "            weight = read_weight(gf, *names, row_orders=row_orders)",
    ),
    (
        "a load maps nothing from the layout file",
        "native/eoc_native/llm/layout_cache.py",
        "        if entry is None or self._map is None:\n            return None",
        "        if True:\n            return None",
    ),
    (
        "the layout cache ignores a changed model file",
        "native/eoc_native/llm/layout_cache.py",
        '        key = f"{model}|{st.st_size}|{st.st_mtime_ns}|{head}|layout {LAYOUT_VERSION}"',
        '        key = f"{model}|{st.st_size}|{head}|layout {LAYOUT_VERSION}"',
    ),
    (
        "a layout cache that cannot be written stops the model loading",
        "native/eoc_native/llm/layout_cache.py",
        "        except OSError:\n            self.close()\n            return  # a read-only or full disk",
        "        except KeyError:\n            self.close()\n            return  # a read-only or full disk",
    ),
]

# A decode step in one compiled call a layer, float16 scales, and eoc's thread count.
BREAKS += [
    (
        "the layer kernel runs where the dispatcher sends a product elsewhere",
        "native/eoc_native/llm/llama.py",
        "            self.dispatcher.backend_for(dw, 1).name == FUSED\n",
        "            True\n",
    ),
    (
        "the layer kernel's products go uncounted",
        "native/eoc_native/llm/llama.py",
        "        calls.update(plan.counts)\n",
        "        pass\n",
    ),
    (
        "the layer kernel drops the attention's residual",
        "native/eoc_native/quant/kernels.py",
        "    q4_matvec(wo[0], wo[1], wo[2], heads, b_o)\n    for i in range(dim):\n"
        "        x[i] += b_o[i]",
        "    q4_matvec(wo[0], wo[1], wo[2], heads, b_o)\n    for i in range(dim):\n"
        "        x[i] = b_o[i]",
    ),
    (
        "the 4-bit kernel takes the block scale for its minimum",
        "native/eoc_native/quant/kernels.py",
        "acc[i] += f16(db[i]) * tmp[i] + f16(mb[i]) * sb",
        "acc[i] += f16(db[i]) * tmp[i] + f16(db[i]) * sb",
    ),
    (
        "the kernels keep their own thread count",
        "native/eoc_native/llm/threads.py",
        "            k.set_num_threads(self.threads)\n        try:",
        "            pass\n        try:",
    ),
    (
        "the BLAS pool keeps its own thread count",
        "native/eoc_native/llm/threads.py",
        "        return self._blas.limit(limits=self.threads) if self._blas else nullcontext()",
        "        return nullcontext()",
    ),
    (
        "a thread count above the kernels' pool is taken",
        "native/eoc_native/llm/threads.py",
        "    if requested > pool:",
        "    if False:",
    ),
    (
        "a layout cache of float32 scales is read",
        "native/eoc_native/llm/layout_cache.py",
        "or d.dtype != np.uint16:",
        "or d.dtype not in (np.uint16, np.float32):",
    ),
]

# The C kernels (ckernels.c through ckernels.py, built by cbuild.py).
BREAKS += [
    (
        "the C 4-bit kernel drops the high nibble",
        "native/eoc_native/quant/ckernels.c",
        "tmp[i] += (float)(v & 15) * lo + (float)(v >> 4) * hi;",
        "tmp[i] += (float)(v & 15) * lo + (float)(v & 15) * hi;",
    ),
    (
        "the C 8-bit kernel forgets the block scale",
        "native/eoc_native/quant/ckernels.c",
        "            for (int64_t i = 0; i < t; i++) acc[i] += h2f(db[i]) * tmp[i];\n",
        "            for (int64_t i = 0; i < t; i++) acc[i] += tmp[i];\n",
    ),
    (
        "the C kernels read a float16 scale without its sign",
        "native/eoc_native/quant/ckernels.c",
        "    bits |= (uint32_t)(h & 0x8000) << 16;\n",
        "",
    ),
    (
        "the C attention skips the newest key",
        "native/eoc_native/quant/ckernels.c",
        "        for (int64_t t = 0; t <= pos; t++) {\n            const float *k",
        "        for (int64_t t = 0; t < pos; t++) {\n            const float *k",
    ),
    (
        "the C layer drops the attention's residual",
        "native/eoc_native/quant/ckernels.c",
        "        q4(&ly->wo, heads, b_o, nth);\n        for (int64_t i = 0; i < dim; i++) x[i] += b_o[i];",
        "        q4(&ly->wo, heads, b_o, nth);\n        for (int64_t i = 0; i < dim; i++) x[i] = b_o[i];",
    ),
    (
        "the C RMSNorm forgets the mean",
        "native/eoc_native/quant/ckernels.c",
        "sqrt(ss / (double)n + (double)eps)",
        "sqrt(ss + (double)eps)",
    ),
    (
        "the C float16 rounding breaks ties upward, not to even",
        "native/eoc_native/quant/ckernels.c",
        "        x += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;",
        "        x += ((uint32_t)(15 - 127) << 23) + 0x1000u;",
    ),
    (
        "the C float16 rounding flushes subnormal halves to zero",
        "native/eoc_native/quant/ckernels.c",
        "        out = (uint16_t)(y - magic_bits);",
        "        out = (uint16_t)(0 * (y - magic_bits));",
    ),
    (
        "the C float16 rounding keeps too large a scale finite",
        "native/eoc_native/quant/ckernels.c",
        "        out = x > 255u << 23 ? 0x7e00 : 0x7c00;",
        "        out = 0x7bff;",
    ),
    (
        "the C Q4_K conversion drops the upper scales' top bits",
        "native/eoc_native/quant/ckernels.c",
        "(p[s + 4] & 0xF) | ((p[s - 4] >> 6) << 4)",
        "(p[s + 4] & 0xF)",
    ),
    (
        "the C Q4_K conversion adds the minimums",
        "native/eoc_native/quant/ckernels.c",
        "hm = f2h(-(dmin * (float)mn));",
        "hm = f2h(dmin * (float)mn);",
    ),
    (
        "the C Q6_K conversion drops the weights' high pairs",
        "native/eoc_native/quant/ckernels.c",
        " | (((qh[l] >> (2 * r)) & 3) << 4)) - 32;",
        ") - 32;",
    ),
    (
        "the C Q6_K conversion takes a neighbour's sub-block scale",
        "native/eoc_native/quant/ckernels.c",
        "(float)scales[8 * h + 2 * r + l / 16]",
        "(float)scales[8 * h + 2 * r]",
    ),
    (
        "the C Q6_K conversion rounds halves down",
        "native/eoc_native/quant/ckernels.c",
        "v = floorf(fabsf(x) + 0.5f);",
        "v = floorf(fabsf(x));",
    ),
    (
        "an array of the wrong type goes to the C kernels",
        "native/eoc_native/quant/ckernels.py",
        "        or a.dtype != dtype\n",
        "",
    ),
    (
        "a cut-off C build is loaded",
        "native/eoc_native/quant/cbuild.py",
        "            if done.returncode == 0 and part.is_file():",
        "            if part.is_file():",
    ),
    (
        "a changed C source reuses the old build",
        "native/eoc_native/quant/cbuild.py",
        '    sources = [f.read_text(encoding="utf-8") for f in (SOURCE, ENCODER)]',
        '    sources = [f.read_text(encoding="utf-8") for f in (ENCODER,)]',
    ),
    (
        "a changed encoder.c reuses the old build",
        "native/eoc_native/quant/cbuild.py",
        '    sources = [f.read_text(encoding="utf-8") for f in (SOURCE, ENCODER)]',
        '    sources = [f.read_text(encoding="utf-8") for f in (SOURCE,)]',
    ),
    (
        "no C compiler stops eoc instead of running numba's kernels",
        "native/eoc_native/quant/__init__.py",
        "        except MissingExtra as exc:\n            _c_refused = exc.reason\n",
        "        except KeyError as exc:\n            _c_refused = str(exc)\n",
    ),
]

BREAKS += [
    (
        "a token's embedding row is read without its scale",
        "native/eoc_native/llm/llama.py",
        "            return (q * scales).reshape(len(ids), self.dim)",
        "            return q.reshape(len(ids), self.dim)",
    ),
]

BREAKS += [
    (
        "the C tiler takes a block's minimum from its scale",
        "native/eoc_native/quant/ckernels.c",
        "                if (mm) mm[i] = (uint16_t)(blk[m_at] | (blk[m_at + 1] << 8));",
        "                if (mm) mm[i] = (uint16_t)(blk[0] | (blk[1] << 8));",
    ),
]

BREAKS += [
    (
        "the user's embedding cache copies the shipped pack vectors",
        "native/eoc_native/semantic/cache.py",
        "            own = [(k, v) for k, v in self._mem.items() if k not in self._shipped]",
        "            own = list(self._mem.items())",
    ),
]

BREAKS += [
    (
        "a layer choice made while autotuning is kept after it",
        "native/eoc_native/llm/llama.py",
        "        if not autotuning:  # the default depends on the weights alone: decided for good\n",
        "        if True:\n",
    ),
]

BREAKS += [
    (
        "one thread's kernel thread count is every thread's",
        "native/eoc_native/quant/ckernels.py",
        "_counts = threading.local()",
        '_counts = type("Shared", (), {})()',
    ),
]

BREAKS += [
    (
        "a tile wider than eoc lays out goes to the C kernels",
        "native/eoc_native/quant/ckernels.py",
        "    if not 0 < t <= MAX_TILE or nb < 1:",
        "    if nb < 1:",
    ),
    (
        "a layer plan lets the down product read past its input",
        "native/eoc_native/quant/ckernels.py",
        "            or not 0 < hidden == self.down_in <= self.n_gu // 2",
        "            or not 0 < hidden <= self.n_gu // 2",
    ),
    (
        "a layer plan writes past its KV cache for a larger n_ctx",
        "native/eoc_native/quant/ckernels.py",
        "        if not 0 <= pos < min(n_ctx, self.cache_positions):",
        "        if not 0 <= pos < n_ctx:",
    ),
]

BREAKS += [
    (
        "an attention head of any size goes to the C kernels",
        "native/eoc_native/quant/ckernels.py",
        "        or not 0 < hd <= MAX_HEAD_DIM  # a head's query and output live on the stack in C\n",
        "",
    ),
]

# Each kernel break runs the test that catches it, not the quant folder's six test files (which
# run both kernel sets): the kernel breaks were a third of the falsifier's time.
_KERNELS = "tests/native/test_llm_weights.py::test_the_kernels_multiply_by_the_dequantized_matrix"
_BLOCKS = "tests/native/test_llm_weights.py::test_blocks_are_the_files_weights"
_LAYER = "tests/native/test_decode_layer.py::"
_ONE_BY_ONE = _LAYER + "test_a_decode_step_in_one_call_a_layer_is_the_products_one_by_one"
_WHOLE_PROMPT = _LAYER + "test_the_layer_kernel_keeps_the_whole_prompt_in_its_cache"
_POOLS = _LAYER + "test_a_forward_runs_on_eocs_thread_count_and_puts_the_pools_back"

_C_KQUANTS = "tests/native/test_kquants.py::test_the_c_kernels_convert_byte_for_byte_as_numpy_does"
FOCUS: dict[str, list[str]] = {
    **{
        name: [_C_KQUANTS]
        for name, *_ in BREAKS
        if name.startswith(("the C float16 rounding", "the C Q4_K conversion", "the C Q6_K"))
    },
    "the 4-bit kernel takes the block scale for its minimum": [_KERNELS],
    "the C 4-bit kernel drops the high nibble": [_KERNELS],
    "the C 8-bit kernel forgets the block scale": [_KERNELS],
    "the C kernels read a float16 scale without its sign": [_KERNELS],
    "Q4_0 read with the wrong offset": [_BLOCKS],
    "the C tiler takes a block's minimum from its scale": [_BLOCKS],
    "the C attention skips the newest key": [_WHOLE_PROMPT],
    "the C RMSNorm forgets the mean": [_WHOLE_PROMPT],
    "the C layer drops the attention's residual": [_ONE_BY_ONE],
    "the layer kernel drops the attention's residual": [_ONE_BY_ONE],
    "the layer kernel's products go uncounted": [_ONE_BY_ONE],
    "the layer kernel runs where the dispatcher sends a product elsewhere": [
        _LAYER + "test_a_product_dispatched_elsewhere_keeps_the_products_one_by_one"
    ],
    "a layer choice made while autotuning is kept after it": [
        _LAYER + "test_a_choice_made_while_autotuning_is_not_kept_after_it"
    ],
    "the kernels keep their own thread count": [_POOLS],
    "the BLAS pool keeps its own thread count": [_POOLS],
    "a thread count above the kernels' pool is taken": [_LAYER + "test_thread_counts_are_checked"],
}
