/**
 * The App Home tab (issue 9). `app_home_opened` on the Home tab publishes
 * the person's view (../home-tab.ts). A click on **Revoke** there revokes
 * one of the clicker's own rules, recorded before the ack within
 * STORE_BUDGET as an answer is, and then the view is published again with
 * a notice line on top, since App Home has no ephemeral messages: revoked;
 * already gone (an unknown rule, someone else's and one past its time
 * alike, so nothing leaks and nothing is revoked); or not confirmed because
 * the store did not answer in time.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { Logger } from "../../logger.js";
import { SlackUserId } from "../../protocol/request-body.js";
import type { RequestService } from "../../requests/service.js";
import { answererIn } from "../../requests/policy.js";
import { revokedNotice, REVOKE_NOTICES } from "../blocks/index.js";
import type { HomeTab } from "../home-tab.js";
import { Action, decodeRuleButton } from "../ids.js";
import { acking, answererOf, personOf, SlackUser, STORE_BUDGET, withinBudget, type Ack } from "./context.js";
import type { ClickRoutes } from "./clicks.js";

export interface HomeListenerDeps {
  service: Pick<RequestService, "rules">;
  home: Pick<HomeTab, "opened" | "show">;
  logger: Logger;
}

const HomeOpened = z.looseObject({
  type: z.literal("app_home_opened"),
  user: SlackUserId,
  /** "home" or "messages"; only the Home tab shows a view. */
  tab: z.string().optional(),
});
/** The event's envelope: the workspace it came from. */
const Envelope = z.looseObject({ team_id: z.string().min(1).max(64).optional() });

const RevokeClick = z.looseObject({
  type: z.literal("block_actions"),
  user: SlackUser,
  actions: z.array(z.looseObject({ action_id: z.string(), value: z.string().optional() })).min(1),
});

export function register(app: App, clicks: ClickRoutes, deps: HomeListenerDeps): void {
  app.event("app_home_opened", async ({ event, body }) => {
    const opened = HomeOpened.safeParse(event);
    if (!opened.success || opened.data.tab !== "home") return deps.logger.debug("slack app_home_opened ignored: not the Home tab of a user");
    const team = Envelope.safeParse(body);
    deps.home.opened(answererIn({ id: opened.data.user }, team.success ? team.data.team_id : undefined));
  });
  clicks.add(
    Action.revokeRule,
    acking<void>(deps, "revoke click", (body, ack) => revokeClick(deps, body, ack)),
  );
}

async function revokeClick(deps: HomeListenerDeps, raw: unknown, ack: Ack): Promise<void> {
  const parsed = RevokeClick.safeParse(raw);
  if (!parsed.success) return deps.logger.debug("slack revoke click ignored: not a block_actions payload");
  const { user, actions } = parsed.data;
  const value = decodeRuleButton(actions[0]!.value);
  if (!value) return deps.logger.debug("slack revoke click ignored: undecodable value");
  const book = deps.service.rules;
  // Only the clicker's own rule: another's is as unknown to them as one that never was.
  const revoke = book ? book.revoke(value.rule, { person: personOf(user) }, { createdBy: user.id }) : Promise.resolve(undefined);
  const revoked = await withinBudget(revoke, STORE_BUDGET.totalMs);
  await ack();
  if (!revoked.ok) deps.logger.warn({ rule: value.rule, reason: revoked.reason, error: revoked.error }, "slack revoke click not confirmed");
  const notice = !revoked.ok ? REVOKE_NOTICES.failed : revoked.value ? revokedNotice(revoked.value) : REVOKE_NOTICES.gone;
  deps.home.show(answererOf(user), notice);
}
