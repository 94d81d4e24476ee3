--[[
  Shared by the console sign-in scripts (put-sign-in-2, put-session-4):
  keeping an entry under its kind's bound (src/requests/sign-ins.ts).
]]

-- Drops from a ZSET of digests (scored by their end) those past their end at `now`.
local function dropEnded(indexKey, now)
  redis.call("ZREMRANGEBYSCORE", indexKey, "-inf", now)
end

-- Adds `digest` (ending at `ends`) to a ZSET of digests, which lives as long as its last one.
local function indexEntry(indexKey, digest, ends, now)
  redis.call("ZADD", indexKey, ends, digest)
  local last = redis.call("ZRANGE", indexKey, -1, -1, "WITHSCORES")
  redis.call("PEXPIRE", indexKey, math.max(1, tonumber(last[2]) - now))
end

-- Keeps the entry (its key, its kind's index `liveKey`) unless the kind holds `max` live entries
-- (one kept again under its digest is not counted twice): true when kept.
local function keepSignIn(entryKey, liveKey, digest, json, ends, now, max)
  dropEnded(liveKey, now)
  if not redis.call("ZSCORE", liveKey, digest) and redis.call("ZCARD", liveKey) >= max then return false end
  redis.call("SET", entryKey, json, "PX", math.max(1, ends - now))
  indexEntry(liveKey, digest, ends, now)
  return true
end
