/**
 * Pretty JSON for people, safe for any input an agent may send: a body
 * within the 1 MB limit can nest deeper than JSON.stringify's recursion
 * allows, and indenting it would blow it up quadratically, so deeply nested
 * input is shown compact, written without recursion.
 */
import { MAX_DEPTH, nestsDeeperThan } from "../../protocol/json-depth.js";

/** Deeper than this, input is shown compact (and cannot be edited in Slack). */
export const MAX_PRETTY_DEPTH = MAX_DEPTH;

/** JSON.stringify(value, null, 2), or compact JSON when the value nests deeper than MAX_PRETTY_DEPTH. */
export function prettyJson(value: unknown): string {
  return nestsDeeperThan(value, MAX_PRETTY_DEPTH) ? compactJson(value) : (JSON.stringify(value, null, 2) ?? "null");
}

type Frame = { kind: "array"; items: unknown[]; next: number } | { kind: "object"; entries: Array<[string, unknown]>; next: number };

/** JSON.stringify(value) without recursion (for JSON data: objects, arrays, strings, numbers, booleans, null). */
export function compactJson(value: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = (item: unknown): void => {
    if (Array.isArray(item)) {
      out.push("[");
      stack.push({ kind: "array", items: item, next: 0 });
    } else if (typeof item === "object" && item !== null) {
      out.push("{");
      const entries = Object.entries(item).filter(([, v]) => v !== undefined && typeof v !== "function");
      stack.push({ kind: "object", entries, next: 0 });
    } else {
      out.push(JSON.stringify(item) ?? "null");
    }
  };
  open(value);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.kind === "array") {
      if (frame.next === frame.items.length) {
        out.push("]");
        stack.pop();
        continue;
      }
      if (frame.next > 0) out.push(",");
      open(frame.items[frame.next++]);
    } else {
      const entry = frame.entries[frame.next];
      if (entry === undefined) {
        out.push("}");
        stack.pop();
        continue;
      }
      if (frame.next > 0) out.push(",");
      frame.next += 1;
      out.push(`${JSON.stringify(entry[0])}:`);
      open(entry[1]);
    }
  }
  return out.join("");
}
