--[[
  Expires a pending request whose deadline has passed. Every instance sweeps
  the same deadlines; this check-and-set makes exactly one of them win.

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] deadlines zset       <prefix>:deadlines
  KEYS[3] callbacks zset       <prefix>:callbacks (queued here when the request
                               has a callback URL)
  KEYS[4] posting zset         <prefix>:posting (the request leaves it)
  KEYS[5] updates zset         <prefix>:updates (the message update is queued
                               here when the request has a Slack message)
  ARGV[1] request id
  ARGV[2] pub/sub channel for ended requests
  ARGV[3] now (Unix ms), stored as endedAt
  ARGV[4] retention (ms)
  ARGV[5] when the message update is due (Unix ms)
  ARGV[6] optional: the error to record when the request was never posted
          to Slack (it has no `slack` field)

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
if ARGV[6] and redis.call("HEXISTS", KEYS[1], "slack") == 0 then redis.call("HSET", KEYS[1], "error", ARGV[6]) end
finish(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[4], ARGV[3], KEYS[5], ARGV[5])
return reply(APPLIED, KEYS[1])
