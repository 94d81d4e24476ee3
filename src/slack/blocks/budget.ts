/**
 * Sharing a message's text budget among the agent-supplied texts it shows.
 * Each text is a leaf with a weight and a cap; short leaves are shown in full
 * and the long ones share what is left in proportion to their weights, so a
 * huge tool input never crowds out the context, and a short one leaves room
 * for everything else.
 */
import type { Encoding } from "./escape.js";
import { encodedSize, fit, type Fitted } from "./text.js";
import { CODE_PER_SECTION } from "./limit-values.js";

export interface Leaf {
  /** Unique within a message, e.g. "context" or "q0_o1_desc". */
  key: string;
  raw: string;
  encoding: Encoding;
  /** Share of the budget relative to other leaves. */
  weight: number;
  /** Most encoded characters this leaf may take (it shares a section with others). */
  cap: number;
  /** Most encoded characters per section; code longer than this spans several sections. */
  perChunk?: number;
  /** Characters past `raw` that were never built (a huge diff): the leaf is always cut, and its note counts them. */
  hidden?: number;
}

function perChunkOf(leaf: Leaf): number {
  return leaf.perChunk ?? (leaf.encoding === "code" ? CODE_PER_SECTION : leaf.cap);
}

/** Max-min fair, weighted: every leaf gets what it needs or its fair share of what remains. */
export function allocate(leaves: Leaf[], budget: number): Map<string, number> {
  const result = new Map<string, number>();
  let remaining = Math.max(0, budget);
  let open = leaves.map((leaf) => ({
    leaf,
    want: leaf.hidden ? Math.min(leaf.cap, remaining + 1) : encodedSize(leaf.raw, leaf.encoding, perChunkOf(leaf), Math.min(leaf.cap, remaining + 1)),
  }));
  while (open.length > 0) {
    const weights = open.reduce((sum, { leaf }) => sum + leaf.weight, 0);
    const unit = remaining / weights;
    const satisfied = open.filter(({ leaf, want }) => want <= unit * leaf.weight);
    if (satisfied.length === 0) {
      for (const { leaf } of open) result.set(leaf.key, Math.floor(unit * leaf.weight));
      break;
    }
    for (const { leaf, want } of satisfied) {
      result.set(leaf.key, want);
      remaining -= want;
    }
    open = open.filter((entry) => !satisfied.includes(entry));
  }
  return result;
}

/**
 * Hands out the fitted text of each leaf while a message is built, and
 * remembers whether anything was cut (then the message offers the full input).
 */
export class Fitter {
  private readonly leaves: Map<string, Leaf>;
  private cutAny = false;

  /** `allotments` undefined: every leaf renders empty (used to measure the rest of a message). */
  constructor(
    leaves: Leaf[],
    private readonly allotments?: Map<string, number>,
  ) {
    this.leaves = new Map(leaves.map((leaf) => [leaf.key, leaf]));
  }

  get cut(): boolean {
    return this.cutAny;
  }

  /** Encoded text of a text leaf ("" when absent). */
  text(key: string): string {
    return this.parts(key)[0] ?? "";
  }

  /** Section texts of a code leaf (none when absent). */
  code(key: string): string[] {
    return this.parts(key);
  }

  private parts(key: string): string[] {
    const leaf = this.leaves.get(key);
    if (!leaf || !this.allotments) return [];
    const fitted: Fitted = fit(leaf.raw, leaf.encoding, this.allotments.get(key) ?? 0, perChunkOf(leaf), leaf.hidden);
    if (fitted.cut) this.cutAny = true;
    return fitted.parts;
  }
}
