--[[
  Counts a person's approval of a pending request that needs `quorum`
  distinct approvals, atomically with the final step: a person counts once;
  the approval that makes the quorum answers the request exactly as
  answer-8.lua does; an earlier one leaves it pending and, when it has a
  Slack message, queues the update that shows the count.

  KEYS[1] to KEYS[8], ARGV[1] to ARGV[5]: as every script that ends a
          request takes them ("Ending a request" in includes/common.lua)
  ARGV[6] final decision (JSON, opaque here)
  ARGV[7] who answered (JSON, opaque here)
  ARGV[8] hash field of this person's approval (approval:<person id>, built
          by redis-record.ts)
  ARGV[9] the approval (JSON, opaque here)
  ARGV[10] approvals needed (the quorum)
  ARGV[11] when the message update that shows the count is due (Unix ms)

  Returns
    {APPLIED, field, value, ...}        the quorum is met: answered; the stored hash
    {COUNTED, field, value, ...}        counted, still pending; the stored hash
    {DUPLICATE, field, value, ...}      this person was counted already; nothing changed
    {ALREADY_ENDED, field, value, ...}  the request had ended; how it ended
    {NOT_FOUND}

  Approvals lie one field each, the value "<n>:<approval JSON>" where n
  counts them in order (`approvalCount`), so this script never parses JSON
  and redis-record.ts reads them back oldest first.
]]
--- @include "common"

local status = redis.call("HGET", KEYS[1], "status")
if not status then return gone(KEYS[2], KEYS[4], ARGV[1]) end
if status ~= "pending" then return reply(ALREADY_ENDED, KEYS[1]) end
if redis.call("HEXISTS", KEYS[1], ARGV[8]) == 1 then return reply(DUPLICATE, KEYS[1]) end

local count = redis.call("HINCRBY", KEYS[1], "approvalCount", 1)
redis.call("HSET", KEYS[1], ARGV[8], count .. ":" .. ARGV[9])
if count < tonumber(ARGV[10]) then
  if redis.call("HEXISTS", KEYS[1], "slack") == 1 then redis.call("ZADD", KEYS[5], ARGV[11], ARGV[1]) end
  return reply(COUNTED, KEYS[1])
end

redis.call("HSET", KEYS[1], "status", "answered", "endedAt", ARGV[3], "decision", ARGV[6], "answeredBy", ARGV[7])
finish(KEYS, ARGV)
return reply(APPLIED, KEYS[1])
