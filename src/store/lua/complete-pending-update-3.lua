--[[
  The message-update outbox (see claim-entries-2.lua) after a message was
  shown while its request was pending: forgets the queued update unless the
  request changed meanwhile (it ended, counted another approval, or was
  given more time: its deadline is not the one shown). Then
  the update stays queued, or is queued again when another instance already
  completed it, due at ARGV[3]: the message is to be shown again as the
  request now is, and a pending render that landed late never has the last
  word.

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] updates zset         <prefix>:updates
  KEYS[3] attempts hash        <prefix>:update-attempts
  ARGV[1] request id
  ARGV[2] approvals the message showed
  ARGV[3] when the update is due again if the request changed (Unix ms)
  ARGV[4] optional: the deadline the message showed (Unix ms, as stored)

  Returns
    {APPLIED}  forgotten (also when the request is gone)
    {CHANGED}  the request changed: the update is queued
]]
--- @include "common"

local status = redis.call("HGET", KEYS[1], "status")
if status then
  local approvals = tonumber(redis.call("HGET", KEYS[1], "approvalCount") or "0")
  local moved = ARGV[4] ~= nil and tonumber(redis.call("HGET", KEYS[1], "expiresAt")) ~= tonumber(ARGV[4])
  if status ~= "pending" or approvals ~= tonumber(ARGV[2]) or moved then
    redis.call("ZADD", KEYS[2], ARGV[3], ARGV[1])
    return {CHANGED}
  end
end
redis.call("HDEL", KEYS[3], ARGV[1])
redis.call("ZREM", KEYS[2], ARGV[1])
return {APPLIED}
