/**
 * The CLI's help text and exit codes, in one place so `--help`, misuse
 * messages and docs/integrations.md say the same thing.
 */

/** Exit codes of `approval-relay ask` (docs/architecture.md §1). */
export const EXIT = {
  /** Yes, or an answer was given (--choice, --text). */
  yes: 0,
  no: 1,
  /** No one answered in time, or the request was cancelled (Ctrl-C included). */
  noAnswer: 2,
  /** Relay unreachable, bad token, bad arguments, Slack refused the message. */
  error: 3,
} as const;

export const USAGE = `Usage: approval-relay <command> [options]

Commands:
  serve                  Run the relay (configured by SLACK_BOT_TOKEN, RELAY_TOKENS, …).
  ask <question>         Ask a person in Slack and wait for the answer (shell scripts, CI jobs).
  hook                   Claude Code "command" hook: hook JSON on stdin, the answer on stdout.
  audit                  Print the relay's audit log, oldest first (an admin token).
  mcp                    MCP server over stdio (approve, ask_user, check_request) for MCP
                         clients configured by command; forwards to the relay.

ask options:
  --choice a,b,c         One choice among these options; prints the chosen one.
  --text                 A free-text answer; prints the text.
                         (Neither: a yes/no question.)
  --channel ID           Slack channel or user id (default: the relay's SLACK_DEFAULT_CHANNEL).
  --timeout SECONDS      How long a person has to answer (default: the relay's).
  --title TEXT           A title shown above the question.
  --label KEY=VALUE      A label for the relay's routes (e.g. env=prod); repeat for more.
  --requested-by WHO     Who the question is for: a Slack user id (U0123ABCD) or an
                         email; where the relay's route says selfApproval: deny,
                         that person may not answer it (e.g. a commit's author).
  --context TEXT         More to read with the question (mrkdwn; escaped by the relay).
  --approver ID          Only this person (U0123ABCD) or user group (S0123ABCD) may
                         answer; repeat for more. Narrows the relay's route, never widens it.
  --idempotency-key KEY  The same key joins the same request instead of posting again
                         (a retried CI step).
  --fresh-when-ended     With --idempotency-key: join only while that request is pending;
                         once it has ended (or asked something else), ask anew under
                         KEY#2, KEY#3, … (a re-run job: never an earlier run's answer).
  --no-host              Leave out this machine's name and working directory, so a re-run
                         on another machine sends the same request and can join it.
  --json                 Print {id, status, answer?, answeredBy?, slack?} as JSON
                         instead of the answer (also when no answer came).
  Exit codes: 0 yes or answered · 1 no · 2 no answer in time, or cancelled · 3 error.

hook options:
  --timeout SECONDS      The hook's "timeout" in settings.json (default 600); the relay
                         answers a few seconds before it.
  Whatever goes wrong, the hook denies (fail closed) and says why.

audit options:
  --since WHEN           Only events since then: a duration before now (30m, 24h, 7d)
                         or an ISO 8601 time (2026-12-01T09:00:00Z). Default: all kept.
  --format jsonl|csv     One JSON event per line (default), or CSV with a header row.
  --request-id ID        Only this request's events.
  --limit N              Print at most N events.
  Exit codes: 0 printed · 3 error.

mcp options:
  RELAY_MCP_PROGRESS     Seconds between progress notifications of a waiting call (default 25).
  Stdout carries only MCP messages; problems go to stderr.

Connection (ask, hook, audit, mcp):
  --url URL              The relay's URL (default: $RELAY_URL).
  --token TOKEN          An agent token, for audit an admin token (default: $RELAY_TOKEN;
                         prefer the variable, a flag shows in the process list).
  RELAY_RETRIES          How many times to retry an unreachable relay (default 5).
`;
