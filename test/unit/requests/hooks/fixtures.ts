/**
 * The hook inputs Claude Code sends (test/fixtures/claude-code), loaded fresh
 * for each use so a test may change its copy.
 */
import { readFileSync } from "node:fs";

export type HookFixture = "pre-tool-use" | "permission-request";

export function hookFixture(name: HookFixture): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../../../fixtures/claude-code/${name}.json`, import.meta.url), "utf8")) as Record<string, unknown>;
}
