"""Falsify breaks: the native energy counters."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "rapl wrap not corrected",
        "native/eoc_native/counters/rapl.py",
        "                    delta += zone.max_range_uj  # one wrap",
        "                    pass",
    ),
    (
        "rapl second-wrap window accepted",
        "native/eoc_native/counters/rapl.py",
        "                if zone.max_range_uj and elapsed_s * zone.max_power_w * 1e6 >= zone.max_range_uj:",
        "                if False:",
    ),
    (
        "ioreport frozen CPU rail accepted",
        "native/eoc_native/counters/ioreport.py",
        "            if not cpu or not any(cpu.values()):",
        "            if False:",
    ),
    (
        "RAPL tree outside /sys labelled hardware",
        "native/eoc_native/counters/rapl.py",
        '            self.kind, self.kind_reason = CounterKind.FAKE, f"{self.name}: {why}"',
        '            self.kind, self.kind_reason = CounterKind.HARDWARE, ""',
    ),
    (
        "injected perf events labelled hardware",
        "native/eoc_native/counters/perf.py",
        "        self.kind = CounterKind.FAKE if self.kind_reason else CounterKind.HARDWARE",
        "        self.kind = CounterKind.HARDWARE",
    ),
    (
        "replayed IOReport labelled vendor-model",
        "native/eoc_native/counters/ioreport.py",
        "        self.kind = CounterKind.VENDOR_MODEL if sampler is None else CounterKind.FAKE",
        "        self.kind = CounterKind.VENDOR_MODEL",
    ),
    (
        "a caller's opener reaches the hardware kind",
        "native/eoc_native/counters/rapl.py",
        "        elif caller_opened:",
        "        elif False:",
    ),
    (
        "a powercap path is trusted without checking the open file",
        "native/eoc_native/counters/rapl.py",
        '        why = next((w for w in map(powercap_energy_file, self._fds) if w), "")',
        '        why = ""',
    ),
    (
        "a file outside sysfs passes for a powercap file",
        "native/eoc_native/counters/provenance.py",
        "    if st.st_dev != sysfs:",
        "    if False:",
    ),
    (
        "a perf event is not checked against the power PMU",
        "native/eoc_native/counters/perf.py",
        "            else power_pmu_event(",
        '            else "" and power_pmu_event(',
    ),
    (
        "the power PMU's type is not compared",
        "native/eoc_native/counters/provenance.py",
        "    if str(pmu_type) != real_type:",
        "    if False:",
    ),
    (
        "a module named pynvml is taken for NVML",
        "native/eoc_native/counters/nvml.py",
        "        self.kind_reason = nvml_module(self._nv)",
        '        self.kind_reason = ""',
    ),
    (
        "the NVML library is not checked",
        "native/eoc_native/counters/nvml.py",
        "            loaded = nvml_library_loaded(self._nv)",
        '            loaded = ""',
    ),
    (
        "a pynvml function compiled under the real file's name passes as its own",
        "native/eoc_native/counters/provenance.py",
        "            or code.co_code != ref.co_code\n            or code.co_names != ref.co_names\n",
        "",
    ),
    (
        "a module given the real pynvml.py's name passes as the installed one",
        "native/eoc_native/counters/provenance.py",
        "        if not _own_code(getattr(module, name, None), name, vars(module), here, reference):",
        "        if False:",
    ),
    (
        "a library named libnvidia-ml passes without NVML's functions",
        "native/eoc_native/counters/provenance.py",
        "        if missing:\n",
        "        if False:\n",
    ),
]
