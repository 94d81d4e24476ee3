/**
 * The rule store and the console's sign-in store against their shared
 * contracts, on every store the relay has: memory, one Redis server, and a
 * real Redis Cluster of three masters the file starts
 * (test/helpers/store-backends.ts). On the cluster a script whose keys sit
 * on two slots fails with CROSSSLOT, so each contract run there proves that
 * every script keeps to one slot. What only one store has stays with it
 * (redis-rules.test.ts, redis-sign-ins.test.ts).
 */
import { createMemoryRuleStore } from "../../../src/store/memory-rules.js";
import { createMemorySignInStore } from "../../../src/store/memory-sign-ins.js";
import { createRedisRuleStore } from "../../../src/store/redis-rules.js";
import { createRedisSignInStore } from "../../../src/store/redis-sign-ins.js";
import { runRuleStoreContract } from "../../helpers/rule-store-contract.js";
import { runSignInStoreContract } from "../../helpers/sign-in-store-contract.js";
import { useStoreBackends } from "../../helpers/store-backends.js";

const backends = useStoreBackends();

backends.run(runRuleStoreContract, {
  memory: () => createMemoryRuleStore(),
  redis: (redis, prefix) => createRedisRuleStore({ redis, prefix }),
});

backends.run(runSignInStoreContract, {
  memory: (options) => createMemorySignInStore(options),
  redis: (redis, prefix, options) => createRedisSignInStore({ redis, prefix, ...options }),
});
