--[[
  Cancels a pending request (the agent gave up, the hook connection closed).

  KEYS[1] to KEYS[8], ARGV[1] to ARGV[5]: as every script that ends a
          request takes them ("Ending a request" in includes/common.lua)
  ARGV[6..] optional field/value pairs: `cancelledBy` (who), `error` (why)

  Returns
    {APPLIED, field, value, ...}        cancelled; the stored hash
    {ALREADY_ENDED, field, value, ...}  the request had ended; how it ended
    {NOT_FOUND}
]]
--- @include "common"

local status = redis.call("HGET", KEYS[1], "status")
if not status then return gone(KEYS[2], KEYS[4], ARGV[1]) end
if status ~= "pending" then return reply(ALREADY_ENDED, KEYS[1]) end

redis.call("HSET", KEYS[1], "status", "cancelled", "endedAt", ARGV[3], unpack(ARGV, 6))
finish(KEYS, ARGV)
return reply(APPLIED, KEYS[1])
