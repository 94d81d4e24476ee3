/**
 * The web console's audit log in a real browser (playwright-core driving
 * Debian's Chromium), against the relay as `npm start` runs it in local mode
 * with a small audit cap: when the cap or an agent token's share of it kept
 * events out, the page says so above the list, in the words `GET /v1/audit`
 * and `approval-relay audit` use, as plain text; while nothing was kept out
 * it says nothing.
 */
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CHROMIUM, launchChromium, startLocalRelay, type LocalRelay } from "../../helpers/console.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../helpers/ports.js";

const ALPHA = "tok_audit_alpha_0123456789abcdef";
const BETA = "tok_audit_beta_0123456789abcdef0";

let relay: LocalRelay | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  // The smallest cap: each of the two agent tokens may hold 50 events that record no decision.
  relay = await startLocalRelay(await freePort(), { RELAY_TOKENS: `alpha:${ALPHA},beta:${BETA}`, RELAY_AUDIT_MAX_EVENTS: "100" });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
});

async function create(token: string, command: string): Promise<void> {
  const reply = await fetch(`${relay!.url}/v1/requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command } }),
  });
  expect(reply.status, await reply.text()).toBe(201);
}

describe.skipIf(!existsSync(CHROMIUM))("the web console's audit log in Chromium", () => {
  it("says above the list how many events the audit cap kept out, when and why, as text; says nothing while none were", { timeout: 60_000 }, async () => {
    const page = await browser!.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(relay!.link);
    await page.waitForSelector("header h1");

    await create(BETA, "echo before");
    await page.getByRole("button", { name: "Audit log" }).click();
    await page.locator("table.audit tbody tr").first().waitFor({ timeout: 5000 });
    expect(await page.locator(".audit-dropped").count()).toBe(0);

    // alpha goes past its share: its later `created` events are counted, not written.
    for (let i = 0; i < 60; i += 1) await create(ALPHA, `echo ${i}`);
    await page.reload();
    await page.getByRole("button", { name: "Audit log" }).click();
    const notice = page.locator(".audit-dropped");
    await notice.waitFor({ timeout: 5000 });

    // What the page read, as the API says it (no events were made since).
    type Dropped = { events: number; from: string; to: string; reason: string; causes: Array<{ reason: string; token?: string }> };
    const dropped = await page.evaluate(async () => ((await (await fetch("/console/api/audit?limit=200")).json()) as { dropped?: Dropped }).dropped);
    expect(dropped?.causes).toEqual([expect.objectContaining({ reason: "token_share", token: "alpha" })]);
    const text = (await notice.textContent()) ?? "";
    expect(text).toContain(`${dropped!.events} events were not recorded from ${dropped!.from} to ${dropped!.to}`);
    expect(text).toContain(dropped!.reason);
    // Above the list.
    type Doc = { document: { querySelector(selector: string): unknown } };
    expect(await page.evaluate(() => (globalThis as unknown as Doc).document.querySelector(".audit-dropped + table.audit") !== null)).toBe(true);
    expect(errors).toEqual([]);
  });
});
