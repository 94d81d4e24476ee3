/**
 * The in-memory sign-in store against the shared sign-in store contract,
 * plus what only it has: a bound on the live entries of each kind (anyone
 * who reaches the relay may start a Sign in with Slack).
 */
import { describe, expect, it } from "vitest";
import { createMemorySignInStore } from "../../../src/store/memory-sign-ins.js";
import { digestOf, runSignInStoreContract, sessionOf, T0 } from "../../helpers/sign-in-store-contract.js";

runSignInStoreContract("memory", async () => createMemorySignInStore());

describe("memory sign-in store specifics", () => {
  it("keeps at most maxPerKind live entries of a kind: one more is refused until one ends, other kinds are not counted", async () => {
    const store = createMemorySignInStore({ maxPerKind: 2 });
    const started = { nonce: "n", expiresAt: T0 + 1000 };
    const [first, second, third] = [digestOf(), digestOf(), digestOf()];
    expect(await store.put("slack", first, started, T0)).toBe(true);
    expect(await store.put("slack", second, { ...started, expiresAt: T0 + 5000 }, T0)).toBe(true);
    expect(await store.put("slack", third, started, T0)).toBe(false);
    expect(await store.get("slack", third, T0)).toBeUndefined();
    expect(await store.put("session", digestOf(), sessionOf(), T0)).toBe(true);
    // The first ends at T0 + 1000: its place is free again.
    expect(await store.put("slack", third, { ...started, expiresAt: T0 + 9000 }, T0 + 1000)).toBe(true);
  });
});
