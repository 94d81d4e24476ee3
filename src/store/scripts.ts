/**
 * Loads the Lua transition scripts (./lua, one file per transition, named
 * with its key count) and registers them on an ioredis client with
 * `defineCommand`, so each runs by EVALSHA with a fallback to EVAL.
 *
 * A line `--- @include "<name>"` in a script is replaced with
 * ./lua/includes/<name>.lua: the helpers every transition shares.
 * The files are found next to this module, in src/ (tsx, vitest) and in dist/
 * (copied there by scripts/copy-assets.mjs).
 */
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

const FILES = {
  create: "create-8.lua",
  answer: "answer-8.lua",
  expire: "expire-8.lua",
  cancel: "cancel-8.lua",
  fail: "fail-8.lua",
  approve: "approve-8.lua",
  setSlack: "set-slack-6.lua",
  extend: "extend-3.lua",
  addOtherMessage: "add-other-message-3.lua",
  claimEntries: "claim-entries-2.lua",
  retryEntry: "retry-entry-2.lua",
  completeEntry: "complete-entry-2.lua",
  completePendingUpdate: "complete-pending-update-3.lua",
  createRule: "create-rule-4.lua",
  useRule: "use-rule-1.lua",
  revokeRule: "revoke-rule-3.lua",
  setTally: "set-tally-1.lua",
  appendAudit: "append-audit-3.lua",
  putSignIn: "put-sign-in-2.lua",
  putSession: "put-session-4.lua",
  takeSignIn: "take-sign-in-3.lua",
} as const;

export type ScriptName = keyof typeof FILES;
export type ScriptArg = string | number;
/** Runs one script; resolves to its raw reply (parsed in codes.ts). */
export type RunScript = (keys: readonly string[], args: readonly ScriptArg[]) => Promise<unknown>;
export type Scripts = Record<ScriptName, RunScript>;

const INCLUDE = /^--- @include "([\w-]+)"$/gm;
/** Where the .lua files sit next to this module (src/store/lua, or dist/store/lua once built). */
const LUA_DIR = new URL("./lua/", import.meta.url);

/** The script's text with its includes spliced in, and its key count. */
function loadScript(name: ScriptName): { lua: string; numberOfKeys: number } {
  const file = FILES[name];
  const count = /-(\d+)\.lua$/.exec(file)?.[1];
  if (count === undefined) throw new Error(`Lua script ${file} must be named with its key count`);
  const source = readFileSync(new URL(file, LUA_DIR), "utf8");
  const lua = source.replace(INCLUDE, (_line, include: string) => readFileSync(new URL(`includes/${include}.lua`, LUA_DIR), "utf8"));
  return { lua, numberOfKeys: Number(count) };
}

export type ScriptSources = Record<ScriptName, { lua: string; numberOfKeys: number }>;

/** Reads every script; throws when a file is missing (e.g. not copied to dist). */
export function loadScripts(): ScriptSources {
  const sources = {} as ScriptSources;
  for (const name of Object.keys(FILES) as ScriptName[]) sources[name] = loadScript(name);
  return sources;
}

/** Defines every script on `redis` (as `relay<Name>`) and returns callers for them. */
export function registerScripts(redis: Pick<Redis, "defineCommand">, sources: ScriptSources): Scripts {
  const scripts = {} as Scripts;
  const commands = redis as unknown as Record<string, (...args: ScriptArg[]) => Promise<unknown>>;
  for (const name of Object.keys(FILES) as ScriptName[]) {
    const { lua, numberOfKeys } = sources[name];
    const command = `relay${name[0]!.toUpperCase()}${name.slice(1)}`;
    redis.defineCommand(command, { lua, numberOfKeys });
    scripts[name] = (keys, args) => {
      if (keys.length !== numberOfKeys) {
        return Promise.reject(new Error(`${FILES[name]} takes ${numberOfKeys} keys, got ${keys.length}`));
      }
      return commands[command]!(...keys, ...args);
    };
  }
  return scripts;
}
