/**
 * The order in which one channel's request posts take their turn, shared
 * fairly between the agent tokens that asked them (issue 19): round robin
 * across tokens, arrival order within one. An agent stuck in a loop that
 * floods a channel with 90 questions holds one place in the rotation, so
 * another token's question waits for at most one post per other token
 * with questions in that channel, not for the whole flood.
 *
 * Round robin by turn numbers (start-time fair queueing): each token's
 * waiting requests hold consecutive turns from where the token joined, a
 * token that joins (or comes back) starts at the turn being served, and the
 * lowest turn goes next (the earlier arrival on a tie). So a newcomer goes
 * right after the post in progress, and a token that sends one question at
 * a time gets no more than its share.
 *
 * Within one token, a request whose deadline comes before its estimated
 * turn (its place in the rotation, one post per `intervalMs`) goes ahead of
 * that token's requests that can afford to wait (those with a later
 * deadline), earliest deadline first: a 45 s question is not stuck behind
 * its own token's backlog of 10-minute ones. Across tokens the rotation
 * alone decides, so no token's urgent requests can push another token's
 * out of their turn.
 *
 * Pure: the caller (ChannelQueue) says what time it is and how far apart
 * posts go.
 */

/** One caller waiting in the line. */
export interface FairEntry {
  /** Who asked (the agent token's name): the unit of fairness. */
  readonly owner: string;
  /** Unix ms after which the caller no longer wants its turn. */
  readonly deadline: number;
}

interface Owner<T> {
  /** Its waiting entries, in arrival order (but for urgent ones taken early), each with when it arrived. */
  entries: Array<{ entry: T; arrival: number }>;
  /** The turn of its first entry; the k-th holds turn `head + k`. */
  head: number;
}

export class FairLine<T extends FairEntry> {
  private readonly owners = new Map<string, Owner<T>>();
  /** Owners with nothing waiting whose next turn is past the one being served: where they start when they come back. */
  private readonly resume = new Map<string, number>();
  /** The turn of the last entry taken. */
  private turn = 0;
  private arrivals = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(entry: T): void {
    let owner = this.owners.get(entry.owner);
    if (!owner) {
      owner = { entries: [], head: Math.max(this.turn, this.resume.get(entry.owner) ?? 0) };
      this.resume.delete(entry.owner);
      this.owners.set(entry.owner, owner);
    }
    owner.entries.push({ entry, arrival: this.arrivals });
    this.arrivals += 1;
    this.count += 1;
  }

  /**
   * Takes the entry whose turn is next as of `now` (Unix ms), posts going
   * `intervalMs` apart: the lowest turn's owner's first entry, unless a later
   * one of its own would miss its deadline waiting (see the header).
   */
  take(now: number, intervalMs: number): T | undefined {
    let next: [string, Owner<T>] | undefined;
    for (const candidate of this.owners) {
      const [, owner] = candidate;
      if (!next || owner.head < next[1].head || (owner.head === next[1].head && owner.entries[0]!.arrival < next[1].entries[0]!.arrival)) next = candidate;
    }
    if (!next) return undefined;
    const [name, owner] = next;
    this.turn = owner.head;
    const [taken] = owner.entries.splice(this.urgentIndex(owner, now, intervalMs), 1);
    owner.head += 1;
    this.count -= 1;
    if (owner.entries.length === 0) {
      this.owners.delete(name);
      this.resume.set(name, owner.head);
    }
    for (const [other, at] of this.resume) if (at <= this.turn) this.resume.delete(other);
    return taken!.entry;
  }

  /**
   * Index in `owner`'s entries (the owner whose turn it is) of the entry to
   * take: the one with the earliest deadline among those that would miss it
   * at their place in the line, when that deadline is before the first
   * entry's; otherwise the first.
   */
  private urgentIndex(owner: Owner<T>, now: number, intervalMs: number): number {
    const { entries } = owner;
    let pick = 0;
    for (let k = 1; k < entries.length; k += 1) {
      const { deadline } = entries[k]!.entry;
      if (deadline >= entries[pick]!.entry.deadline) continue;
      if (now + this.placeOf(owner, k) * intervalMs > deadline) pick = k;
    }
    return pick;
  }

  /** Entries taken before `owner`'s k-th: its own k ahead, and every other owner's with a lower turn. */
  private placeOf(owner: Owner<T>, k: number): number {
    const turn = owner.head + k;
    let place = k;
    for (const other of this.owners.values()) if (other !== owner) place += Math.min(other.entries.length, Math.max(0, turn - other.head));
    return place;
  }
}
