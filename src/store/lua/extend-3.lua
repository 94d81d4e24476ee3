--[[
  Gives a pending request more time: its deadline moves to ARGV[2] (never
  earlier than it was), in the deadlines zset too, so every instance's
  expiry sweep follows it; its keys (the hash, and the idempotency and
  message index keys it names) live until the new deadline plus the
  retention, as create-8.lua set them for the first; and when it has a
  Slack message, the update that shows the new deadline is queued, as a
  counted approval's is (approve-7.lua). Queued reminders stay as they are.

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] deadlines zset       <prefix>:deadlines
  KEYS[3] updates zset         <prefix>:updates
  ARGV[1] request id
  ARGV[2] the new deadline (Unix ms)
  ARGV[3] now (Unix ms)
  ARGV[4] retention (ms)
  ARGV[5] when the message update is due (Unix ms)

  Returns
    {APPLIED, field, value, ...}        moved (or already as late); the stored hash
    {ALREADY_ENDED, field, value, ...}  the request had ended; how it ended
    {NOT_FOUND}                         (its stale deadline is removed)
]]
--- @include "common"

local status = redis.call("HGET", KEYS[1], "status")
if not status then
  redis.call("ZREM", KEYS[2], ARGV[1])
  return {NOT_FOUND}
end
if status ~= "pending" then return reply(ALREADY_ENDED, KEYS[1]) end

-- The strings as given are stored: no number is formatted here (Lua would write 13 digits in exponent form).
local deadline = redis.call("HGET", KEYS[1], "expiresAt")
if tonumber(ARGV[2]) > tonumber(deadline) then deadline = ARGV[2] end
redis.call("HSET", KEYS[1], "expiresAt", deadline)
redis.call("ZADD", KEYS[2], deadline, ARGV[1])
local ttl = tonumber(ARGV[4]) + math.max(math.ceil(tonumber(deadline) - tonumber(ARGV[3])), 0)
redis.call("PEXPIRE", KEYS[1], ttl)
local idemKey = redis.call("HGET", KEYS[1], "idemKey")
if idemKey then redis.call("PEXPIRE", idemKey, ttl) end
local msgKey = redis.call("HGET", KEYS[1], "msgKey")
if msgKey then redis.call("PEXPIRE", msgKey, ttl) end
if redis.call("HEXISTS", KEYS[1], "slack") == 1 then redis.call("ZADD", KEYS[3], ARGV[5], ARGV[1]) end
return reply(APPLIED, KEYS[1])
