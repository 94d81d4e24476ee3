/**
 * Summaries for the benchmark: percentiles of latency samples, the median of
 * several rounds (machines here are shared and noisy, so one round proves
 * little) and number formatting for the report.
 */

export interface LatencySummary {
  /** Samples measured. */
  n: number;
  /** Milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array; q in [0, 100]. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((q / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length,
  };
}

/**
 * The round whose `key` is the median of all rounds (the lower middle one
 * for an even count): a real round, so its percentiles belong together.
 */
export function medianRound<T>(rounds: readonly T[], key: (round: T) => number): T {
  if (rounds.length === 0) throw new Error("medianRound: no rounds");
  const sorted = [...rounds].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Milliseconds with precision that suits their size. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return "–";
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

export function mb(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / 1024 / 1024).toFixed(1) : "–";
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : "–";
}

/** A target met or missed. */
export function mark(ok: boolean): string {
  return ok ? "✅" : "❌";
}
