--[[
  A leased queue, used for four: the callback queue (callbacks zset and
  attempts hash), the message-update outbox (updates zset and
  update-attempts hash), the reminder queue (reminders zset and
  reminder-attempts hash, members <id>:<index>) and the outcome notices
  (notices zset and notice-attempts hash, members <id>:<part>).

  Schedules the next delivery attempt of a queued callback. Never queues one
  that is not there (it was completed meanwhile).

  KEYS[1] callbacks zset       <prefix>:callbacks
  KEYS[2] attempts hash        <prefix>:callback-attempts
  ARGV[1] request id
  ARGV[2] when the next attempt is due (Unix ms)
  ARGV[3] attempts made so far

  Returns
    {APPLIED}
    {NOT_FOUND}  no callback of this request is queued
]]
--- @include "common"

if not redis.call("ZSCORE", KEYS[1], ARGV[1]) then return {NOT_FOUND} end
redis.call("ZADD", KEYS[1], "XX", ARGV[2], ARGV[1])
redis.call("HSET", KEYS[2], ARGV[1], ARGV[3])
return {APPLIED}
