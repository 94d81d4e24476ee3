/**
 * The soak's checker against recorded histories: a clean one passes, and one
 * with each kind of broken promise planted in it is caught, named by its
 * rule and its request. A checker that let any of these through would let a
 * soak run pass with the relay breaking that promise.
 */
import { describe, expect, it } from "vitest";
import { check, type Rule } from "../../../bench/soak/checker.js";
import type { Click, SoakHistory, SoakRequest } from "../../../bench/soak/history.js";

const T0 = 1_800_000_000_000;
const ALLOW = { behavior: "allow", updatedInput: { command: "deploy" } };
const DENY = { behavior: "deny", message: "Denied by u0s1 in Slack." };

/** A long-polled permission answered Allow by its person 5 s in, its message ended, nothing wrong. */
function answered(marker = "m1", over: Partial<SoakRequest> = {}): SoakRequest {
  return {
    marker,
    id: `id-${marker}`,
    kind: "permission",
    via: "long-poll",
    token: "agent-1",
    createdAt: T0,
    deadline: T0 + 30_000,
    person: { user: `U-${marker}`, expected: ALLOW },
    agent: { at: T0 + 5_100, status: "answered", decision: ALLOW },
    final: { status: "answered", decision: ALLOW, answeredBy: `U-${marker}`, answeredAt: T0 + 5_000 },
    ...over,
  };
}

/** A request nobody answers: it expires at its deadline. */
function expired(marker = "m2", over: Partial<SoakRequest> = {}): SoakRequest {
  return {
    marker,
    id: `id-${marker}`,
    kind: "ask_user_question",
    via: "long-poll",
    token: "agent-1",
    createdAt: T0,
    deadline: T0 + 20_000,
    agent: { at: T0 + 20_400, status: "expired" },
    final: { status: "expired" },
    ...over,
  };
}

function click(marker: string, over: Partial<Click> = {}): Click {
  return { marker, user: `U-${marker}`, how: "button", at: T0 + 4_900, repliedAt: T0 + 5_050, status: 200, ...over };
}

function history(over: Partial<SoakHistory> = {}): SoakHistory {
  return {
    startedAt: T0,
    endedAt: T0 + 120_000,
    graceMs: 3000,
    requests: [answered(), expired()],
    clicks: [click("m1")],
    notices: [],
    opens: [],
    messages: [
      { requestId: "id-m1", channel: "C1", ts: "1.1", postedAt: T0 + 300, endedAt: T0 + 5_200 },
      { requestId: "id-m2", channel: "C1", ts: "1.2", postedAt: T0 + 300, endedAt: T0 + 20_500 },
    ],
    callbacks: [],
    samples: [],
    faults: [],
    ...over,
  };
}

const rules = (h: SoakHistory): Array<[Rule, string]> => check(h).map((v) => [v.rule, v.subject]);

describe("the soak checker", () => {
  it("finds nothing wrong in a run where every promise was kept", () => {
    expect(check(history())).toEqual([]);
  });

  describe("deadlines", () => {
    it("catches a request whose agent heard its expiry past the deadline and the grace", () => {
      expect(rules(history({ requests: [answered(), expired("m2", { agent: { at: T0 + 23_500, status: "expired" } })] }))).toEqual([["deadline", "m2"]]);
    });

    it("catches a request still pending when the run is over", () => {
      const found = rules(history({ requests: [answered(), expired("m2", { agent: undefined, final: { status: "pending" } })] }));
      expect(found).toContainEqual(["deadline", "m2"]);
    });

    it("lets a deadline that fell in a Redis outage end once Redis is back, plus the grace", () => {
      const late = expired("m2", { agent: { at: T0 + 26_000, status: "expired" } });
      const outage = { kind: "redis-restart" as const, from: T0 + 18_000, to: T0 + 24_000 };
      expect(check(history({ requests: [answered(), late], faults: [outage] }))).toEqual([]);
      expect(rules(history({ requests: [answered(), expired("m2", { agent: { at: T0 + 28_000, status: "expired" } })], faults: [outage] }))).toEqual([
        ["deadline", "m2"],
      ]);
    });

    it("lets an outage that starts after the deadline, before the grace ran out, or a time no relay was up, add its length", () => {
      const late = expired("m2", { agent: { at: T0 + 27_000, status: "expired" } });
      const redis = { kind: "redis-restart" as const, from: T0 + 21_000, to: T0 + 25_000 };
      expect(check(history({ requests: [answered(), late], faults: [redis] }))).toEqual([]);
      const allDown = { kind: "all-down" as const, from: T0 + 22_000, to: T0 + 26_000 };
      expect(check(history({ requests: [answered(), late], faults: [allDown] }))).toEqual([]);
      const afterGrace = { kind: "redis-restart" as const, from: T0 + 23_500, to: T0 + 27_500 };
      expect(rules(history({ requests: [answered(), late], faults: [afterGrace] }))).toEqual([["deadline", "m2"]]);
    });
  });

  describe("decisions", () => {
    it("catches an agent told something other than what the relay recorded", () => {
      const request = answered("m1", { agent: { at: T0 + 5_100, status: "answered", decision: DENY } });
      expect(rules(history({ requests: [request, expired()] }))).toEqual([["decision", "m1"]]);
    });

    it("catches a request recorded with another decision than its person gave", () => {
      const request = answered("m1", { agent: { at: T0 + 5_100, status: "answered", decision: DENY }, final: { ...answered().final!, decision: DENY } });
      expect(rules(history({ requests: [request, expired()] }))).toEqual([["decision", "m1"]]);
    });

    it("catches a request answered by someone other than its person", () => {
      const request = answered("m1", { final: { ...answered().final!, answeredBy: "U-someone-else" } });
      expect(rules(history({ requests: [request, expired()] }))).toContainEqual(["decision", "m1"]);
    });

    it("catches an agent told it expired when its person's answer was recorded", () => {
      const request = answered("m1", { agent: { at: T0 + 30_100, status: "expired" } });
      expect(rules(history({ requests: [request, expired()] }))).toEqual([["decision", "m1"]]);
    });

    it("catches a long-poll that broke without an answer (the client library must carry on)", () => {
      const request = expired("m2", { agent: { at: T0 + 9_000, status: "lost", detail: "ECONNRESET" } });
      expect(rules(history({ requests: [answered(), request] }))).toEqual([["decision", "m2"]]);
    });

    it("catches a hook denied unanswered whose request the relay holds answered", () => {
      const request = answered("m1", { via: "hook", agent: { at: T0 + 14_000, status: "denied", detail: "The relay restarted before anyone answered" } });
      expect(rules(history({ requests: [request, expired()] }))).toEqual([["decision", "m1"]]);
    });

    it("accepts a hook call cut by a SIGKILL (Claude Code blocks the tool) and a hook denied unanswered whose request was cancelled", () => {
      const lost = expired("m2", { via: "hook", agent: { at: T0 + 9_000, status: "lost" } });
      const cancelled = expired("m3", { via: "hook", agent: { at: T0 + 9_000, status: "denied" }, final: { status: "cancelled" } });
      const messages = [...history().messages, { requestId: "id-m3", channel: "C1", ts: "1.3", postedAt: T0 + 300, endedAt: T0 + 9_100 }];
      expect(check(history({ requests: [answered(), lost, cancelled], messages }))).toEqual([]);
    });
  });

  describe("clicks", () => {
    it("catches a click that was neither recorded nor told to its person", () => {
      const clicks = [click("m1"), click("m2", { at: T0 + 10_000 })];
      expect(rules(history({ clicks }))).toEqual([["click", "m2"]]);
    });

    it("catches a first click lost silently even when the person's second try was recorded", () => {
      const clicks = [click("m1", { at: T0 + 2_000 }), click("m1")];
      expect(rules(history({ clicks }))).toEqual([["click", "m1"]]);
    });

    it("accepts a click answered with an error, one whose person got an ephemeral, a modal error, and a modal that was opened", () => {
      const clicks = [
        click("m1"),
        click("m2", { at: T0 + 8_000, status: 0 }),
        click("m2", { at: T0 + 9_000 }),
        click("m2", { at: T0 + 10_000, how: "modal", modalError: true }),
        click("m2", { at: T0 + 11_000, how: "open", triggerId: "t1" }),
      ];
      const notices = [{ user: "U-m2", channel: "C1", text: "Not recorded, try again", at: T0 + 9_300, refused: false }];
      expect(check(history({ clicks, notices, opens: [{ triggerId: "t1", at: T0 + 11_100 }] }))).toEqual([]);
    });

    it("catches an Answer… click that opened nothing and told nobody", () => {
      const clicks = [click("m1"), click("m2", { at: T0 + 11_000, how: "open", triggerId: "t1" })];
      expect(rules(history({ clicks, opens: [{ triggerId: "t2", at: T0 + 11_100 }] }))).toEqual([["click", "m2"]]);
    });

    it("accepts a thread reply written after its request's deadline (ignored silently by design), but not one before", () => {
      expect(check(history({ clicks: [click("m1"), click("m2", { how: "thread", at: T0 + 20_010 })] }))).toEqual([]);
      expect(rules(history({ clicks: [click("m1"), click("m2", { how: "thread", at: T0 + 19_990 })] }))).toEqual([["click", "m2"]]);
    });

    it("accepts a thread reply written after its request was answered (the person repeating theirs while a Slack fault delays the update; the 2-minute soak found one), but not one before", () => {
      const repeat = click("m1", { how: "thread", at: T0 + 14_000 });
      expect(check(history({ clicks: [click("m1", { how: "thread" }), repeat] }))).toEqual([]);
      const early = answered("m1", { final: { status: "answered", decision: ALLOW, answeredBy: "U-other", answeredAt: T0 + 15_000 } });
      expect(rules(history({ requests: [early, expired()], clicks: [repeat] }))).toContainEqual(["click", "m1"]);
    });

    it("catches a thread reply written before a cancel that was neither recorded nor told (the 30-minute soak found one)", () => {
      const cancelled = expired("m2", { via: "hook", agent: { at: T0 + 18_257, status: "denied" }, final: { status: "cancelled" } });
      const reply = click("m2", { how: "thread", at: T0 + 18_178 });
      expect(rules(history({ requests: [answered(), cancelled], clicks: [click("m1"), reply] }))).toEqual([["click", "m2"]]);
      const told = [{ user: "U-m2", channel: "C1", text: "This request was cancelled.", at: T0 + 18_400, refused: false }];
      expect(check(history({ requests: [answered(), cancelled], clicks: [click("m1"), reply], notices: told }))).toEqual([]);
    });
  });

  describe("messages", () => {
    it("catches a request with two live messages at once", () => {
      const messages = [...history().messages, { requestId: "id-m1", channel: "C1", ts: "1.9", postedAt: T0 + 2_000, endedAt: T0 + 5_300 }];
      expect(rules(history({ messages }))).toEqual([["messages", "m1"]]);
    });

    it("accepts a message posted again after the first was deleted", () => {
      const messages = [
        { requestId: "id-m1", channel: "C1", ts: "1.1", postedAt: T0 + 300, endedAt: T0 + 1_000 },
        { requestId: "id-m1", channel: "C1", ts: "1.9", postedAt: T0 + 1_500, endedAt: T0 + 5_200 },
        history().messages[1]!,
      ];
      expect(check(history({ messages }))).toEqual([]);
    });

    it("catches a message left with its buttons after its request ended", () => {
      const messages = [history().messages[0]!, { requestId: "id-m2", channel: "C1", ts: "1.2", postedAt: T0 + 300 }];
      expect(rules(history({ messages }))).toEqual([["messages", "m2"]]);
    });
  });

  describe("callbacks", () => {
    const viaCallback = answered("m1", { via: "callback" });
    const delivery = { requestId: "id-m1", at: T0 + 5_100, signatureOk: true, status: "answered", decision: ALLOW };

    it("accepts a callback request whose receiver got its final state, signed", () => {
      expect(check(history({ requests: [viaCallback, expired()], callbacks: [delivery] }))).toEqual([]);
    });

    it("catches a lost callback", () => {
      expect(rules(history({ requests: [viaCallback, expired()], callbacks: [] }))).toEqual([["callback", "m1"]]);
    });

    it("catches a callback with a bad signature, and one that says something else than the relay holds", () => {
      expect(rules(history({ requests: [viaCallback, expired()], callbacks: [{ ...delivery, signatureOk: false }] }))).toEqual([["callback", "m1"]]);
      expect(rules(history({ requests: [viaCallback, expired()], callbacks: [{ ...delivery, decision: DENY }] }))).toEqual([["callback", "m1"]]);
    });
  });

  describe("memory and file descriptors", () => {
    /** A process life of `minutes`, sampled every 5 s, whose fds and heap follow `at(fraction)`. */
    const life = (minutes: number, fds: (f: number) => number, heap: (f: number) => number) =>
      Array.from({ length: (minutes * 60) / 5 }, (_, i) => {
        const f = i / ((minutes * 60) / 5);
        return { life: "a#1", at: T0 + i * 5_000, rssBytes: 90 * 2 ** 20, heapUsedBytes: heap(f), fds: fds(f) };
      });

    it("accepts a process whose readings stay flat (noise included)", () => {
      const samples = life(
        10,
        (f) => 40 + Math.round(Math.sin(f * 40) * 4),
        (f) => (30 + Math.sin(f * 31) * 5) * 2 ** 20,
      );
      expect(check(history({ samples }))).toEqual([]);
    });

    it("catches file descriptors that keep growing (a leaked socket per request)", () => {
      const samples = life(
        10,
        (f) => 40 + Math.round(f * 200),
        () => 30 * 2 ** 20,
      );
      expect(rules(history({ samples }))).toEqual([["resources", "a#1"]]);
    });

    it("catches a heap that keeps growing", () => {
      const samples = life(
        10,
        () => 40,
        (f) => (30 + f * 100) * 2 ** 20,
      );
      expect(rules(history({ samples }))).toEqual([["resources", "a#1"]]);
    });

    it("does not judge a process that lived too short to tell", () => {
      const samples = life(
        1,
        (f) => 40 + Math.round(f * 200),
        () => 30 * 2 ** 20,
      );
      expect(check(history({ samples }))).toEqual([]);
    });
  });
});
