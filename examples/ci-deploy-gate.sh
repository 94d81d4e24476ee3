#!/usr/bin/env bash
# A CI deploy gate: the job waits until someone answers in Slack.
# Needs RELAY_URL and RELAY_TOKEN (an agent token) in the job's environment,
# and `approval-relay` on the PATH, installed from this repository, never from
# the npm registry (the name is not ours there): in a clone `npm pack` makes
# slack-approval-relay-0.1.0.tgz; on the runner `npm install -g ./slack-approval-relay-0.1.0.tgz`
# (docs/integrations.md, "Installing the CLI and the client library").
set -euo pipefail

VERSION="${1:?usage: ci-deploy-gate.sh <version>}"

set +e
approval-relay ask "Deploy ${VERSION} to production?" \
  --title "Release ${VERSION} from ${CI_PIPELINE_URL:-CI}" \
  --channel "${DEPLOY_APPROVAL_CHANNEL:-C0123456789}" \
  --timeout 1800
answer=$?
set -e

case "$answer" in
  0) echo "Approved in Slack; deploying ${VERSION}." ;;
  1) echo "Rejected in Slack; not deploying." >&2; exit 1 ;;
  2) echo "No answer in Slack within 30 minutes (or cancelled); not deploying." >&2; exit 1 ;;
  *) echo "Could not ask in Slack (relay unreachable or misconfigured); not deploying." >&2; exit 1 ;;
esac

# Which environment? --choice prints the option picked.
target=$(approval-relay ask "Where should ${VERSION} go first?" --choice canary,production --timeout 600)
echo "Deploying ${VERSION} to ${target}…"
