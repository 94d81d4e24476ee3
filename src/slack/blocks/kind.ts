/**
 * What each request kind contributes to its Slack message. A view is made
 * once per record (so expensive work such as pretty-printing a large input
 * happens once), then message.ts assembles the common parts around it and
 * shares the text budget.
 */
import type { KnownBlock } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import type { Fitter, Leaf } from "./budget.js";
import type { Mode } from "./common.js";

export interface KindView {
  /** The agent texts this kind shows, to share the budget among. */
  leaves: Leaf[];
  /** The body of the message, built from fitted leaves. */
  content(fit: Fitter, mode: Mode): KnownBlock[];
  /** Buttons and hints shown only while the request is pending. */
  controls(): KnownBlock[];
  /** One raw line for the notification text. */
  summary: string;
}

export type KindViewOf = (record: RequestRecord) => KindView;
