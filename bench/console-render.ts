/**
 * A full queue in the web console (issue 17.7: 1,000 pending requests render
 * in under 1 s). The relay as `npm start` runs it with no Slack settings (the
 * embedded default: local mode, the memory store); `n` step_gate requests are
 * created, then Debian's Chromium (driven by playwright-core, as the console
 * tests drive it) signs in through the printed link and loads the console
 * `rounds` times. Each load is timed by the page's own clock: from its
 * navigation start to the moment all `n` cards are in the document, so the
 * figure includes fetching the page, its script and the queue, and rendering.
 *
 * A benchmark, not a timed test: the suite checks that all 1,000 render
 * (test/integration/console/browser.test.ts); how fast is measured here, on a
 * machine the bench reports the load of.
 */
import { existsSync } from "node:fs";
import { CHROMIUM, launchChromium, startLocalRelay } from "../test/helpers/console.js";
import { freePort } from "../test/helpers/ports.js";
import { median } from "./stats.js";

export interface ConsoleRenderOptions {
  /** Pending requests in the queue. */
  n: number;
  /** Page loads timed (after one untimed load). */
  rounds: number;
}

export interface ConsoleRenderResult {
  n: number;
  /** Each timed load, ms from navigation start to all `n` cards in the document. */
  loadsMs: number[];
  medianMs: number;
}

/** The target: the whole queue on screen within this many ms of the page's load. */
export const CONSOLE_RENDER_TARGET_MS = 1000;

const TOKEN = "tok_bench_render_0123456789abcdef";

type Log = (line: string) => void;

export async function runConsoleRender(options: ConsoleRenderOptions, log: Log): Promise<ConsoleRenderResult> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  const relay = await startLocalRelay(await freePort(), {
    RELAY_TOKENS: `bench:${TOKEN}`,
    RELAY_MAX_PENDING_PER_TOKEN: String(options.n * 2),
    RELAY_CREATE_RATE_LIMIT: String(options.n * 10),
  });
  const browser = await launchChromium().catch(async (error: unknown) => {
    await relay.stop();
    throw error;
  });
  try {
    log(`local relay at ${relay.url}: creating ${options.n} pending requests`);
    for (let made = 0; made < options.n;) {
      const batch = Math.min(50, options.n - made);
      await Promise.all(Array.from({ length: batch }, (_, i) => create(relay.url, made + i)));
      made += batch;
    }
    const page = await browser.newPage();
    await page.goto(relay.link);
    const loadsMs: number[] = [];
    for (let round = 0; round <= options.rounds; round += 1) {
      if (round > 0) await page.reload({ waitUntil: "commit" });
      const n = options.n;
      // A function, not a string: the console's CSP refuses eval. performance.now() counts from the navigation's start.
      type Page = { document: { querySelectorAll(selector: string): { length: number } }; performance: { now(): number } };
      const done = await page.waitForFunction(
        (count) => {
          const g = globalThis as unknown as Page;
          return g.document.querySelectorAll("article").length === count ? g.performance.now() : false;
        },
        n,
        { timeout: 30_000 },
      );
      const elapsed = (await done.jsonValue()) as number;
      // The first load follows the sign-in redirect and warms the browser's cache: not timed.
      if (round > 0) loadsMs.push(elapsed);
      log(`load ${round}: ${elapsed.toFixed(0)} ms${round === 0 ? " (untimed)" : ""}`);
    }
    return { n: options.n, loadsMs, medianMs: median(loadsMs) };
  } finally {
    await browser.close();
    await relay.stop();
  }
}

async function create(url: string, i: number): Promise<void> {
  const reply = await fetch(`${url}/v1/requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: `echo ${i}` } }),
  });
  if (reply.status !== 201) throw new Error(`create answered ${reply.status}: ${await reply.text()}`);
}
