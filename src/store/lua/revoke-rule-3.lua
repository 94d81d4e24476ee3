--[[
  Removes a live rule, its place in the listing and its scope key while that
  still names it (a newer rule of the scope keeps the scope).

  KEYS[1] rule hash     <prefix>:rule:{<id>}
  KEYS[2] scope key     <prefix>:rule-scope:<digest> of the rule's scope
  KEYS[3] rules zset    <prefix>:rules
  ARGV[1] rule id
  ARGV[2] now (Unix ms)

  Returns
    {APPLIED, field, value, …}  the rule's hash as it was
    {NOT_FOUND}                 the rule is gone or past its time
]]
--- @include "common"
--- @include "rule"

if not ruleLives(KEYS[1], ARGV[2]) then return {NOT_FOUND} end
local result = reply(APPLIED, KEYS[1])
redis.call("DEL", KEYS[1])
if redis.call("GET", KEYS[2]) == ARGV[1] then redis.call("DEL", KEYS[2]) end
redis.call("ZREM", KEYS[3], ARGV[1])
return result
