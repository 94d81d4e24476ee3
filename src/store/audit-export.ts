/**
 * RELAY_AUDIT_EXPORT: a copy of every audit event appended to a file as one
 * JSON line each (`{"at":"<ISO 8601>","type":…,"requestId":…}`, the fields
 * of `GET /v1/audit` without the log's id), for log shipping to a place no
 * agent token reaches. The file is opened for appending and created only
 * the relay's user can read (0600); rotate it with copytruncate.
 *
 * Written through sonic-boom (pino's own destination, already a
 * dependency): buffered, asynchronous writes that never hold a request up,
 * flushed at close. The file is opened before the relay starts, so a path
 * it cannot write stops the start with one line; a write failing later is
 * logged once at error, and the relay goes on (every event is in its log
 * too).
 */
import { once } from "node:events";
import pino from "pino";
import type { Logger } from "../logger.js";
import type { AuditEntry, AuditExport } from "../requests/audit.js";

/** Why the export file could not be opened: the start's one line. */
export class AuditExportError extends Error {
  constructor(path: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(
      `RELAY_AUDIT_EXPORT: cannot append to ${path}${code ? ` (${code})` : ""}; give a file the relay's user may create and write, in a directory that exists`,
    );
    this.name = "AuditExportError";
  }
}

/** Opens `path` for appending (created 0600 when missing); rejects with AuditExportError when it cannot. */
export async function openAuditExport(path: string, logger: Pick<Logger, "error">): Promise<AuditExport> {
  const destination = pino.destination({ dest: path, append: true, mkdir: false, sync: false, mode: 0o600 });
  try {
    await once(destination, "ready");
  } catch (error) {
    // pino flushes every destination of its own at the process's exit; one that never opened would
    // throw there ("sonic boom is not ready yet"), an uncaught exception in an exit that was clean.
    destination.destroy();
    throw new AuditExportError(path, error);
  }
  let failed = false;
  let closing: Promise<void> | undefined;
  destination.on("error", (error: unknown) => {
    if (failed) return;
    failed = true;
    logger.error({ error, path }, "the audit export file could not be written: later events are in the relay's log only");
  });
  return {
    write(entry: AuditEntry) {
      if (failed) return;
      try {
        const { at, ...fields } = entry;
        destination.write(`${JSON.stringify({ at: new Date(at).toISOString(), ...fields })}\n`);
      } catch (error) {
        destination.emit("error", error);
      }
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        destination.once("close", () => resolve());
        try {
          destination.end();
        } catch {
          resolve();
        }
      });
      return closing;
    },
  };
}
