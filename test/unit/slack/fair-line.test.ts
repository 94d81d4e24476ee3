import { describe, expect, it } from "vitest";
import { FairLine } from "../../../src/slack/fair-line.js";

interface Entry {
  owner: string;
  deadline: number;
  name: string;
}

const SECOND = 1000;

/** Takes every entry, one a second from `start`, and names them in the order taken. */
function drain(line: FairLine<Entry>, start = 0): string[] {
  const taken: string[] = [];
  for (let at = start; line.size > 0; at += SECOND) taken.push(line.take(at, SECOND)!.name);
  return taken;
}

function add(line: FairLine<Entry>, owner: string, names: string[], deadline = 600 * SECOND): void {
  for (const name of names) line.add({ owner, deadline, name });
}

describe("the fair line of one channel's request posts", () => {
  it("keeps arrival order for one token", () => {
    const line = new FairLine<Entry>();
    add(line, "a", ["a1", "a2", "a3"]);
    expect(drain(line)).toEqual(["a1", "a2", "a3"]);
  });

  it("takes turns across tokens, round robin, each token's own in arrival order", () => {
    const line = new FairLine<Entry>();
    add(line, "a", ["a1", "a2", "a3", "a4"]);
    add(line, "b", ["b1", "b2"]);
    add(line, "c", ["c1"]);
    expect(drain(line)).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4"]);
  });

  it("a token that comes behind a flood of 90 from another goes right after the post in progress", () => {
    const line = new FairLine<Entry>();
    add(
      line,
      "looping",
      Array.from({ length: 90 }, (_, i) => `loop ${i + 1}`),
      45 * SECOND,
    );
    expect(line.take(0, SECOND)!.name).toBe("loop 1");
    add(line, "deploy", ["deploy"], 46 * SECOND);
    expect([line.take(SECOND, SECOND)!.name, line.take(2 * SECOND, SECOND)!.name]).toEqual(["deploy", "loop 2"]);
    expect(line.size).toBe(88);
  });

  it("a request that would miss its deadline behind its own token's backlog goes ahead of the requests that can wait", () => {
    const line = new FairLine<Entry>();
    add(
      line,
      "a",
      Array.from({ length: 20 }, (_, i) => `slow ${i + 1}`),
      600 * SECOND,
    );
    add(line, "a", ["urgent"], 10 * SECOND);
    expect(drain(line).slice(0, 3)).toEqual(["urgent", "slow 1", "slow 2"]);
  });

  it("a request with less time left that will still be reached in time keeps its place", () => {
    const line = new FairLine<Entry>();
    add(line, "a", ["slow 1", "slow 2"], 600 * SECOND);
    add(line, "a", ["short"], 30 * SECOND);
    expect(drain(line)).toEqual(["slow 1", "slow 2", "short"]);
  });

  it("counts other tokens' turns when it asks whether a request would be late", () => {
    // Alone, "short" would come third (2 s): in time. Behind b's five it comes sixth... and c's too: late.
    const line = new FairLine<Entry>();
    add(line, "a", ["slow 1", "slow 2"], 600 * SECOND);
    add(line, "a", ["short"], 4 * SECOND);
    add(line, "b", ["b1", "b2", "b3", "b4", "b5"]);
    add(line, "c", ["c1", "c2", "c3"]);
    expect(drain(line).slice(0, 4)).toEqual(["short", "b1", "c1", "slow 1"]);
  });

  it("a token that sends one request each time its last was taken gets no more than its share", () => {
    const line = new FairLine<Entry>();
    add(
      line,
      "flood",
      Array.from({ length: 10 }, (_, i) => `f${i + 1}`),
    );
    const taken: string[] = [];
    let drips = 0;
    for (let i = 0; i < 6; i += 1) {
      if (taken.length === 0 || taken.at(-1)!.startsWith("drip")) add(line, "drip", [`drip ${drips++}`]);
      taken.push(line.take(i * SECOND, SECOND)!.name);
    }
    expect(taken).toEqual(["f1", "drip 0", "f2", "drip 1", "f3", "drip 2"]);
  });

  it("urgent requests of one token never take another token's turn", () => {
    const line = new FairLine<Entry>();
    add(
      line,
      "a",
      Array.from({ length: 30 }, (_, i) => `a${i + 1}`),
      5 * SECOND,
    );
    add(line, "b", ["b1", "b2"], 600 * SECOND);
    expect(drain(line).slice(0, 4)).toEqual(["a1", "b1", "a2", "b2"]);
  });
});
