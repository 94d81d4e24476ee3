/**
 * The in-memory store against the shared store contract; time is the
 * contract's fake clock only.
 */
import { describe, expect, it } from "vitest";
import { MAX_REMEMBERED_CANCELS } from "../../../src/requests/store.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { runStoreContract } from "../../helpers/store-contract.js";

runStoreContract("memory", async ({ now, retentionMs }) => ({
  store: createMemoryStore({ now, retentionMs }),
  elapse: async () => {},
}));

describe("the memory store's remembered cancelled calls", () => {
  it("keeps at most MAX_REMEMBERED_CANCELS: one more forgets the oldest, and the rest stay", async () => {
    const store = createMemoryStore();
    const key = (n: number) => JSON.stringify(["sdk-agent", "s1", n]);
    for (let n = 0; n <= MAX_REMEMBERED_CANCELS; n += 1) await store.announceCancelledCall(key(n), 60_000);
    expect(await store.wasCallCancelled(key(0))).toBe(false);
    expect(await store.wasCallCancelled(key(1))).toBe(true);
    expect(await store.wasCallCancelled(key(MAX_REMEMBERED_CANCELS))).toBe(true);
    await store.close();
  });

  it("drops what has expired as it remembers more, so the oldest live one is kept", async () => {
    const clock = { t: 1_800_000_000_000 };
    const store = createMemoryStore({ now: () => clock.t });
    await store.announceCancelledCall('["sdk-agent","s1","short"]', 1_000);
    await store.announceCancelledCall('["sdk-agent","s1","long"]', 60_000);
    clock.t += 2_000;
    for (let n = 0; n < MAX_REMEMBERED_CANCELS - 1; n += 1) await store.announceCancelledCall(JSON.stringify(["sdk-agent", "s2", n]), 60_000);
    expect(await store.wasCallCancelled('["sdk-agent","s1","short"]')).toBe(false);
    expect(await store.wasCallCancelled('["sdk-agent","s1","long"]')).toBe(true);
    await store.close();
  });
});
