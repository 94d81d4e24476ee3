/**
 * The registry of held long-polls: one waiter per id kept as it is, several
 * in an array; wake reaches every waiter of its id even when one of them
 * ends (and leaves the registry) as it is woken.
 */
import { describe, expect, it } from "vitest";
import type { RequestRecord } from "../../../src/requests/model.js";
import { Waiters, type Waiter } from "../../../src/requests/waiters.js";

function waiter(id: string, onWake: (self: Waiter) => void = () => {}) {
  const woken: (RequestRecord | undefined)[] = [];
  const self: Waiter & { woken: typeof woken } = {
    id,
    woken,
    wake(record) {
      woken.push(record);
      onWake(self);
    },
  };
  return self;
}

const ENDED = { id: "req-1", status: "answered" } as RequestRecord;

describe("Waiters", () => {
  it("counts what it holds, one or several per id, and forgets each once", () => {
    const waiters = new Waiters();
    const [a, b, c, other] = [waiter("req-1"), waiter("req-1"), waiter("req-1"), waiter("req-2")];
    for (const w of [a, b, c, other]) waiters.add(w);
    expect(waiters.size).toBe(4);
    waiters.remove(b);
    waiters.remove(b);
    expect(waiters.size).toBe(3);
    waiters.wake("req-1", ENDED);
    expect([a.woken, b.woken, c.woken, other.woken]).toEqual([[ENDED], [], [ENDED], []]);
    waiters.remove(a);
    waiters.remove(c);
    waiters.remove(other);
    expect(waiters.size).toBe(0);
    waiters.wake("req-1");
    expect(a.woken).toHaveLength(1);
  });

  it("wakes every waiter of the id when each leaves the registry as it is woken", () => {
    const waiters = new Waiters();
    const leaves = (self: Waiter) => waiters.remove(self);
    const held = [waiter("req-1", leaves), waiter("req-1", leaves), waiter("req-1", leaves)];
    for (const w of held) waiters.add(w);
    waiters.wake("req-1", ENDED);
    expect(held.map((w) => w.woken.length)).toEqual([1, 1, 1]);
    expect(waiters.size).toBe(0);
  });

  it("wakeAll wakes every id's waiters, without a record", () => {
    const waiters = new Waiters();
    const leaves = (self: Waiter) => waiters.remove(self);
    const held = [waiter("req-1", leaves), waiter("req-2", leaves), waiter("req-2", leaves), waiter("req-3")];
    for (const w of held) waiters.add(w);
    waiters.wakeAll();
    expect(held.map((w) => w.woken)).toEqual([[undefined], [undefined], [undefined], [undefined]]);
    expect(waiters.size).toBe(1);
  });
});
