--[[
  Shared by the transition scripts (pulled in by the loader in scripts.ts).
  The codes mirror ScriptCode in codes.ts.
]]
local APPLIED = 1
local ALREADY_ENDED = 2
local NOT_DUE = 3
local NOT_FOUND = 4
local DUPLICATE = 5
local ID_TAKEN = 6

-- A code followed by the request's hash as a flat field/value list.
local function reply(code, dataKey)
  local fields = redis.call("HGETALL", dataKey)
  table.insert(fields, 1, code)
  return fields
end

-- The request is gone (never existed, or its keys expired): drop any
-- deadline or posting entry left behind so no sweep picks the id up again.
local function gone(deadlinesKey, postingKey, id)
  redis.call("ZREM", deadlinesKey, id)
  redis.call("ZREM", postingKey, id)
  return {NOT_FOUND}
end

-- Bookkeeping for a request that just left `pending`: no more deadline, no
-- more posting (an unposted request that ended is never posted), every key
-- of the request kept for `retentionMs` only, its callback (when it has a
-- callback URL) queued as due at `at`, the update of its Slack message (when
-- it has one) queued as due at `updateDueAt`, and every instance told. The
-- idempotency and message-index key names were built by keys.ts and stored in
-- the hash by create-5.lua and set-slack-4.lua. Queueing the callback here
-- makes it part of the transition: a request never ends without it; the same
-- goes for the message update.
local function finish(dataKey, deadlinesKey, callbacksKey, postingKey, id, channel, retentionMs, at, updatesKey, updateDueAt)
  redis.call("ZREM", deadlinesKey, id)
  redis.call("ZREM", postingKey, id)
  redis.call("PEXPIRE", dataKey, retentionMs)
  local idemKey = redis.call("HGET", dataKey, "idemKey")
  if idemKey then redis.call("PEXPIRE", idemKey, retentionMs) end
  local msgKey = redis.call("HGET", dataKey, "msgKey")
  if msgKey then redis.call("PEXPIRE", msgKey, retentionMs) end
  if redis.call("HEXISTS", dataKey, "callbackUrl") == 1 then redis.call("ZADD", callbacksKey, at, id) end
  if redis.call("HEXISTS", dataKey, "slack") == 1 then redis.call("ZADD", updatesKey, updateDueAt, id) end
  redis.call("PUBLISH", channel, id)
end
