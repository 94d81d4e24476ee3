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
local COUNTED = 7
local CHANGED = 8
local JOINED = 9
local TOO_MANY = 10

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

-- Ending a request. The scripts that can (answer-8, expire-8, cancel-8,
-- fail-8 and approve-8) all take these first keys and arguments, and hand
-- them to finish as they are:
--   key 1  request hash       <prefix>:{<id>}:data
--   key 2  deadlines zset     <prefix>:deadlines (the request leaves it)
--   key 3  callbacks zset     <prefix>:callbacks (its callback is queued here
--                             when it has a callback URL)
--   key 4  posting zset       <prefix>:posting (the request leaves it)
--   key 5  updates zset       <prefix>:updates (its message update is queued
--                             here when it has a Slack message, or left the
--                             posting zset: a post may have reached Slack
--                             unrecorded, its poster killed before the reply)
--   key 6  reminders zset     <prefix>:reminders (its queued reminders are
--                             dropped)
--   key 7  attempts hash      <prefix>:reminder-attempts
--   key 8  notices zset       <prefix>:notices (its outcome notices are
--                             queued here when it has a Slack message)
--   arg 1  request id
--   arg 2  pub/sub channel for ended requests
--   arg 3  time of the step (Unix ms), stored as endedAt
--   arg 4  retention (ms)
--   arg 5  when the message update is due (Unix ms)

-- The outcome notices of an ended request with a Slack message, due at
-- `dueAt`, once: the thread part (member <id>:thread), and the dm part
-- (<id>:dm, as leased-queue.ts builds them) when the hash has `requestedBy`
-- (redis-record.ts repeats the policy's user id there). `noticesQueued`
-- marks them queued, so a later step (set-slack-6 recording the message
-- again) never queues them twice.
local function queueNotices(dataKey, noticesKey, id, dueAt)
  if redis.call("HSETNX", dataKey, "noticesQueued", "1") == 0 then return end
  redis.call("ZADD", noticesKey, dueAt, id .. ":thread")
  if redis.call("HEXISTS", dataKey, "requestedBy") == 1 then redis.call("ZADD", noticesKey, dueAt, id .. ":dm") end
end

-- Bookkeeping for a request that just left `pending`: no more deadline, no
-- more posting (an unposted request that ended is never posted), every key
-- of the request kept for the retention only, its queued reminders dropped
-- (none is handed out after it ended), its callback (when it has a callback
-- URL) queued as due when it ended, the update of its Slack message and its
-- outcome notices (when it has one) queued, and every instance told. A
-- request that ended still in the posting zset gets its update queued too:
-- its poster may have died after Slack took the message and before the
-- reply, and the update finds such a message in the channel's history. The idempotency and
-- message-index key names were built by keys.ts and stored in the hash by
-- create-8.lua and set-slack-6.lua, with the schedule indexes of the queued
-- reminders (`reminders`, e.g. "0,1,3"; members `<id>:<index>`, as
-- leased-queue.ts builds them). Queueing the callback here makes it part of
-- the transition: a request never ends without it; the same goes for the
-- message update.
local function finish(keys, args)
  local dataKey, id, retentionMs, at = keys[1], args[1], args[4], args[3]
  redis.call("ZREM", keys[2], id)
  local unposted = redis.call("ZREM", keys[4], id) == 1
  redis.call("PEXPIRE", dataKey, retentionMs)
  local idemKey = redis.call("HGET", dataKey, "idemKey")
  if idemKey then redis.call("PEXPIRE", idemKey, retentionMs) end
  local msgKey = redis.call("HGET", dataKey, "msgKey")
  if msgKey then redis.call("PEXPIRE", msgKey, retentionMs) end
  local reminders = redis.call("HGET", dataKey, "reminders")
  if reminders then
    for index in string.gmatch(reminders, "%d+") do
      redis.call("ZREM", keys[6], id .. ":" .. index)
      redis.call("HDEL", keys[7], id .. ":" .. index)
    end
    redis.call("HDEL", dataKey, "reminders")
  end
  if redis.call("HEXISTS", dataKey, "callbackUrl") == 1 then redis.call("ZADD", keys[3], at, id) end
  if redis.call("HEXISTS", dataKey, "slack") == 1 then
    redis.call("ZADD", keys[5], args[5], id)
    queueNotices(dataKey, keys[8], id, at)
  elseif unposted then
    redis.call("ZADD", keys[5], args[5], id)
  end
  redis.call("PUBLISH", args[2], id)
end

-- Points a message index key at the request, for as long as the request's
-- hash lives (its remaining TTL).
local function indexMessage(dataKey, indexKey, id)
  local ttl = redis.call("PTTL", dataKey)
  if ttl > 0 then
    redis.call("SET", indexKey, id, "PX", ttl)
  else
    redis.call("SET", indexKey, id)
  end
end
