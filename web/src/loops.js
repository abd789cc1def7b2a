// The loop stop of eoc's model runner, for the model that runs in this page: a small model at
// greedy decoding falls into a repetition loop ("a silent witness, a silent witness, ...") and
// never leaves it, so generation stops once the last pieces close one cycle of 1 to `period` of
// them said `repeats` times in a row, spanning at least `minTokens`. The rule and its figures
// are the core's (eoc.stages.degenerate.loop_ends and LOOP_RULE, which the page's Python hands
// to the model); tests/web/test_loop_rule.py runs both on the same cases.

export const DEFAULT_RULE = { period: 32, repeats: 4, min_tokens: 12 };

// Whether the last of `seen` (the pieces streamed so far, one a token) close a loop.
export function loopEnds(seen, rule = DEFAULT_RULE) {
  const n = seen.length;
  const most = Math.min(rule.period, Math.floor(n / rule.repeats));
  for (let period = 1; period <= most; period++) {
    const span = Math.max(period * rule.repeats, rule.min_tokens - (rule.min_tokens % period));
    if (span > n) continue;
    let same = true;
    for (let i = n - span; i < n - period; i++) {
      if (seen[i] !== seen[i + period]) {
        same = false;
        break;
      }
    }
    if (same) return true;
  }
  return false;
}

// The pieces of one answer, watched as they stream: add() says when the answer is in a loop.
export class LoopWatch {
  constructor(rule = DEFAULT_RULE) {
    this.rule = rule;
    this.seen = [];
    this.looped = false;
  }

  add(piece) {
    this.seen.push(piece);
    if (!this.looped && loopEnds(this.seen, this.rule)) this.looped = true;
    return this.looped;
  }
}
