/**
 * Links to the relay's messages for the App Home tab, built rather than
 * asked for: a Slack permalink is the workspace's URL (auth.test `url`)
 * followed by `archives/<channel>/p<ts without its dot>`. chat.getPermalink
 * would cost one Web API call per listed request on every open of the tab
 * (twenty and more per open, and opens are frequent); this costs one
 * auth.test per instance, whose answer is kept for the process's life (a
 * workspace's URL changes only when an admin renames it, and Slack then
 * redirects the old one). A failed auth.test is asked again at most once
 * per `retryMs`; meanwhile the view shows no links, never a wrong one.
 *
 * Only a plain https URL of Slack's shape, a channel id and a ts of
 * Slack's shapes go into a link; anything else gives no link.
 */
import { z } from "zod";
import type { Logger } from "../logger.js";
import type { SlackRef } from "../protocol/request-view.js";
import { settleBefore } from "../protocol/timing.js";

/** The Web API method the links need; a WebClient has it. */
export interface LinksClient {
  auth: { test(): Promise<unknown> };
}

export interface MessageLinksOptions {
  client: LinksClient;
  logger: Pick<Logger, "warn">;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** Longest wait for auth.test (ms); default 1500. */
  callTimeoutMs?: number;
  /** How long after a failed auth.test it is asked again (ms); default a minute. */
  retryMs?: number;
}

/** `https://acme.slack.com/`, `https://acme.enterprise.slack.com`: a host and nothing else. */
const WorkspaceUrl = z.string().regex(/^https:\/\/[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\/?$/);
const AuthReply = z.object({ url: WorkspaceUrl });
const CHANNEL = /^[CDG][A-Z0-9]{2,30}$/;
const TS = /^\d{1,12}\.\d{6}$/;

export class MessageLinks {
  private base: string | undefined;
  private running: Promise<string | undefined> | undefined;
  private failedAt: number | undefined;
  private readonly now: () => number;
  private readonly callTimeoutMs: number;
  private readonly retryMs: number;

  constructor(private readonly options: MessageLinksOptions) {
    this.now = options.now ?? Date.now;
    this.callTimeoutMs = options.callTimeoutMs ?? 1500;
    this.retryMs = options.retryMs ?? 60_000;
  }

  /**
   * A function from a message to its permalink (undefined for a ref of
   * another shape), or undefined while the workspace's URL is not known.
   * Never throws.
   */
  async linker(): Promise<((ref: SlackRef) => string | undefined) | undefined> {
    const base = await this.workspaceUrl();
    return base === undefined ? undefined : (ref) => permalinkOf(base, ref);
  }

  private async workspaceUrl(): Promise<string | undefined> {
    if (this.base !== undefined) return this.base;
    if (this.failedAt !== undefined && this.now() - this.failedAt < this.retryMs) return undefined;
    this.running ??= this.ask().finally(() => {
      this.running = undefined;
    });
    return settleBefore(this.running, { ms: this.callTimeoutMs }, () => undefined);
  }

  private async ask(): Promise<string | undefined> {
    try {
      const reply = AuthReply.safeParse(await this.options.client.auth.test());
      if (!reply.success) throw new Error("auth.test gave no workspace URL of Slack's shape");
      this.base = reply.data.url.endsWith("/") ? reply.data.url : `${reply.data.url}/`;
      return this.base;
    } catch (error) {
      this.failedAt = this.now();
      this.options.logger.warn({ error }, "slack workspace URL unknown: the App Home tab shows no links to messages for now");
      return undefined;
    }
  }
}

/** `<base>archives/<channel>/p<ts digits>`; undefined unless the channel and ts have Slack's shapes. */
export function permalinkOf(base: string, ref: SlackRef): string | undefined {
  if (!CHANNEL.test(ref.channel) || !TS.test(ref.ts)) return undefined;
  return `${base}archives/${ref.channel}/p${ref.ts.replace(".", "")}`;
}
