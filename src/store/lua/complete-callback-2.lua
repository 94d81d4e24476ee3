--[[
  A leased queue, used for four: the callback queue (callbacks zset and
  attempts hash), the message-update outbox (updates zset and
  update-attempts hash), the reminder queue (reminders zset and
  reminder-attempts hash, members <id>:<index>) and the outcome notices
  (notices zset and notice-attempts hash, members <id>:<part>).

  Forgets a queued callback: it was delivered, or delivery was given up.

  KEYS[1] callbacks zset       <prefix>:callbacks
  KEYS[2] attempts hash        <prefix>:callback-attempts
  ARGV[1] request id

  Returns
    {APPLIED}
    {NOT_FOUND}  no callback of this request was queued
]]
--- @include "common"

redis.call("HDEL", KEYS[2], ARGV[1])
if redis.call("ZREM", KEYS[1], ARGV[1]) == 0 then return {NOT_FOUND} end
return {APPLIED}
