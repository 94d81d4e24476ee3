/**
 * The local relay's address card: where a relay started without Slack (local
 * mode, see docs/console.md) listens and the agent token it made, written to
 * `$XDG_STATE_HOME/slack-approval-relay/local.json` (or
 * `~/.local/state/…`) readable by the user alone, and read by
 * `approval-relay ask`, `hook` and the client library when neither RELAY_URL
 * nor RELAY_TOKEN is set. Here, with the wire contract, because the relay
 * writes it and the client library (which may import nothing of the server)
 * reads it.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

export const LocalRelay = z.object({
  url: z.string().regex(/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+$/),
  token: z.string().min(16),
});
export type LocalRelay = z.infer<typeof LocalRelay>;

/** Where the card lives: under XDG_STATE_HOME when it is an absolute path (the XDG rule), else ~/.local/state. */
export function localRelayPath(stateHome?: string): string {
  const base = stateHome && stateHome.startsWith("/") ? stateHome : join(homedir(), ".local", "state");
  return join(base, "slack-approval-relay", "local.json");
}

/** The card, or undefined when there is none or it is not one (a relay never started locally, or a file of something else). */
export function readLocalRelay(stateHome?: string): LocalRelay | undefined {
  let text: string;
  try {
    text = readFileSync(localRelayPath(stateHome), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = LocalRelay.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the card with mode 0600 in a directory of mode 0700 (both made so when they already exist); returns its path. */
export function writeLocalRelay(card: LocalRelay, stateHome?: string): string {
  const path = localRelayPath(stateHome);
  const dir = join(path, "..");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  try {
    chmodSync(path, 0o600); // an older card's mode, before new contents go in
  } catch {
    // none yet: writeFileSync makes it with 0600
  }
  writeFileSync(path, `${JSON.stringify(card, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}
