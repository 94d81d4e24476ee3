/**
 * Writes the agent API's OpenAPI document (src/http/openapi.ts, generated
 * from the zod schemas) to openapi.json at the root of the repository, the
 * copy clients are generated from. Run after changing a wire schema:
 *   npm run openapi
 * test/integration/http/openapi.test.ts fails while the file and the schemas differ.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openApiText } from "../src/http/openapi.js";

const target = fileURLToPath(new URL("../openapi.json", import.meta.url));
writeFileSync(target, openApiText());
console.log(`openapi: wrote ${target}`);
