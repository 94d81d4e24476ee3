--[[
  A leased queue, used for four: the callback queue (callbacks zset and
  attempts hash), the message-update outbox (updates zset and
  update-attempts hash), the reminder queue (reminders zset and
  reminder-attempts hash, members <id>:<index>) and the outcome notices
  (notices zset and notice-attempts hash, members <id>:<part>).

  Hands out the callbacks that are due, each to one caller only: every id
  returned is made due again only at now + lease, so no other instance claims
  it while this one delivers. A deliverer that dies leaves its claims to be
  taken again when the lease runs out.

  KEYS[1] callbacks zset       <prefix>:callbacks (request id → due, Unix ms)
  KEYS[2] attempts hash        <prefix>:callback-attempts (request id → count)
  ARGV[1] now (Unix ms)
  ARGV[2] lease (ms)
  ARGV[3] most ids to claim

  Returns
    {APPLIED, id, attempts, id, attempts, ...}  earliest due first; attempts
                                                 made so far ("0" for none)
]]
--- @include "common"

local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[3]))
local leaseUntil = tonumber(ARGV[1]) + tonumber(ARGV[2])
local claimed = {APPLIED}
for _, id in ipairs(ids) do
  redis.call("ZADD", KEYS[1], "XX", leaseUntil, id)
  table.insert(claimed, id)
  table.insert(claimed, redis.call("HGET", KEYS[2], id) or "0")
end
return claimed
