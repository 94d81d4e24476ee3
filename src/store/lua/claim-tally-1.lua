--[[
  Leases the posting of a rule's tally (the thread reply counting its uses)
  to the caller, while the rule lives, has no tally recorded and no other
  lease runs. The lease is a field of the rule's hash, so it goes with it.

  KEYS[1] rule hash     <prefix>:rule:{<id>}
  ARGV[1] now (Unix ms)
  ARGV[2] end of the lease (Unix ms)

  Returns
    {APPLIED}    the caller posts the tally
    {DUPLICATE}  a tally is recorded, or another caller's lease runs
    {NOT_FOUND}  the rule is gone or past its time
]]
--- @include "common"
--- @include "rule"

if not ruleLives(KEYS[1], ARGV[1]) then return {NOT_FOUND} end
if redis.call("HEXISTS", KEYS[1], "tallyTs") == 1 then return {DUPLICATE} end
local lease = tonumber(redis.call("HGET", KEYS[1], "tallyLease") or "")
if lease ~= nil and lease > tonumber(ARGV[1]) then return {DUPLICATE} end
redis.call("HSET", KEYS[1], "tallyLease", ARGV[2])
return {APPLIED}
