--[[
  Keeps a console session that answers (an admin token's read-only ones go
  through put-sign-in-2.lua) as put-sign-in-2.lua keeps any entry (under
  the kind's bound), and holds its person to their own bound: when they already
  have as many live sessions as they may, the one that ends first is ended
  (a sign-in on one more browser signs out their oldest), so that one
  person signing in again and again cannot fill the kind for everyone. The
  caller names the session it expects to end (KEYS[4], ARGV[7]); when
  another ends first, nothing is written and its digest comes back, for the
  caller to name it and call again. (take-sign-in-3.lua takes a session
  out of its person's index.)

  KEYS[1] the session         <prefix>:console:session:<SHA-256 of its id>
  KEYS[2] the kind's index    <prefix>:console:session:live
  KEYS[3] the person's index  <prefix>:console:session:of:<SHA-256 of the person's id> (digest → end)
  KEYS[4] the session to end  <prefix>:console:session:<digest> (KEYS[1] when none)
  ARGV[1] the session's digest
  ARGV[2] the session as JSON
  ARGV[3] its end (Unix ms)
  ARGV[4] now (Unix ms)
  ARGV[5] most live sessions
  ARGV[6] most live sessions of one person
  ARGV[7] the digest of the session to end ("" when none)

  Returns
    {APPLIED}          kept (and the person's first ended, when they were at their bound)
    {CHANGED, digest}  the person is at their bound and `digest` ends first, not ARGV[7]: nothing written
    {TOO_MANY}         the kind is full: nothing kept
]]
--- @include "common"
--- @include "sign-in"

local now = tonumber(ARGV[4])
dropEnded(KEYS[3], now)
if not redis.call("ZSCORE", KEYS[3], ARGV[1]) and redis.call("ZCARD", KEYS[3]) >= tonumber(ARGV[6]) then
  local first = redis.call("ZRANGE", KEYS[3], 0, 0)[1]
  if first ~= ARGV[7] then return {CHANGED, first} end
  redis.call("DEL", KEYS[4])
  redis.call("ZREM", KEYS[2], first)
  redis.call("ZREM", KEYS[3], first)
end
local ends = tonumber(ARGV[3])
if not keepSignIn(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ends, now, tonumber(ARGV[5])) then return {TOO_MANY} end
indexEntry(KEYS[3], ARGV[1], ends, now)
return {APPLIED}
