/** Claims on a store's leased queues (src/requests/store.ts QueueName), as the contract suites compare them. */
import type { QueueName, RequestStore } from "../../src/requests/store.js";

/** The keys of the entries a claim of `queue` hands out, in the order handed out. */
export async function claimedKeys(store: Pick<RequestStore, "claim">, queue: QueueName, at: number, leaseMs: number, limit: number): Promise<string[]> {
  return (await store.claim(queue, at, leaseMs, limit)).map(({ key }) => key);
}
