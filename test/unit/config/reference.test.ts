/**
 * docs/configuration-reference.md is written from the variables' entries
 * (src/config/variables.ts) by `npm run docs:config`: the committed file
 * must be the one they write, so a new or changed variable is documented.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configReference, REFERENCE_PATH } from "../../../scripts/config-reference.js";
import { VARIABLE_NAMES } from "../../../src/config/variables.js";

describe("the configuration reference", () => {
  it("docs/configuration-reference.md is the one the variables write (run `npm run docs:config` after changing one)", async () => {
    expect(readFileSync(REFERENCE_PATH, "utf8")).toBe(await configReference());
  });

  it("lists every variable once, with its default or that it is required", async () => {
    const rows = (await configReference()).split("\n").filter((line) => line.startsWith("| `"));
    expect(rows.map((row) => /^\| `(\w+)`/.exec(row)![1])).toEqual(VARIABLE_NAMES);
    expect(rows.find((row) => row.startsWith("| `PORT`"))).toMatch(/\| `3000` +\|/);
    // Unset with SLACK_APP_TOKEN: local mode, so no variable is required.
    expect(rows.find((row) => row.startsWith("| `SLACK_BOT_TOKEN`"))).toMatch(/\(secret\) +\|.*\| none +\|/);
  });
});
