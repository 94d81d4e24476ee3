--[[
  Marks a pending request failed: Slack refused its message for good.

  KEYS[1] to KEYS[8], ARGV[1] to ARGV[5]: as every script that ends a
          request takes them ("Ending a request" in includes/common.lua)
  ARGV[6] error: why Slack refused

  Returns
    {APPLIED, field, value, ...}        failed; the stored hash
    {ALREADY_ENDED, field, value, ...}  the request had ended; how it ended
    {NOT_FOUND}
]]
--- @include "common"

local status = redis.call("HGET", KEYS[1], "status")
if not status then return gone(KEYS[2], KEYS[4], ARGV[1]) end
if status ~= "pending" then return reply(ALREADY_ENDED, KEYS[1]) end

redis.call("HSET", KEYS[1], "status", "failed", "endedAt", ARGV[3], "error", ARGV[6])
finish(KEYS, ARGV)
return reply(APPLIED, KEYS[1])
