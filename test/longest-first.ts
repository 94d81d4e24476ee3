/**
 * The order test files start in: the files that take longest first, so no
 * worker starts a two-minute soak when the others are nearly done. Vitest
 * orders by the durations of the last run, kept in node_modules/.vite; a
 * fresh clone has none, and then it would start the soaks wherever the glob
 * put them. So the files named here go first whatever the cache says, in
 * this order, and the rest in vitest's own order.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Paths from the repository root, longest first: the 2-minute soak, then its planted run. */
export const LONGEST = ["test/integration/soak/soak.test.ts", "test/integration/soak/planted.test.ts"];

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => LONGEST.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
    const first = sorted.filter((spec) => rank(spec) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...first, ...sorted.filter((spec) => rank(spec) < 0)];
  }
}
