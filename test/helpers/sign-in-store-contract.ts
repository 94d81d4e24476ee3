/**
 * The SignInStore contract (the web console's sign-in links, sessions and
 * started Sign in with Slack, src/requests/sign-ins.ts), run against the
 * memory store and the Redis store so they stay interchangeable: every
 * field back exactly, each kind apart, expiry by the caller's clock, single
 * use (also when two take at once), removal, keys that are digests, and a
 * bound on the live entries of each kind (anyone who reaches the relay may
 * start a Sign in with Slack).
 */
import { afterEach, describe, expect, it } from "vitest";
import { signInDigest, type SignInEntry, type SignInStore } from "../../src/requests/sign-ins.js";
import { ALICE } from "../fixtures/people.js";

/** Builds a fresh, empty sign-in store (with `maxPerKind` when given); the suite closes it. */
export type MakeSignInStore = (options?: { maxPerKind?: number }) => Promise<SignInStore>;

export const T0 = 1_800_000_000_000;
const MINUTE = 60_000;

let next = 0;
/** A new secret's digest, as the console keys an entry. */
export function digestOf(): string {
  next += 1;
  return signInDigest(`secret-${next}-${Math.random()}`);
}

/** Alice's session from T0 for 12 hours, with `overrides`. */
export function sessionOf(overrides: Partial<SignInEntry<"session">> = {}): SignInEntry<"session"> {
  return { person: { id: ALICE.id, name: "Ålice — 日本", teamId: "T0TEAM" }, role: "answerer", csrf: "csrf-token", expiresAt: T0 + 720 * MINUTE, ...overrides };
}

export function runSignInStoreContract(name: string, makeStore: MakeSignInStore): void {
  describe(`${name} sign-in store contract`, () => {
    const opened: SignInStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });
    async function open(options?: { maxPerKind: number }): Promise<SignInStore> {
      const store = await makeStore(options);
      opened.push(store);
      return store;
    }

    it("gives back every field of a session exactly, as many times as it is read", async () => {
      const store = await open();
      const digest = digestOf();
      const session = sessionOf({ role: "viewer", person: { id: "admin:ops", name: "ops (admin token, read-only)" } });
      expect(await store.put("session", digest, session, T0)).toBe(true);
      expect(await store.get("session", digest, T0 + 1)).toStrictEqual(session);
      expect(await store.get("session", digest, T0 + 2)).toStrictEqual(session);
    });

    it("a link is taken once: the second take, and a read after it, find nothing", async () => {
      const store = await open();
      const digest = digestOf();
      const link = { person: { id: "local", name: "local console" }, expiresAt: T0 + 10 * MINUTE };
      await store.put("link", digest, link, T0);
      expect(await store.take("link", digest, T0 + 1)).toStrictEqual(link);
      expect(await store.take("link", digest, T0 + 2)).toBeUndefined();
      expect(await store.get("link", digest, T0 + 2)).toBeUndefined();
    });

    it("of ten takes at once of one started Sign in with Slack, exactly one gets its nonce", async () => {
      const store = await open();
      const digest = digestOf();
      await store.put("slack", digest, { nonce: "n-0123456789", expiresAt: T0 + 10 * MINUTE }, T0);
      const takes = await Promise.all(Array.from({ length: 10 }, () => store.take("slack", digest, T0 + 1)));
      expect(takes.filter((taken) => taken !== undefined)).toStrictEqual([{ nonce: "n-0123456789", expiresAt: T0 + 10 * MINUTE }]);
    });

    it("an entry past its time is gone for get and take, by the caller's clock, to the millisecond", async () => {
      const store = await open();
      const session = digestOf();
      const link = digestOf();
      await store.put("session", session, sessionOf({ expiresAt: T0 + MINUTE }), T0);
      await store.put("link", link, { person: { id: "local" }, expiresAt: T0 + MINUTE }, T0);
      expect(await store.get("session", session, T0 + MINUTE - 1)).toBeDefined();
      expect(await store.get("session", session, T0 + MINUTE)).toBeUndefined();
      expect(await store.take("link", link, T0 + MINUTE)).toBeUndefined();
    });

    it("kinds are apart: a session's digest opens no link, and a link's no session", async () => {
      const store = await open();
      const digest = digestOf();
      await store.put("session", digest, sessionOf(), T0);
      expect(await store.take("link", digest, T0 + 1)).toBeUndefined();
      expect(await store.get("slack", digest, T0 + 1)).toBeUndefined();
      expect(await store.get("session", digest, T0 + 1)).toBeDefined();
    });

    it("an unknown digest finds nothing, and removing it changes nothing", async () => {
      const store = await open();
      const digest = digestOf();
      expect(await store.get("session", digest, T0)).toBeUndefined();
      expect(await store.take("link", digest, T0)).toBeUndefined();
      await store.remove("session", digest);
      expect(await store.get("session", digest, T0)).toBeUndefined();
    });

    it("a removed session is gone; another session stays", async () => {
      const store = await open();
      const [ended, kept] = [digestOf(), digestOf()];
      await store.put("session", ended, sessionOf(), T0);
      await store.put("session", kept, sessionOf({ csrf: "other" }), T0);
      await store.remove("session", ended);
      expect(await store.get("session", ended, T0 + 1)).toBeUndefined();
      expect(await store.get("session", kept, T0 + 1)).toStrictEqual(sessionOf({ csrf: "other" }));
    });

    it("refuses to keep an entry that does not fit its kind, and keeps nothing", async () => {
      const store = await open();
      const digest = digestOf();
      const broken = { ...sessionOf(), csrf: "" };
      await expect(store.put("session", digest, broken, T0)).rejects.toThrow(/csrf/);
      expect(await store.get("session", digest, T0 + 1)).toBeUndefined();
    });

    it("keeps at most maxPerKind live entries of a kind: one more is refused and nothing kept, until one ends, is taken or removed; other kinds are not counted", async () => {
      const store = await open({ maxPerKind: 2 });
      const started = { nonce: "n", expiresAt: T0 + 1000 };
      const [first, second, third] = [digestOf(), digestOf(), digestOf()];
      expect(await store.put("slack", first, started, T0)).toBe(true);
      expect(await store.put("slack", second, { ...started, expiresAt: T0 + 5000 }, T0)).toBe(true);
      expect(await store.put("slack", third, started, T0)).toBe(false);
      expect(await store.get("slack", third, T0)).toBeUndefined();
      expect(await store.take("slack", third, T0)).toBeUndefined();
      // The same digest again replaces its entry: not a third.
      expect(await store.put("slack", second, { ...started, nonce: "again", expiresAt: T0 + 5000 }, T0)).toBe(true);
      expect(await store.get("slack", second, T0)).toStrictEqual({ nonce: "again", expiresAt: T0 + 5000 });
      expect(await store.put("session", digestOf(), sessionOf(), T0)).toBe(true);
      // The first ends at T0 + 1000: its place is free again.
      expect(await store.put("slack", third, { ...started, expiresAt: T0 + 9000 }, T0 + 1000)).toBe(true);
      expect(await store.put("slack", digestOf(), { ...started, expiresAt: T0 + 9000 }, T0 + 1000)).toBe(false);
      // A taken entry and a removed one free theirs.
      await store.take("slack", third, T0 + 1000);
      const fourth = digestOf();
      expect(await store.put("slack", fourth, { ...started, expiresAt: T0 + 9000 }, T0 + 1000)).toBe(true);
      await store.remove("slack", fourth);
      expect(await store.put("slack", digestOf(), { ...started, expiresAt: T0 + 9000 }, T0 + 1000)).toBe(true);
    });

    it("of twenty puts at once into a kind with room for five, exactly five are kept", async () => {
      const store = await open({ maxPerKind: 5 });
      const digests = Array.from({ length: 20 }, () => digestOf());
      const kept = await Promise.all(digests.map((digest) => store.put("link", digest, { person: { id: "local" }, expiresAt: T0 + MINUTE }, T0)));
      expect(kept.filter(Boolean)).toHaveLength(5);
      const found = await Promise.all(digests.map((digest) => store.get("link", digest, T0 + 1)));
      expect(found.map((entry) => entry !== undefined)).toStrictEqual(kept);
    });
  });
}
