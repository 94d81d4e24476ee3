/**
 * What every Slack listener group needs: its dependencies, the person
 * behind an interaction, and the time a listener may give the store before
 * it must ack (Slack waits 3 s for the ack, network included). Whether an
 * interaction comes from the request's own message is the domain's rule
 * (src/requests/from-message.ts).
 */
import type { webApi } from "@slack/bolt";
import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { Person, SlackRef } from "../../protocol/request-view.js";
import type { RequestRecord } from "../../requests/model.js";
import { answererIn, type Answerer } from "../../requests/policy.js";
import type { RequestService } from "../../requests/service.js";
import type { HomeTab } from "../home-tab.js";
import { settleBefore } from "../../protocol/timing.js";

export interface ListenerDeps {
  service: Pick<RequestService, "get" | "requestOnMessage" | "answerFromMessage" | "extendFromMessage" | "allowForAWhile" | "refusalFor">;
  /** Bot-token WebClient for views.open / views.update / chat.postEphemeral. */
  client: webApi.WebClient;
  logger: Logger;
  /** The App Home tab: told when a person answered, so their view is refreshed if they opened it lately; absent: no App Home. */
  home?: Pick<HomeTab, "acted">;
}

/** `user` of block_actions and view_submission payloads. */
export const SlackUser = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  username: z.string().optional(),
  /** The person's own workspace: another than the relay's marks a Slack Connect guest. */
  team_id: z.string().optional(),
});
export type SlackUser = z.infer<typeof SlackUser>;

export function personOf(user: SlackUser): Person {
  const name = user.name ?? user.username;
  return name ? { id: user.id, name } : { id: user.id };
}

/** The person behind an interaction, with their workspace for the approver check (requests/policy.ts); no team_id places them nowhere. */
export function answererOf(user: SlackUser): Answerer {
  return answererIn(personOf(user), user.team_id);
}

/**
 * The request's message a person acted on (a click's or a modal's message,
 * which the service found to be one of the request's own): where their
 * notice goes and what a modal is tied to. It may be a copy the store had
 * not recorded, adopted on the click (the post's own reply still on its way,
 * or its store write waiting out a Redis outage): the request may have no
 * main message yet then. Without one, the request's main message.
 */
export function actedOn(record: RequestRecord, where: Partial<SlackRef>): SlackRef {
  if (where.channel !== undefined && where.ts !== undefined) return { channel: where.channel, ts: where.ts };
  if (record.slack) return record.slack;
  throw new Error(`request ${record.id}: no message to act on`);
}

/** The name used in "Denied by <name> in Slack.": Slack's user name, else the id. */
export function displayName(user: SlackUser): string {
  return user.name ?? user.username ?? user.id;
}

/**
 * Store budgets before an ack, in milliseconds: reading the request, and
 * everything (read and transition) together. Past them the person is told
 * their answer was not recorded, well inside Slack's 3 s.
 */
export const STORE_BUDGET = { readMs: 1500, totalMs: 2500 } as const;

export type Bounded<T> = { ok: true; value: T } | { ok: false; reason: "timeout" | "error"; error?: unknown };

/**
 * `task`'s value if it settles within `ms`; a task that throws or is still
 * running then is "not done" (and runs on: a late store reply is not waited for).
 */
export function withinBudget<T>(task: Promise<T>, ms: number): Promise<Bounded<T>> {
  const settled = task.then(
    (value): Bounded<T> => ({ ok: true, value }),
    (error: unknown): Bounded<T> => ({ ok: false, reason: "error", error }),
  );
  return settleBefore(settled, { ms: Math.max(0, ms) }, (): Bounded<T> => ({ ok: false, reason: "timeout" }));
}

/** What a person whose answer could not be recorded is told (ephemeral for clicks, next to the field in modals). */
export const NOT_RECORDED =
  "⚠️ Your answer was not recorded: the relay could not save it just now. Nothing changed and the buttons still work; try again in a moment.";
export const NOT_RECORDED_FIELD = "Your answer was not recorded: the relay could not save it just now. Submit again in a moment.";
/** What a person whose thread reply could not be read or saved is told (the relay cannot know then whether it was an answer). */
export const NOT_RECORDED_REPLY =
  "⚠️ Your reply was not recorded: the relay could not read or save it just now. If it answers a request, nothing changed; send it again in a moment.";
export const NOT_OPENED = "⚠️ The relay could not read this request just now, so nothing opened. Try again in a moment.";

/** Bolt's ack, for a block action (no response) or a view submission (an optional response_action). */
export type Ack<R = void> = (response?: R) => Promise<void>;

/**
 * A Bolt listener around `handle` that acks exactly once, whatever `handle`
 * does: it may ack when it is ready (after recording, or with errors for a
 * modal); if it returns or throws without acking, the ack goes out then.
 * Errors are logged, never thrown to Bolt (the interaction is acked).
 */
export function acking<R>(deps: Pick<ListenerDeps, "logger">, what: string, handle: (body: unknown, ack: Ack<R>) => Promise<void>) {
  return async ({ ack, body }: { ack: (response?: R) => Promise<void>; body: unknown }): Promise<void> => {
    let acked = false;
    const once: Ack<R> = async (response) => {
      if (acked) return;
      acked = true;
      await (response === undefined ? ack() : ack(response));
    };
    try {
      await handle(body, once);
    } catch (error) {
      deps.logger.error({ error }, `slack ${what} failed`);
    } finally {
      await once();
    }
  };
}

/** A Bolt constraint matching exactly one of `ids` (action_ids or callback_ids). */
export function oneOf(ids: Iterable<string>): RegExp {
  return new RegExp(`^(?:${[...ids].map(escapeRegExp).join("|")})$`);
}

/** A Bolt constraint matching anything but `ids`. */
export function noneOf(ids: Iterable<string>): RegExp {
  return new RegExp(`^(?!(?:${[...ids].map(escapeRegExp).join("|")})$)`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
