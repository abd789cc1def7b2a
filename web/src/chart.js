// The per-stage picture: answers (linear bars) and estimated energy (log-scale bars).
// Drawn as SVG by hand: no charting library, nothing fetched.

const SVG = "http://www.w3.org/2000/svg";
export const STAGES = ["cache", "kv", "graph", "neural"];
const COLORS = { cache: "#2e9e6b", kv: "#2f6fde", graph: "#8a4fd8", neural: "#d9534f" };

export function formatEnergy(uj) {
  if (uj >= 1e6) return `${(uj / 1e6).toLocaleString("en-US", { maximumFractionDigits: 2 })} J`;
  if (uj >= 1e3) return `${(uj / 1e3).toLocaleString("en-US", { maximumFractionDigits: 2 })} mJ`;
  return `${uj.toLocaleString("en-US")} µJ`;
}

function el(name, attrs, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

export function renderChart(container, stats) {
  const width = 320, rowH = 46, top = 22, left = 58, barMax = width - left - 70;
  const height = top + rowH * STAGES.length + 8;
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true" });
  const maxCount = Math.max(1, ...STAGES.map((s) => stats[s].count));
  const maxLog = Math.max(7, ...STAGES.map((s) => Math.log10(stats[s].uj + 1)));
  svg.append(el("text", { x: left, y: 12, class: "axis" }, "answers"));
  svg.append(el("text", { x: left + 70, y: 12, class: "axis" }, "estimated energy (log scale)"));
  STAGES.forEach((stage, i) => {
    const y = top + i * rowH;
    const { count, uj } = stats[stage];
    svg.append(el("text", { x: 0, y: y + 20 }, stage));
    const cw = count ? Math.max(2, (count / maxCount) * barMax) : 0;
    svg.append(el("rect", { x: left, y: y + 4, width: cw, height: 12, rx: 3, fill: COLORS[stage], opacity: 0.55 }));
    svg.append(el("text", { x: left + cw + 5, y: y + 14 }, String(count)));
    const ew = uj ? Math.max(2, (Math.log10(uj + 1) / maxLog) * barMax) : 0;
    svg.append(el("rect", { x: left, y: y + 20, width: ew, height: 12, rx: 3, fill: COLORS[stage] }));
    svg.append(el("text", { x: left + ew + 5, y: y + 30 }, uj ? formatEnergy(uj) : "—"));
  });
  container.replaceChildren(svg);
}
