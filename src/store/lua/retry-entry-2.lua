--[[
  Any leased queue (see claim-entries-2.lua): makes a queued entry due at
  ARGV[2] with ARGV[3] attempts made so far: the next attempt after a failed
  one, or a lease renewed by a caller still at work (the same attempts).
  Never queues an entry that is not there (completed meanwhile, or taken
  out by the step that ended its request): the caller learns it may stop.
  No attempts are stored for 0, so a queue whose entries are never retried
  (posting) keeps no hash.

  KEYS[1] queue zset           <prefix>:<queue>
  KEYS[2] attempts hash        <prefix>:<queue>-attempts
  ARGV[1] entry
  ARGV[2] when it is due (Unix ms)
  ARGV[3] attempts made so far

  Returns
    {APPLIED}
    {NOT_FOUND}  the entry is not queued
]]
--- @include "common"

if not redis.call("ZSCORE", KEYS[1], ARGV[1]) then return {NOT_FOUND} end
redis.call("ZADD", KEYS[1], "XX", ARGV[2], ARGV[1])
if tonumber(ARGV[3]) == 0 then
  redis.call("HDEL", KEYS[2], ARGV[1])
else
  redis.call("HSET", KEYS[2], ARGV[1], ARGV[3])
end
return {APPLIED}
