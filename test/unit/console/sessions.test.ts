import { describe, expect, it } from "vitest";
import { ConsoleSessions, csrfMatches, type ConsoleSessionsOptions } from "../../../src/console/sessions.js";
import { createMemorySignInStore } from "../../../src/store/memory-sign-ins.js";
import { statusOf } from "../../../src/http/errors.js";
import { TooManySignInsError } from "../../../src/requests/errors.js";

const PERSON = { id: "local", name: "local console" };

function clock() {
  const c = { t: 1_000_000, now: () => c.t };
  return c;
}

/** Sessions on a memory store of their own. */
function sessionsOf(options: Partial<ConsoleSessionsOptions> = {}) {
  return new ConsoleSessions({ store: createMemorySignInStore(), ...options });
}

describe("console sign-in links", () => {
  it("a link opens a session once; a second use opens nothing", async () => {
    const sessions = sessionsOf();
    const secret = await sessions.newLink(PERSON);
    expect(secret).toMatch(/^[\w-]{43}$/);
    const session = (await sessions.redeem(secret))!;
    expect(session.person).toEqual(PERSON);
    expect(await sessions.redeem(secret)).toBeUndefined();
  });

  it("a link past its time opens nothing, and an unknown one neither", async () => {
    const c = clock();
    const sessions = sessionsOf({ now: c.now, linkTtlMs: 60_000 });
    const secret = await sessions.newLink(PERSON);
    c.t += 60_000;
    expect(await sessions.redeem(secret)).toBeUndefined();
    expect(await sessions.redeem("made-up")).toBeUndefined();
  });

  it("a link made by one relay instance opens a session on another on the same store, and that session is known to both", async () => {
    const store = createMemorySignInStore();
    const a = new ConsoleSessions({ store });
    const b = new ConsoleSessions({ store });
    const session = (await b.redeem(await a.newLink(PERSON)))!;
    expect(await a.get(session.id)).toStrictEqual(session);
  });

  it("each link and session is its own random value", async () => {
    const sessions = sessionsOf();
    const a = (await sessions.redeem(await sessions.newLink(PERSON)))!;
    const b = (await sessions.redeem(await sessions.newLink(PERSON)))!;
    expect(a.id).not.toBe(b.id);
    expect(a.csrf).not.toBe(b.csrf);
    expect(a.csrf).not.toBe(a.id);
  });

  it("when the store holds as many sign-ins as it may, a new link or session is refused with a 429 that says so", async () => {
    const sessions = new ConsoleSessions({ store: createMemorySignInStore({ maxPerKind: 1 }) });
    await sessions.newLink(PERSON);
    await expect(sessions.newLink(PERSON)).rejects.toThrow(TooManySignInsError);
    await sessions.open(PERSON, "answerer");
    const refused = await sessions.open(PERSON, "answerer").catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "relay_rate_limited", kind: "session", retryAfterSeconds: 60 });
    expect(statusOf((refused as TooManySignInsError).code)).toBe(429);
  });
});

describe("console sessions", () => {
  it("a session is found by its cookie value until it expires or ends", async () => {
    const c = clock();
    const sessions = sessionsOf({ now: c.now, sessionTtlMs: 3_600_000 });
    const session = (await sessions.redeem(await sessions.newLink(PERSON)))!;
    expect(await sessions.get(session.id)).toStrictEqual(session);
    expect(await sessions.get(undefined)).toBeUndefined();
    expect(await sessions.get("")).toBeUndefined();
    c.t += 3_599_999;
    expect(await sessions.get(session.id)).toStrictEqual(session);
    c.t += 1;
    expect(await sessions.get(session.id)).toBeUndefined();
    const other = (await sessions.redeem(await sessions.newLink(PERSON)))!;
    await sessions.end(other.id);
    expect(await sessions.get(other.id)).toBeUndefined();
  });
});

describe("CSRF tokens", () => {
  it("match only the session's own token", async () => {
    const sessions = sessionsOf();
    const session = (await sessions.redeem(await sessions.newLink(PERSON)))!;
    const other = (await sessions.redeem(await sessions.newLink(PERSON)))!;
    expect(csrfMatches(session, session.csrf)).toBe(true);
    expect(csrfMatches(session, other.csrf)).toBe(false);
    expect(csrfMatches(session, undefined)).toBe(false);
    expect(csrfMatches(session, "")).toBe(false);
    expect(csrfMatches(session, `${session.csrf}x`)).toBe(false);
  });
});
