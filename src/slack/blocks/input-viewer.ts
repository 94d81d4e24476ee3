/**
 * The read-only "View full input" modal: everything a message had to cut —
 * the tool input (or the questions) as pretty JSON, and the agent's longer
 * texts — split into sections and paged, so any request up to the body
 * limit can be read in full from Slack.
 */
import type { KnownBlock, ModalView } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import { Action, encodeButton, View } from "../ids.js";
import { actions, button, context, section } from "./elements.js";
import { prettyJson } from "./json.js";
import { modal } from "./modals.js";
import { chunkAll, cutShort } from "./text.js";

/** Content blocks per page (the page line and two page buttons make 93 of Slack's 100). */
export const PAGE_BLOCKS = 90;
/** Encoded characters per code section before its fence: sections stay at or under 2900. */
const CODE_CHUNK = 2890;
const TEXT_CHUNK = 2900;

function texts(record: RequestRecord): Array<{ name: string; label: string; raw: string | undefined }> {
  const body = record.body;
  return [
    { name: "title", label: "Title", raw: body.title },
    { name: "context", label: "Context", raw: body.context },
    { name: "description", label: "Description", raw: body.kind === "permission" ? body.description : undefined },
    { name: "reason", label: "Why it asks", raw: body.kind === "permission" ? body.decisionReason : undefined },
    { name: "blocked", label: "Blocked path", raw: body.kind === "permission" ? body.blockedPath : undefined },
    { name: "cwd", label: "Working directory", raw: body.agent?.cwd },
  ];
}

/** One content block of the viewer, built only when its page is shown. */
interface LazyBlock {
  blockId: string;
  text: () => string;
}

/** Every content block of the viewer, across all pages. Code sections have block ids input_<n>. */
function viewerBlocks(record: RequestRecord): LazyBlock[] {
  const body = record.body;
  const isTool = body.kind === "permission" || body.kind === "step_gate";
  const heading = isTool ? `*Tool input* (${cutShort(body.toolName, 2800)})` : "*Questions*";
  const json = prettyJson(isTool ? body.input : body.questions);
  const blocks: LazyBlock[] = [{ blockId: "head_input", text: () => heading }];
  chunkAll(json, "code", CODE_CHUNK).forEach((text, k) => blocks.push({ blockId: `input_${k}`, text }));
  for (const { name, label, raw } of texts(record)) {
    if (!raw) continue;
    blocks.push({ blockId: `head_${name}`, text: () => `*${label}*` });
    chunkAll(raw, "text", TEXT_CHUNK).forEach((text, k) => blocks.push({ blockId: `${name}_${k}`, text }));
  }
  return blocks;
}

export function inputPageCount(record: RequestRecord): number {
  return Math.max(1, Math.ceil(viewerBlocks(record).length / PAGE_BLOCKS));
}

/** Page `page` (from 0; clamped) of the full input. */
export function inputModal(record: RequestRecord, page: number): ModalView {
  const all = viewerBlocks(record);
  const pages = Math.max(1, Math.ceil(all.length / PAGE_BLOCKS));
  const current = Math.min(Math.max(0, Math.floor(page) || 0), pages - 1);
  const blocks: KnownBlock[] = [
    context("page", [`Page ${current + 1} of ${pages}`]),
    ...all.slice(current * PAGE_BLOCKS, (current + 1) * PAGE_BLOCKS).map((lazy) => section(lazy.blockId, lazy.text())),
  ];
  if (current > 0) {
    blocks.push(actions("page_prev", [button("Previous", Action.viewPage, encodeButton({ r: record.id, p: current - 1 }))]));
  }
  if (current < pages - 1) {
    blocks.push(actions("page_next", [button("Next", Action.viewPage, encodeButton({ r: record.id, p: current + 1 }))]));
  }
  return modal({
    callbackId: View.input,
    title: pages > 1 ? `Full input ${current + 1}/${pages}` : "Full input",
    close: "Close",
    metadata: { r: record.id },
    blocks,
  });
}
