--[[
  Expires a pending request whose deadline has passed. Every instance sweeps
  the same deadlines; this check-and-set makes exactly one of them win.

  KEYS[1] to KEYS[8], ARGV[1] to ARGV[5]: as every script that ends a
          request takes them ("Ending a request" in includes/common.lua)
  ARGV[6] the error to record when the request was never posted to Slack
          (it has no `slack` field), or "" for none
  ARGV[7] the decision the expired request carries (JSON, opaque here; a
          route's onTimeout: halt), or "" for none

  Returns
    {APPLIED, field, value, ...}        expired; the stored hash
    {ALREADY_ENDED, field, value, ...}  the request had ended; how it ended
    {NOT_DUE, field, value, ...}        expiresAt is still after now
    {NOT_FOUND}                         (its stale deadline is removed)
]]
--- @include "common"

local status = redis.call("HGET", KEYS[1], "status")
if not status then return gone(KEYS[2], KEYS[4], ARGV[1]) end
if status ~= "pending" then return reply(ALREADY_ENDED, KEYS[1]) end
if tonumber(redis.call("HGET", KEYS[1], "expiresAt")) > tonumber(ARGV[3]) then
  return reply(NOT_DUE, KEYS[1])
end

redis.call("HSET", KEYS[1], "status", "expired", "endedAt", ARGV[3])
if ARGV[6] ~= "" and redis.call("HEXISTS", KEYS[1], "slack") == 0 then redis.call("HSET", KEYS[1], "error", ARGV[6]) end
if ARGV[7] ~= "" then redis.call("HSET", KEYS[1], "decision", ARGV[7]) end
finish(KEYS, ARGV)
return reply(APPLIED, KEYS[1])
