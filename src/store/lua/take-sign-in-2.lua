--[[
  Uses up a console sign-in entry (a sign-in link, or a started Sign in with
  Slack), or removes one (a sign-out): it is read and removed in one step,
  with its place in its kind's index, so of two instances that take it at
  once, one gets it (src/requests/sign-ins.ts). Whether it is still within
  its time is judged by the caller, against its own clock.

  KEYS[1] the entry     <prefix>:console:<kind>:<SHA-256 of its secret>
  KEYS[2] kind's index  <prefix>:console:<kind>:live
  ARGV[1] the entry's digest (its member in the index)

  Returns
    {APPLIED, json}  the entry as it was kept
    {NOT_FOUND}      no such entry (never kept, taken already, or expired)
]]
--- @include "common"

redis.call("ZREM", KEYS[2], ARGV[1])
local value = redis.call("GET", KEYS[1])
if not value then return {NOT_FOUND} end
redis.call("DEL", KEYS[1])
return {APPLIED, value}
