import { describe, expect, it } from "vitest";
import { parseHookQuery } from "../../../../src/requests/hooks/query.js";
import { RelayError } from "../../../../src/requests/errors.js";

function problem(query: string): { path: string; message: string } {
  try {
    parseHookQuery(query, 600);
  } catch (error) {
    if (error instanceof RelayError && error.code === "relay_invalid_request") return (error.details as Array<{ path: string; message: string }>)[0]!;
    throw error;
  }
  throw new Error("accepted");
}

describe("parseHookQuery", () => {
  it("uses the configured default timeout and no channel when the URL gives none", () => {
    expect(parseHookQuery("", 600)).toEqual({ timeoutSeconds: 600 });
  });

  it("reads the hook's timeout and the channel", () => {
    expect(parseHookQuery("timeout=30&channel=C0DEPLOYS99", 600)).toEqual({ timeoutSeconds: 30, channel: "C0DEPLOYS99" });
    expect(parseHookQuery("timeout=3", 600).timeoutSeconds).toBe(3);
    expect(parseHookQuery("timeout=86400", 600).timeoutSeconds).toBe(86_400);
  });

  it("refuses a timeout that is not a whole number of seconds from 3 to 86400, naming timeout", () => {
    for (const bad of ["0", "2", "86401", "1e3", "-5", "30.5", "abc", "", "%20"]) {
      expect([bad, problem(`timeout=${bad}`).path]).toEqual([bad, "timeout"]);
    }
    expect(problem("timeout=2").message).toMatch(/from 3 to 86400/);
  });

  it("refuses a channel that is not a Slack id, naming channel", () => {
    for (const bad of ["general", "#deploys", "c0123456789", ""]) expect([bad, problem(`channel=${encodeURIComponent(bad)}`).path]).toEqual([bad, "channel"]);
  });

  it("reads labels from label.<key>= parameters, values percent-decoded", () => {
    expect(parseHookQuery("timeout=30&label.env=prod&label.team%2Fowner=pay%3Aments", 600)).toEqual({
      timeoutSeconds: 30,
      labels: { env: "prod", "team/owner": "pay:ments" },
    });
    expect(parseHookQuery("label.empty=", 600).labels).toEqual({ empty: "" });
  });

  it("refuses a malformed label parameter, naming it", () => {
    expect(problem("label.=prod")).toEqual({ path: "label.", message: "label keys must be 1 to 64 letters (a–z), digits, '.', '_', '-', ':' or '/'" });
    expect(problem("label.my%20env=prod").path).toBe("label.my env");
    expect(problem(`label.${"k".repeat(65)}=v`).path).toBe(`label.${"k".repeat(65)}`);
    expect(problem(`label.env=${"v".repeat(257)}`).path).toBe("label.env");
    expect(problem("label.env=prod&label.env=dev")).toEqual({ path: "label.env", message: "give it once" });
    const many = Array.from({ length: 21 }, (_, i) => `label.k${i}=v`).join("&");
    expect(problem(many)).toEqual({ path: "label", message: "at most 20 labels" });
  });

  it("still refuses an unknown parameter, offering the label form", () => {
    expect(problem("labels=env%3Dprod")).toEqual({
      path: "labels",
      message: "is not a query parameter of this hook URL (use timeout, channel, requestedBy or label.<key>)",
    });
  });

  it("reads requestedBy as a Slack user id, or else as an email (percent-decoded)", () => {
    expect(parseHookQuery("requestedBy=U0123ABCD", 600).requestedBy).toEqual({ slackUserId: "U0123ABCD" });
    expect(parseHookQuery("requestedBy=W0GRIDUSER1", 600).requestedBy).toEqual({ slackUserId: "W0GRIDUSER1" });
    expect(parseHookQuery("timeout=30&requestedBy=alice%2Bdeploy%40example.com", 600)).toEqual({
      timeoutSeconds: 30,
      requestedBy: { email: "alice+deploy@example.com" },
    });
  });

  it("refuses a requestedBy that is neither a Slack user id nor an email, naming requestedBy", () => {
    for (const bad of ["alice", "@alice", "u0123abcd", "", "alice@", `${"a".repeat(250)}@example.com`]) {
      expect([bad, problem(`requestedBy=${encodeURIComponent(bad)}`)]).toEqual([
        bad,
        { path: "requestedBy", message: "must be a Slack user id such as U0123ABCD or an email address" },
      ]);
    }
    expect(problem("requestedBy=U0123ABCD&requestedBy=U0456EFGH")).toEqual({ path: "requestedBy", message: "give it once" });
  });

  it("refuses a parameter given twice", () => {
    expect(problem("timeout=30&timeout=600")).toEqual({ path: "timeout", message: "give it once" });
  });

  it("refuses an unknown parameter, so a misspelt timeout is never silently replaced by the default", () => {
    expect(problem("timout=30")).toEqual({ path: "timout", message: expect.stringMatching(/not a query parameter.*timeout, channel/) });
    expect(problem("wait=30").path).toBe("wait");
  });
});
