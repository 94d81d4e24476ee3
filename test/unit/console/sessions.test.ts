import { describe, expect, it } from "vitest";
import { ConsoleSessions, csrfMatches } from "../../../src/console/sessions.js";

const PERSON = { id: "local", name: "local console" };

function clock() {
  const c = { t: 1_000_000, now: () => c.t };
  return c;
}

describe("console sign-in links", () => {
  it("a link opens a session once; a second use opens nothing", () => {
    const sessions = new ConsoleSessions();
    const secret = sessions.newLink(PERSON);
    expect(secret).toMatch(/^[\w-]{43}$/);
    const session = sessions.redeem(secret)!;
    expect(session.person).toEqual(PERSON);
    expect(sessions.redeem(secret)).toBeUndefined();
  });

  it("a link past its time opens nothing, and an unknown one neither", () => {
    const c = clock();
    const sessions = new ConsoleSessions({ now: c.now, linkTtlMs: 60_000 });
    const secret = sessions.newLink(PERSON);
    c.t += 60_000;
    expect(sessions.redeem(secret)).toBeUndefined();
    expect(sessions.redeem("made-up")).toBeUndefined();
  });

  it("each link and session is its own random value", () => {
    const sessions = new ConsoleSessions();
    const a = sessions.redeem(sessions.newLink(PERSON))!;
    const b = sessions.redeem(sessions.newLink(PERSON))!;
    expect(a.id).not.toBe(b.id);
    expect(a.csrf).not.toBe(b.csrf);
    expect(a.csrf).not.toBe(a.id);
  });
});

describe("console sessions", () => {
  it("a session is found by its cookie value until it expires or ends", () => {
    const c = clock();
    const sessions = new ConsoleSessions({ now: c.now, sessionTtlMs: 3_600_000 });
    const session = sessions.redeem(sessions.newLink(PERSON))!;
    expect(sessions.get(session.id)).toBe(session);
    expect(sessions.get(undefined)).toBeUndefined();
    expect(sessions.get("")).toBeUndefined();
    c.t += 3_599_999;
    expect(sessions.get(session.id)).toBe(session);
    c.t += 1;
    expect(sessions.get(session.id)).toBeUndefined();
    const other = sessions.redeem(sessions.newLink(PERSON))!;
    sessions.end(other.id);
    expect(sessions.get(other.id)).toBeUndefined();
  });
});

describe("CSRF tokens", () => {
  it("match only the session's own token", () => {
    const sessions = new ConsoleSessions();
    const session = sessions.redeem(sessions.newLink(PERSON))!;
    const other = sessions.redeem(sessions.newLink(PERSON))!;
    expect(csrfMatches(session, session.csrf)).toBe(true);
    expect(csrfMatches(session, other.csrf)).toBe(false);
    expect(csrfMatches(session, undefined)).toBe(false);
    expect(csrfMatches(session, "")).toBe(false);
    expect(csrfMatches(session, `${session.csrf}x`)).toBe(false);
  });
});
