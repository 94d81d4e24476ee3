--[[
  Counts one use of a live rule: the count and the check that the rule
  still lives are one step, so a use after a revoke or past the rule's
  time is never counted.

  KEYS[1] rule hash     <prefix>:rule:{<id>}
  ARGV[1] now (Unix ms)

  Returns
    {APPLIED, field, value, …}  the rule's hash with the new count
    {NOT_FOUND}                 the rule is gone or past its time
]]
--- @include "common"
--- @include "rule"

if not ruleLives(KEYS[1], ARGV[1]) then return {NOT_FOUND} end
redis.call("HINCRBY", KEYS[1], "uses", 1)
return reply(APPLIED, KEYS[1])
