/**
 * The order in which one channel's request posts take their turn, shared
 * fairly between the agent tokens that asked them (issue 19): round robin
 * across tokens, arrival order within one. An agent stuck in a loop that
 * floods a channel with 90 questions holds one place in the rotation, so
 * another token's question waits for at most one post per other token
 * with questions in that channel, not for the whole flood.
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

export class FairLine<T extends FairEntry> {
  /** Each owner's waiting entries, in arrival order. */
  private readonly queues = new Map<string, T[]>();
  /** The rotation: owners with entries, the one whose turn is next first. */
  private readonly rotation: string[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(entry: T): void {
    let queue = this.queues.get(entry.owner);
    if (!queue) {
      queue = [];
      this.queues.set(entry.owner, queue);
      this.rotation.push(entry.owner);
    }
    queue.push(entry);
    this.count += 1;
  }

  /**
   * Takes the entry whose turn is next as of `now` (Unix ms), posts going
   * `intervalMs` apart: the next owner's in the rotation (which then goes to
   * the back), its first unless a later one of its own would miss its
   * deadline waiting (see the header).
   */
  take(now: number, intervalMs: number): T | undefined {
    const owner = this.rotation.shift();
    if (owner === undefined) return undefined;
    const queue = this.queues.get(owner)!;
    const index = this.urgentIndex(queue, now, intervalMs);
    const [entry] = queue.splice(index, 1);
    this.count -= 1;
    if (queue.length > 0) this.rotation.push(owner);
    else this.queues.delete(owner);
    return entry;
  }

  /**
   * Index in `queue` (the owner whose turn it is) of the entry to take: the
   * one with the earliest deadline among those that would miss it at their
   * place in the rotation, when that deadline is before the first entry's;
   * otherwise the first.
   */
  private urgentIndex(queue: T[], now: number, intervalMs: number): number {
    let pick = 0;
    for (let k = 1; k < queue.length; k += 1) {
      const entry = queue[k]!;
      if (entry.deadline >= queue[pick]!.deadline) continue;
      if (now + this.placeOf(k) * intervalMs > entry.deadline) pick = k;
    }
    return pick;
  }

  /**
   * Posts before the `k`-th entry of the owner whose turn it is, by the
   * rotation: its own `k` ahead, and up to `k` of every other owner's
   * (each has a turn between two of this owner's).
   */
  private placeOf(k: number): number {
    // Called while the owner is out of the rotation (taken): the rotation holds the others.
    let place = k;
    for (const other of this.rotation) place += Math.min(this.queues.get(other)!.length, k);
    return place;
  }
}
