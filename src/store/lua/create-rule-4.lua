--[[
  Stores a new "Allow for a while" rule and makes it the live rule of its
  scope, removing in the same step the rule the scope named before. The
  caller read the scope first and names what it found; when the scope
  names another rule by now, nothing is written and the caller reads again.

  KEYS[1] new rule hash         <prefix>:rule:{<id>}
  KEYS[2] scope key             <prefix>:rule-scope:<digest> (id of the scope's live rule)
  KEYS[3] rules zset            <prefix>:rules (id → expiresAt, Unix ms)
  KEYS[4] hash of the rule the caller found in the scope, or KEYS[1] when none
  ARGV[1] new rule id
  ARGV[2] id of the rule the caller found in the scope, or ""
  ARGV[3] time to live (ms): the rule's expiresAt less now, at least 1
  ARGV[4] the rule's expiresAt (Unix ms)
  ARGV[5..] the new rule's hash fields as field/value pairs

  Returns
    {APPLIED}                   created; the scope named no rule
    {APPLIED, field, value, …}  created; the hash of the rule it replaced
    {CHANGED, id}               the scope names `id` ("" for none), not ARGV[2]: nothing written
    {ID_TAKEN}                  a rule with this id exists
]]
--- @include "common"

local current = redis.call("GET", KEYS[2]) or ""
if current ~= ARGV[2] then return {CHANGED, current} end
if redis.call("EXISTS", KEYS[1]) == 1 then return {ID_TAKEN} end
local result = {APPLIED}
if current ~= "" then
  result = reply(APPLIED, KEYS[4])
  redis.call("DEL", KEYS[4])
  redis.call("ZREM", KEYS[3], current)
end
redis.call("HSET", KEYS[1], unpack(ARGV, 5))
redis.call("PEXPIRE", KEYS[1], ARGV[3])
redis.call("SET", KEYS[2], ARGV[1], "PX", ARGV[3])
redis.call("ZADD", KEYS[3], ARGV[4], ARGV[1])
return result
