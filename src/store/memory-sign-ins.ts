/**
 * In-memory SignInStore for a single relay instance (no Redis): the same
 * contract as the Redis one, lost when the process exits. An entry past its
 * time is treated as gone on every read, and dropped on the next write.
 * Each kind holds at most `maxPerKind` live entries, as the Redis store does:
 * Sign in with Slack is started by anyone who can reach the relay, and must
 * not fill its memory.
 */
import {
  MAX_SIGN_INS_PER_KIND,
  parseSignInEntry,
  SIGN_IN_KINDS,
  signInLives,
  type SignInEntry,
  type SignInKind,
  type SignInStore,
} from "../requests/sign-ins.js";

export interface MemorySignInStoreOptions {
  /** Most live entries of one kind; default MAX_SIGN_INS_PER_KIND. */
  maxPerKind?: number;
}

type Entry = SignInEntry<SignInKind>;

export function createMemorySignInStore({ maxPerKind = MAX_SIGN_INS_PER_KIND }: MemorySignInStoreOptions = {}): SignInStore {
  const kinds = new Map<SignInKind, Map<string, Entry>>(SIGN_IN_KINDS.map((kind) => [kind, new Map()]));
  const of = (kind: SignInKind) => kinds.get(kind)!;

  function live(kind: SignInKind, digest: string, now: number): Entry | undefined {
    const entry = of(kind).get(digest);
    if (entry && signInLives(entry, now)) return entry;
    of(kind).delete(digest);
    return undefined;
  }

  return {
    async put(kind, digest, entry, now) {
      const kept = parseSignInEntry(kind, entry);
      const entries = of(kind);
      for (const [key, other] of entries) if (!signInLives(other, now)) entries.delete(key);
      if (entries.size >= maxPerKind && !entries.has(digest)) return false;
      entries.set(digest, kept);
      return true;
    },

    async get<K extends SignInKind>(kind: K, digest: string, now: number) {
      const entry = live(kind, digest, now);
      return entry === undefined ? undefined : (structuredClone(entry) as SignInEntry<K>);
    },

    async take<K extends SignInKind>(kind: K, digest: string, now: number) {
      const entry = live(kind, digest, now);
      of(kind).delete(digest);
      return entry as SignInEntry<K> | undefined;
    },

    async remove(kind, digest) {
      of(kind).delete(digest);
    },

    async close() {},
  };
}
