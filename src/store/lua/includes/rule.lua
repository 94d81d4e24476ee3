--[[
  Shared by the rule scripts (create-rule-4, use-rule-1, revoke-rule-3,
  set-tally-1), after "common".
]]

-- True when the rule hash exists and its expiresAt (Unix ms) is after now:
-- a rule past its time never applies, even while Redis still keeps its key.
local function ruleLives(ruleKey, now)
  local expiresAt = tonumber(redis.call("HGET", ruleKey, "expiresAt") or "")
  return expiresAt ~= nil and expiresAt > tonumber(now)
end
