/**
 * The relay's button clicks (block_actions) as one Bolt listener, told apart
 * by action_id here. Bolt runs every registered listener's middleware for
 * every interaction: a copy of its chain, a closure and a promise per step,
 * its type filter and constraint match, whether or not the listener is the
 * one clicked. With six click families registered as six Bolt listeners that
 * was most of what Bolt allocated for a click (docs/performance.md). Each
 * family adds its ids here instead (exact, or a pattern as Bolt's constraints
 * take them), and the one Bolt listener runs every family whose ids match the
 * clicked action's, as Bolt would have.
 */
import type { App, BlockAction } from "@slack/bolt";

/** A click family's listener: Bolt's arguments, of which the relay reads the ack and the payload. */
export type ClickListener = (args: { ack: () => Promise<void>; body: unknown }) => Promise<void>;

export class ClickRoutes {
  private readonly routes: Array<{ ids: string | RegExp; listener: ClickListener }> = [];

  /** Runs `listener` for a click whose action_id is `ids` (a string) or matches it (a pattern). */
  add(ids: string | RegExp, listener: ClickListener): void {
    this.routes.push({ ids, listener });
  }

  /** Registers the one Bolt listener; call once, after every family is added. */
  listen(app: App): void {
    app.action<BlockAction>({ type: "block_actions" }, async (args) => {
      const id = args.action.action_id;
      const matching = this.routes.filter(({ ids }) => (typeof ids === "string" ? ids === id : ids.test(id)));
      if (matching.length === 1) return matching[0]!.listener(args);
      await Promise.all(matching.map(({ listener }) => listener(args)));
    });
  }
}
