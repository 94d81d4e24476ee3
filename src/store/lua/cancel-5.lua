--[[
  Cancels a pending request (the agent gave up, the hook connection closed).

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] deadlines zset       <prefix>:deadlines
  KEYS[3] callbacks zset       <prefix>:callbacks (queued here when the request
                               has a callback URL)
  KEYS[4] posting zset         <prefix>:posting (the request leaves it)
  KEYS[5] updates zset         <prefix>:updates (the message update is queued
                               here when the request has a Slack message)
  ARGV[1] request id
  ARGV[2] pub/sub channel for ended requests
  ARGV[3] time of the cancel (Unix ms), stored as endedAt
  ARGV[4] retention (ms)
  ARGV[5] when the message update is due (Unix ms)
  ARGV[5..] optional field/value pairs: `cancelledBy` (who), `error` (why)

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
finish(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[4], ARGV[3], KEYS[5], ARGV[5])
return reply(APPLIED, KEYS[1])
