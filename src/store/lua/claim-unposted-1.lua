--[[
  Hands out the requests whose Slack message is still unposted once their
  poster's lease has run out, each to one caller only: every id returned is
  leased again until now + lease, so no other instance posts it meanwhile. A
  poster that dies leaves its request to be claimed when the lease runs out.

  KEYS[1] posting zset         <prefix>:posting (request id → lease end, Unix ms)
  ARGV[1] now (Unix ms)
  ARGV[2] lease (ms)
  ARGV[3] most ids to claim

  Returns
    {APPLIED, id, id, ...}  earliest lease end first
]]
--- @include "common"

local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[3]))
local leaseUntil = tonumber(ARGV[1]) + tonumber(ARGV[2])
local claimed = {APPLIED}
for _, id in ipairs(ids) do
  redis.call("ZADD", KEYS[1], "XX", leaseUntil, id)
  table.insert(claimed, id)
end
return claimed
