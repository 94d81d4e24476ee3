--[[
  Records the ts of a rule's tally unless one is recorded already (the
  first wins). Who posts it is settled by the tallies queue's lease.

  KEYS[1] rule hash     <prefix>:rule:{<id>}
  ARGV[1] the tally's ts
  ARGV[2] now (Unix ms)

  Returns
    {APPLIED, field, value, …}  the rule's hash as it now is
    {NOT_FOUND}                 the rule is gone or past its time
]]
--- @include "common"
--- @include "rule"

if not ruleLives(KEYS[1], ARGV[2]) then return {NOT_FOUND} end
redis.call("HSETNX", KEYS[1], "tallyTs", ARGV[1])
return reply(APPLIED, KEYS[1])
