// The kv quality table of bench/kvquality.py for the browser's configuration (hashed n-grams +
// the entity guard, the core's defaults), measured inside Pyodide under Node on the eoc wheel
// the browser installs: the figures the browser itself gives, not the native ones.
//
//   node web/test/kvquality.mjs        (make bench-web-kv builds the wheel first)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "pyodide";

const web = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(web, "..");
const wheels = fs.existsSync(path.join(web, "dist", "wheels"))
  ? fs.readdirSync(path.join(web, "dist", "wheels")).filter((f) => /^eoc-.*-py3-none-any\.whl$/.test(f))
  : [];
if (wheels.length !== 1) {
  console.error("kvquality: build the eoc wheel first (make web)");
  process.exit(2);
}

const pyodide = await loadPyodide({ indexURL: path.join(web, "node_modules", "pyodide") + path.sep });
await pyodide.loadPackage([path.join(web, "dist", "wheels", wheels[0])]);
pyodide.FS.mkdirTree("/suite/bench");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.join(root, "bench") }, "/suite/bench");
const code = pyodide.runPython(`
import platform, sys
sys.path.append("/suite/bench")
sys.argv = ["kvquality", "--no-minilm", *${JSON.stringify(process.argv.slice(2))}]
import kvquality
print(f"inside Pyodide {platform.python_version()} ({sys.platform}/{platform.machine()}), eoc wheel ${wheels[0]}:")
kvquality.main()
0
`);
process.exit(code);
