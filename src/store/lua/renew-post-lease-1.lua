--[[
  Extends the lease of a request's poster while it keeps trying. Never puts
  back an id that left the posting set (posted, ended or forgotten meanwhile):
  the poster learns that it should stop.

  KEYS[1] posting zset         <prefix>:posting
  ARGV[1] request id
  ARGV[2] new end of the lease (Unix ms)

  Returns
    {APPLIED}
    {NOT_FOUND}  the id is not in the posting set
]]
--- @include "common"

if not redis.call("ZSCORE", KEYS[1], ARGV[1]) then return {NOT_FOUND} end
redis.call("ZADD", KEYS[1], "XX", ARGV[2], ARGV[1])
return {APPLIED}
