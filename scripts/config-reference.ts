/**
 * Writes docs/configuration-reference.md from the variables' entries
 * (src/config/variables.ts: schema, hint and what each is for) and the keys
 * of the config file's schemas, so the reference cannot drift from what the
 * relay accepts. Run after adding or changing a variable:
 *   npm run docs:config
 * test/unit/config/reference.test.ts fails while the committed file and the
 * entries differ. Formatted with the repository's Prettier settings, as
 * `npm run lint` checks every Markdown file.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { format, resolveConfig } from "prettier";
import { VARIABLES, type Variable } from "../src/config/variables.js";
import { DefaultRoute, Route, RouteMatch } from "../src/requests/route-schema.js";
import { Escalation } from "../src/requests/vocabulary.js";

export const REFERENCE_PATH = fileURLToPath(new URL("../docs/configuration-reference.md", import.meta.url));

/** The reference as docs/configuration-reference.md holds it. */
export async function configReference(): Promise<string> {
  const rows = Object.entries(VARIABLES).map(([name, variable]: [string, Variable]) =>
    [`\`${name}\`${variable.secret ? " (secret)" : ""}`, variable.about, defaultOf(variable), variable.hint].map(cell).join(" | "),
  );
  const keys = (schema: { shape: object }) =>
    Object.keys(schema.shape)
      .map((key) => `\`${key}\``)
      .join(", ");
  const text = [
    "# Configuration reference",
    "",
    "<!-- Written by `npm run docs:config` from src/config/variables.ts and the route schemas; do not edit by hand. -->",
    "",
    "Every variable below may also be a top-level key of the config file (`RELAY_CONFIG_FILE`), except `RELAY_CONFIG_FILE` itself; " +
      "the environment wins over the file, and an empty variable counts as unset. A wrong value stops the start with one line: " +
      "`NAME is missing: <how to fix>` or `NAME is invalid: <the rule it broke>; <how to fix>`. " +
      "The value of a secret is never quoted, in that line or in the log.",
    "",
    "| variable | what it is for | default | a wrong value: how to fix |",
    "| --- | --- | --- | --- |",
    ...rows.map((row) => `| ${row} |`),
    "",
    "## The config file's keys",
    "",
    "Any other key, at any level and in any case, stops the start with one line naming it and the closest known key " +
      "(`METRICS_TOKN: is not a known key (did you mean METRICS_TOKEN?)`).",
    "",
    "- the top level: `routes`, `default` and the variables above",
    `- a route (an entry of \`routes\`): ${keys(Route)}`,
    `- its \`match\`: ${keys(RouteMatch)}`,
    `- \`default\`: ${keys(DefaultRoute)}`,
    `- an escalation (an entry of \`escalate\`): ${keys(Escalation)}`,
    "",
  ].join("\n");
  return format(text, { ...(await resolveConfig(REFERENCE_PATH)), parser: "markdown" });
}

/** What the relay makes of the variable unset: its schema's default, or whether it must be set. */
function defaultOf({ schema }: Variable): string {
  const unset = schema.safeParse(undefined);
  if (!unset.success) return "required";
  return unset.data === undefined ? "none" : `\`${String(unset.data)}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(REFERENCE_PATH, await configReference());
  console.log(`docs:config: wrote ${REFERENCE_PATH}`);
}
