/**
 * The in-memory store against the shared store contract; time is the
 * contract's fake clock only.
 */
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { runStoreContract } from "../../helpers/store-contract.js";

runStoreContract("memory", async ({ now, retentionMs }) => ({
  store: createMemoryStore({ now, retentionMs }),
  elapse: async () => {},
}));
