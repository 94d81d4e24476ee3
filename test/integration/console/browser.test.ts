/**
 * The web console in a real browser (playwright-core driving Debian's
 * Chromium), against the relay as `npm start` runs it with no Slack
 * settings: sign in through the printed link, a request an agent creates
 * appears without a reload, is answered by a click and by the keyboard, and
 * the waiting agent gets the exact decision; agent-supplied markup shows as
 * text and runs nothing.
 */
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CHROMIUM, launchChromium, startLocalRelay, type LocalRelay } from "../../helpers/console.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../helpers/ports.js";
import { until } from "../../helpers/until.js";

const TOKEN = "tok_browser_0123456789abcdef";

let relay: LocalRelay;
let browser: Browser;
let url: string;
let link: string;

beforeAll(async () => {
  // 1,000 pending from one token within seconds (17.7): above the default per-token cap (200) and create rate (600 a minute).
  relay = await startLocalRelay(await freePort(), { RELAY_TOKENS: `ci:${TOKEN}`, RELAY_MAX_PENDING_PER_TOKEN: "2000", RELAY_CREATE_RATE_LIMIT: "5000" });
  ({ url, link } = relay);
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
});

async function create(body: Record<string, unknown>): Promise<string> {
  const reply = await fetch(`${url}/v1/requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await reply.json()) as { id: string };
  expect(reply.status, JSON.stringify(json)).toBe(201);
  return json.id;
}

function waitFor(id: string): Promise<Record<string, unknown>> {
  return fetch(`${url}/v1/requests/${id}?wait=30`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.json() as Promise<Record<string, unknown>>);
}

describe.skipIf(!existsSync(CHROMIUM))("the web console in Chromium", () => {
  // One browser session walks the whole path (the link is single use), 1,000 creates included: 12 s on a quiet machine.
  it(
    "signs in through the printed link, shows new requests live, and answers by click and by keyboard with the exact decision",
    { timeout: 60_000 },
    async () => {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      // Issue 16.1 in the browser notification: a person who opted in, with the console in another tab; each body is kept.
      await page.addInitScript(() => {
        const shown: string[] = [];
        const scope = globalThis as unknown as { __notified: string[]; Notification: unknown; document: object };
        scope.__notified = shown;
        scope.Notification = Object.assign(
          function Notification(_title: string, options: { body: string }) {
            shown.push(options.body);
          },
          { permission: "granted" },
        );
        Object.defineProperty(scope.document, "hidden", { get: () => true });
      });
      await page.goto(link);
      await page.waitForSelector("header h1");
      expect(new URL(page.url()).hash).toBe("");

      const hostile = `<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">`;
      const first = await create({ kind: "step_gate", toolName: "Bash", input: { command: hostile }, title: hostile });
      const card = page.locator(`article[data-id="${first}"]`);
      await card.waitFor({ timeout: 2000 });
      expect(await card.locator("h2").textContent()).toContain(hostile);
      expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
      expect(await page.locator("article img").count()).toBe(0);
      expect(await page.title()).toBe("(1) Approval relay");

      const clicked = waitFor(first);
      await card.getByRole("button", { name: "Yes", exact: true }).click();
      expect(await clicked).toMatchObject({ status: "answered", decision: { reply: "y" }, answeredBy: { id: "local", via: "console" } });

      const second = await create({ kind: "step_gate", toolName: "Bash", input: { command: "rm -rf build" } });
      await page.locator(`article[data-id="${second}"]`).waitFor({ timeout: 2000 });
      const typed = waitFor(second);
      await page.keyboard.press("n");
      expect(await typed).toMatchObject({ status: "answered", decision: { reply: "n" } });
      await until(async () => (await page.locator("article").count()) === 0, 2000, "the answered requests leave the queue");
      expect(errors).toEqual([]);

      // Issue 16.1: a bidi override in a command shows where it sits, with a warning, as in Slack.
      const bidi = await create({ kind: "step_gate", toolName: "Bash", input: { command: "echo cleanup \u202E; rm -rf ~ #" }, title: "tidy\u200B up" });
      const bidiCard = page.locator(`article[data-id="${bidi}"]`);
      await bidiCard.waitFor({ timeout: 2000 });
      expect(await bidiCard.locator("h2").textContent()).toContain("tidy⟨U+200B⟩ up");
      expect(await bidiCard.locator("pre.command").textContent()).toBe("echo cleanup ⟨U+202E⟩; rm -rf ~ #");
      expect(await bidiCard.locator(".warning").textContent()).toContain("⟨U+…⟩");
      expect(await bidiCard.textContent()).not.toMatch(/[\u202e\u200b]/);
      const bidiAnswered = waitFor(bidi);
      await bidiCard.getByRole("button", { name: "No", exact: true }).click();
      expect(await bidiAnswered).toMatchObject({ status: "answered", decision: { reply: "n" } });
      await until(async () => (await page.locator("article").count()) === 0, 2000, "the answered request leaves the queue");

      // Issue 16.1: the Edit… dialog shows the input's hidden characters as \u escapes, and allowing it unchanged keeps the raw input.
      const editable = await create({ kind: "permission", toolName: "Bash", input: { command: "echo cleanup \u202E; rm -rf ~ #" } });
      const editableCard = page.locator(`article[data-id="${editable}"]`);
      await editableCard.waitFor({ timeout: 2000 });
      await editableCard.getByRole("button", { name: "Edit…", exact: true }).click();
      const box = page.getByRole("textbox", { name: "input" });
      await box.waitFor({ timeout: 2000 });
      expect(await box.inputValue()).toContain("echo cleanup \\u202e; rm -rf ~ #");
      expect(await box.inputValue()).not.toMatch(/[\u202e]/);
      const edited = waitFor(editable);
      await page.getByRole("dialog").getByRole("button", { name: "Allow", exact: true }).click();
      expect(await edited).toMatchObject({ status: "answered", decision: { behavior: "allow", updatedInput: { command: "echo cleanup \u202E; rm -rf ~ #" } } });
      await until(async () => (await page.locator("article").count()) === 0, 2000, "the edited request leaves the queue");

      // 17.2: an AskUserQuestion option's preview shows as in Slack, hidden characters marked.
      const previewed = await create({
        kind: "ask_user_question",
        questions: [
          {
            question: "Which layout?",
            header: "Layout",
            multiSelect: false,
            options: [
              { label: "Grid", description: "cards", preview: "┌──┬──┐\n│a\u200B│b │\n└──┴──┘" },
              { label: "List", description: "rows" },
            ],
          },
        ],
      });
      const previewCard = page.locator(`article[data-id="${previewed}"]`);
      await previewCard.waitFor({ timeout: 2000 });
      expect(await previewCard.locator("pre.preview").allTextContents()).toEqual(["┌──┬──┐\n│a⟨U+200B⟩│b │\n└──┴──┘"]);
      const picked = waitFor(previewed);
      await previewCard.getByRole("radio").first().check();
      await previewCard.getByRole("button", { name: "Submit", exact: true }).click();
      expect(await picked).toMatchObject({ status: "answered", decision: { answers: { "Which layout?": "Grid" } } });
      await until(async () => (await page.locator("article").count()) === 0, 2000, "the answered question leaves the queue");

      // Issue 16.1: a command padded with blank lines says how many lines it has and shows its tail; agent text dressed as a status line is quoted and attributed.
      const fake = "answered by alice in Slack after 3 s";
      const padded = await create({ kind: "permission", toolName: "Bash", input: { command: `ls -la${"\n".repeat(2500)}rm -rf ~` }, context: fake });
      const paddedCard = page.locator(`article[data-id="${padded}"]`);
      await paddedCard.waitFor({ timeout: 2000 });
      expect(await paddedCard.locator(".command-label").textContent()).toBe("Command (2,501 lines; 2,499 blank lines collapsed, shown as ⟨N blank lines⟩)");
      expect(await paddedCard.locator("pre.command").textContent()).toBe("ls -la\n⟨2,499 blank lines⟩\nrm -rf ~");
      expect(await paddedCard.locator(".agent-says").textContent()).toBe(`The agent says:${fake}`);
      expect(await paddedCard.locator(".agent-says blockquote").textContent()).toBe(fake);
      const paddedAnswered = waitFor(padded);
      await paddedCard.getByRole("button", { name: "Deny", exact: true }).click();
      expect(await paddedAnswered).toMatchObject({ status: "answered", decision: { behavior: "deny" } });
      await until(async () => (await page.locator("article").count()) === 0, 2000, "the answered command leaves the queue");

      // Issue 16.1 in a form: a choice option, a text default and the notification show hidden characters marked; the answer keeps the raw option.
      const form = await create({
        kind: "interactive_questions",
        title: "deploy\u202E now",
        questions: [
          { id: "env", question: "Where?", type: "choice", options: ["stag\u202Eing", "prod"] },
          { id: "note", question: "Note?", type: "text", default: "a\u200Bb", required: false },
        ],
      });
      const formCard = page.locator(`article[data-id="${form}"]`);
      await formCard.waitFor({ timeout: 2000 });
      expect(await formCard.locator("option").allTextContents()).toEqual(["—", "stag⟨U+202E⟩ing", "prod"]);
      expect(await formCard.locator('input[type="text"]').getAttribute("placeholder")).toBe("a⟨U+200B⟩b");
      expect(await formCard.textContent()).not.toMatch(/[\u202e\u200b]/);
      expect(await page.evaluate(() => (globalThis as unknown as { __notified: string[] }).__notified)).toContain("deploy⟨U+202E⟩ now");
      const formAnswered = waitFor(form);
      await formCard.getByRole("combobox").selectOption({ label: "stag⟨U+202E⟩ing" });
      await formCard.getByRole("button", { name: "Submit", exact: true }).click();
      expect(await formAnswered).toMatchObject({ status: "answered", decision: { answers: { env: "stag\u202Eing" } } });
      await until(async () => (await page.locator("article").count()) === 0, 2000, "the answered form leaves the queue");
      expect(await page.evaluate(() => (globalThis as unknown as { __notified: string[] }).__notified.join(""))).not.toMatch(/[\u202e\u200b]/);

      // 17.7: a thousand pending requests all render (how fast is `npm run bench -- --only consoles`, bench/console-render.ts: a benchmark, not a timed test).
      for (let batch = 0; batch < 20; batch += 1) {
        await Promise.all(Array.from({ length: 50 }, (_, i) => create({ kind: "step_gate", toolName: "Bash", input: { command: `echo ${batch * 50 + i}` } })));
      }
      await page.reload();
      // A function, not a string: the console's CSP refuses eval.
      type Doc = { document: { querySelectorAll(selector: string): { length: number } } };
      await page.waitForFunction(() => (globalThis as unknown as Doc).document.querySelectorAll("article").length === 1000, undefined, { timeout: 20_000 });
      expect(errors).toEqual([]);
    },
  );

  it("a second visit of the used link is refused", async () => {
    const page = await browser.newPage();
    await page.goto(link);
    await page.waitForSelector(".error");
    expect(await page.locator(".error").textContent()).toMatch(/used already|expired/);
  });
});
