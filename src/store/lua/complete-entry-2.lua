--[[
  Any leased queue (see claim-entries-2.lua): forgets a queued entry, done
  or given up.

  KEYS[1] queue zset           <prefix>:<queue>
  KEYS[2] attempts hash        <prefix>:<queue>-attempts
  ARGV[1] entry

  Returns
    {APPLIED}
    {NOT_FOUND}  the entry was not queued
]]
--- @include "common"

redis.call("HDEL", KEYS[2], ARGV[1])
if redis.call("ZREM", KEYS[1], ARGV[1]) == 0 then return {NOT_FOUND} end
return {APPLIED}
