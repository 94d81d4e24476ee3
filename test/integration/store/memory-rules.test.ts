/**
 * The in-memory rule store against the shared rule store contract; time is
 * the contract's clock only.
 */
import { createMemoryRuleStore } from "../../../src/store/memory-rules.js";
import { runRuleStoreContract } from "../../helpers/rule-store-contract.js";

runRuleStoreContract("memory", async () => createMemoryRuleStore());
