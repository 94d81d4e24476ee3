/**
 * What `approval-relay ask` writes to stderr while it waits: on a terminal a
 * countdown line rewritten in place and cleared before anything else is
 * said; in a log, plain lines only at milestones.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AskProgress } from "../../../src/cli/progress.js";

const START = Date.parse("2026-12-02T08:00:00.000Z");
const created = (expiresInSeconds: number) => ({ id: "r1", status: "pending" as const, expiresAt: new Date(START + expiresInSeconds * 1000).toISOString() });

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stderr: { isTTY, write: (text: string) => writes.push(text) } };
}

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ["setInterval", "clearInterval", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("AskProgress on a terminal", () => {
  it("shows a countdown rewritten in place every second and clears it before a new line and at the end", () => {
    const { writes, stderr } = stream(true);
    const progress = new AskProgress(stderr, Date.now);
    progress.update(created(3605));
    expect(writes).toEqual([
      "approval-relay: asked as request r1; waiting for an answer until 2026-12-02 09:00:05 UTC (in 1 hour 5 seconds)\n",
      "\r\x1b[2Kapproval-relay: waiting for an answer, 1:00:05 left",
    ]);
    vi.advanceTimersByTime(2000);
    expect(writes.slice(2)).toEqual([
      "\r\x1b[2Kapproval-relay: waiting for an answer, 1:00:04 left",
      "\r\x1b[2Kapproval-relay: waiting for an answer, 1:00:03 left",
    ]);
    progress.update({ ...created(3605), slack: { channel: "C0123456789", ts: "1712345678.000100" } });
    expect(writes.slice(4)).toEqual([
      "\r\x1b[2K",
      "approval-relay: posted in Slack channel C0123456789 (message 1712345678.000100): https://slack.com/app_redirect?channel=C0123456789\n",
      "\r\x1b[2Kapproval-relay: waiting for an answer, 1:00:03 left",
    ]);
    progress.done();
    expect(writes.at(-1)).toBe("\r\x1b[2K");
    const count = writes.length;
    vi.advanceTimersByTime(5000);
    progress.done();
    expect(writes).toHaveLength(count);
  });
});

describe("AskProgress: where the request is", () => {
  it("links the message itself when the relay gives its permalink, and the channel when it gives none or one of another shape", () => {
    const lines = (slack: { channel: string; ts: string; permalink?: string }) => {
      const { writes, stderr } = stream(false);
      const progress = new AskProgress(stderr, Date.now);
      progress.update({ ...created(600), slack });
      progress.done();
      return writes.filter((line) => line.includes("posted in Slack"));
    };
    const ref = { channel: "C0123456789", ts: "1712345678.000100" };
    expect(lines({ ...ref, permalink: "https://acme.slack.com/archives/C0123456789/p1712345678000100" })).toEqual([
      "approval-relay: posted in Slack channel C0123456789 (message 1712345678.000100): https://acme.slack.com/archives/C0123456789/p1712345678000100\n",
    ]);
    for (const permalink of [
      undefined,
      "https://evil.example/\u001b]8;;x",
      "http://acme.slack.com/archives/C0123456789/p1712345678000100",
      "javascript:alert(1)",
    ]) {
      expect(lines({ ...ref, ...(permalink === undefined ? {} : { permalink }) })).toEqual([
        "approval-relay: posted in Slack channel C0123456789 (message 1712345678.000100): https://slack.com/app_redirect?channel=C0123456789\n",
      ]);
    }
  });
});

describe("AskProgress in a log", () => {
  it("writes only whole lines, at the milestones it passes, and says when more time was given", () => {
    const { writes, stderr } = stream(false);
    const progress = new AskProgress(stderr, Date.now);
    progress.update(created(330));
    vi.advanceTimersByTime(300_000);
    expect(writes).toEqual([
      "approval-relay: asked as request r1; waiting for an answer until 2026-12-02 08:05:30 UTC (in 5 minutes 30 seconds)\n",
      "approval-relay: still waiting for an answer, 5 minutes left\n",
      "approval-relay: still waiting for an answer, 1 minute left\n",
      "approval-relay: still waiting for an answer, 30 seconds left\n",
    ]);
    progress.update(created(2130));
    expect(writes.at(-1)).toBe("approval-relay: more time was given: now waiting until 2026-12-02 08:35:30 UTC (in 30 minutes 30 seconds)\n");
    vi.advanceTimersByTime(60_000);
    expect(writes.at(-1)).toBe("approval-relay: still waiting for an answer, 30 minutes left\n");
    progress.done();
    expect(writes.every((text) => text.endsWith("\n") && !text.includes("\r"))).toBe(true);
  });

  it("marks each hour of a long wait", () => {
    const { writes, stderr } = stream(false);
    const progress = new AskProgress(stderr, Date.now);
    progress.update(created(3 * 3600 + 10));
    vi.advanceTimersByTime(2 * 3600 * 1000);
    progress.done();
    expect(writes.slice(1)).toEqual([
      "approval-relay: still waiting for an answer, 3 hours left\n",
      "approval-relay: still waiting for an answer, 2 hours left\n",
    ]);
  });
});
