--[[
  Keeps a console sign-in entry (src/requests/sign-ins.ts) until its end,
  unless its kind already holds as many live entries as it may: the count
  and the write are one step, so instances that put at once never pass the
  bound together. An entry counts while its end is after the caller's
  `now` (the memory store's rule); one put again under its digest replaces
  itself and is not counted twice. The index lives as long as its last
  entry.

  KEYS[1] the entry     <prefix>:console:<kind>:<SHA-256 of its secret>
  KEYS[2] kind's index  <prefix>:console:<kind>:live (digest → end, Unix ms)
  ARGV[1] the entry's digest
  ARGV[2] the entry as JSON
  ARGV[3] its end (Unix ms)
  ARGV[4] now (Unix ms)
  ARGV[5] most live entries of the kind

  Returns
    {APPLIED}   kept
    {TOO_MANY}  the kind is full: nothing was kept
]]
--- @include "common"

local now = tonumber(ARGV[4])
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
if not redis.call("ZSCORE", KEYS[2], ARGV[1]) and redis.call("ZCARD", KEYS[2]) >= tonumber(ARGV[5]) then
  return {TOO_MANY}
end
local ends = tonumber(ARGV[3])
redis.call("SET", KEYS[1], ARGV[2], "PX", math.max(1, ends - now))
redis.call("ZADD", KEYS[2], ends, ARGV[1])
local last = redis.call("ZRANGE", KEYS[2], -1, -1, "WITHSCORES")
redis.call("PEXPIRE", KEYS[2], math.max(1, tonumber(last[2]) - now))
return {APPLIED}
