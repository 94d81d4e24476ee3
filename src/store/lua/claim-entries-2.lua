--[[
  Any leased queue (requests/store.ts QueueName: posting, updates,
  reminders, notices, callbacks, tallies), each a zset of entries scored by when each
  is due and a hash of the attempts made at each (store/keys.ts queues).

  Hands out the entries that are due, each to one caller only: every entry
  returned is made due again only at now + lease, so no other instance
  claims it while this one works on it. A caller that dies leaves its claims
  to be taken again when the lease runs out.

  KEYS[1] queue zset           <prefix>:<queue> (entry → due, Unix ms)
  KEYS[2] attempts hash        <prefix>:<queue>-attempts (entry → count)
  ARGV[1] now (Unix ms)
  ARGV[2] lease (ms)
  ARGV[3] most entries to claim

  Returns
    {APPLIED, entry, attempts, entry, attempts, ...}  earliest due first;
                                                       attempts made so far ("0" for none)
]]
--- @include "common"

local entries = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[3]))
local leaseUntil = tonumber(ARGV[1]) + tonumber(ARGV[2])
local claimed = {APPLIED}
for _, entry in ipairs(entries) do
  redis.call("ZADD", KEYS[1], "XX", leaseUntil, entry)
  table.insert(claimed, entry)
  table.insert(claimed, redis.call("HGET", KEYS[2], entry) or "0")
end
return claimed
