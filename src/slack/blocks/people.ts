/**
 * How people and user groups are written in Slack text: a mention only for
 * an id that passes SlackUserId / SlackUsergroupId (so nothing else an agent
 * or a payload carries can become `<!channel>`), a name escaped and cut
 * otherwise, and lists of approvers cut to a length with the rest counted.
 */
import type { Person } from "../../protocol/request-view.js";
import { SlackUserId, SlackUsergroupId, type ApproverList } from "../../protocol/request-body.js";
import { cutShort } from "./text.js";

/** "<@U…>" for a Slack user id; undefined for anything else. */
export function userMention(id: string): string | undefined {
  return SlackUserId.safeParse(id).success ? `<@${id}>` : undefined;
}

/** "<!subteam^S…>" for a Slack user group id; undefined for anything else. */
export function groupMention(id: string): string | undefined {
  return SlackUsergroupId.safeParse(id).success ? `<!subteam^${id}>` : undefined;
}

/** A person as a mention, or (an id that is no Slack user id) their name, escaped and cut. */
export function personText(person: Person): string {
  return userMention(person.id) ?? (cutShort(person.name ?? "someone", 80) || "someone");
}

/**
 * "<@U1>, <@U2>, <!subteam^S1>": the list's users, then its groups, without
 * the user ids in `except`, within `max` characters; entries past it are
 * counted ("and 3 more"). "" when nobody is left.
 */
export function mentionList(list: ApproverList, max: number, except: readonly string[] = []): string {
  const users = (list.users ?? []).filter((id) => !except.includes(id)).map(userMention);
  const groups = (list.usergroups ?? []).map(groupMention);
  return joinWithin(
    [...users, ...groups].filter((mention): mention is string => mention !== undefined),
    max,
  );
}

/** `texts` joined with ", " within `max` characters; those past it counted as "and N more". */
export function joinWithin(texts: readonly string[], max: number): string {
  const shown: string[] = [];
  let length = 0;
  for (const [index, text] of texts.entries()) {
    const more = texts.length - index - 1;
    const room = max - (more > 0 ? ` and ${texts.length} more`.length : 0);
    if (length + (shown.length > 0 ? 2 : 0) + text.length > room) break;
    length += (shown.length > 0 ? 2 : 0) + text.length;
    shown.push(text);
  }
  const rest = texts.length - shown.length;
  if (rest === 0) return shown.join(", ");
  return shown.length === 0 ? `${rest} more` : `${shown.join(", ")} and ${rest} more`;
}
