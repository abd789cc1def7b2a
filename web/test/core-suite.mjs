// Run the core pytest suite inside Pyodide under Node and exit with pytest's exit code.
//
//   node web/test/core-suite.mjs        (make pyodide-test builds what it needs first)
//
// The eoc wheel comes from web/dist/wheels (built from this checkout); pytest, hypothesis and
// their pure-Python dependencies come from web/.cache/pyodide-test-wheels (downloaded from PyPI
// for Python 3.14). The repository's tests/ folder is mounted with NODEFS; tests/web (the
// browser end-to-end tests, which drive Chromium from outside) and tests/native (the native extra,
// which cannot exist in the browser) are left out.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "pyodide";

const web = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(web, "..");
const wheelsIn = (dir, pattern) =>
  fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => pattern.test(f)).map((f) => path.join(dir, f)) : [];

const eocWheels = wheelsIn(path.join(web, "dist", "wheels"), /^eoc-.*-py3-none-any\.whl$/);
const testWheels = wheelsIn(path.join(web, ".cache", "pyodide-test-wheels"), /\.whl$/);
if (eocWheels.length !== 1 || testWheels.length === 0) {
  console.error("core-suite: build first (make web, make pyodide-wheels): missing the eoc or test wheels");
  process.exit(2);
}

const started = performance.now();
const pyodide = await loadPyodide({ indexURL: path.join(web, "node_modules", "pyodide") + path.sep });
await pyodide.loadPackage([...eocWheels, ...testWheels]);

// loadPackage never rejects, so check that every distribution is really there (without
// importing the plugins early, which pytest would warn about).
pyodide.runPython(`
import importlib.util
missing = [n for n in ("eoc", "pytest", "hypothesis", "pluggy", "iniconfig", "packaging", "pygments")
           if importlib.util.find_spec(n) is None]
if missing:
    raise SystemExit(f"not installed in Pyodide: {missing}")
`);

pyodide.FS.mkdirTree("/suite/tests");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.join(root, "tests") }, "/suite/tests");
pyodide.FS.mkdirTree("/suite/bench");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.join(root, "bench") }, "/suite/bench");
pyodide.FS.writeFile("/suite/pyproject.toml", fs.readFileSync(path.join(root, "pyproject.toml")));

const booted = performance.now();
const code = pyodide.runPython(`
import os, sys, platform, pytest
os.chdir("/suite")
print(f"core suite inside Pyodide: Python {platform.python_version()} on {sys.platform}/{platform.machine()}")
int(pytest.main(["-p", "no:cacheprovider", "--ignore=tests/web", "--ignore=tests/native", "tests"]))
`);
console.log(
  `pyodide core suite: boot ${((booted - started) / 1000).toFixed(1)} s, ` +
    `tests ${((performance.now() - booted) / 1000).toFixed(1)} s, exit ${code}`,
);
process.exit(code);
