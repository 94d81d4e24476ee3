/**
 * The console's live queue after its stream drops and comes back (a load
 * balancer's idle cut, a network blip, a relay restart): the page reads the
 * queue again on every reconnect, so a request created while it had no
 * stream still shows. In a real browser (playwright-core, Debian's
 * Chromium), through a proxy that cuts idle connections, against the relay
 * as `npm start` runs it; the reconnect is held until the request exists,
 * so the gap is certain, not a race.
 */
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launchChromium, startLocalRelay, type LocalRelay } from "../../helpers/console.js";
import { startIdleProxy, type IdleProxy } from "../../helpers/idle-proxy.js";
import { freePort } from "../../helpers/ports.js";

const TOKEN = "tok_reconnect_0123456789abcdef";
/** The proxy cuts a connection with no byte either way for this long (the stream's keepalive comes every 15 s). */
const IDLE_MS = 1500;

let proxy: IdleProxy;
let relay: LocalRelay;
let browser: Browser;

beforeAll(async () => {
  const port = await freePort();
  proxy = await startIdleProxy(`http://127.0.0.1:${port}`, IDLE_MS);
  // The browser reaches the relay by the proxy's address, its public URL.
  relay = await startLocalRelay(port, { RELAY_TOKENS: `ci:${TOKEN}`, RELAY_PUBLIC_URL: proxy.url });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
  await proxy?.close();
});

async function create(command: string): Promise<string> {
  const reply = await fetch(`${relay.url}/v1/requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command } }),
  });
  const json = (await reply.json()) as { id: string };
  expect(reply.status, JSON.stringify(json)).toBe(201);
  return json.id;
}

describe.skipIf(!existsSync(CHROMIUM))("the console's stream drops and comes back", () => {
  it("a request created while the page had no stream shows once it reconnects, and is answered", { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // Each connection of the stream after the first waits here until the test lets it through.
    let streams = 0;
    let reconnecting: () => void = () => {};
    const reconnected = new Promise<void>((resolve) => (reconnecting = resolve));
    let letThrough: () => void = () => {};
    const gate = new Promise<void>((resolve) => (letThrough = resolve));
    await page.route("**/console/api/events", async (route) => {
      streams += 1;
      if (streams > 1) {
        reconnecting();
        await gate;
      }
      await route.continue();
    });

    await page.goto(relay.link.replace(/^https?:\/\/[^/]+/, proxy.url));
    await page.waitForSelector("header h1");
    const first = await create("echo before the cut");
    await page.locator(`article[data-id="${first}"]`).waitFor({ timeout: 2000 });

    // Nothing more comes: the proxy cuts the idle stream and the page tries again.
    await reconnected;
    const missed = await create("echo while the stream was down");
    letThrough();

    const card = page.locator(`article[data-id="${missed}"]`);
    await card.waitFor({ timeout: 5000 });
    const answered = fetch(`${relay.url}/v1/requests/${missed}?wait=30`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.json());
    await card.getByRole("button", { name: "Yes", exact: true }).click();
    expect(await answered).toMatchObject({ status: "answered", decision: { reply: "y" }, answeredBy: { via: "console" } });
    expect(proxy.cuts).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });
});
