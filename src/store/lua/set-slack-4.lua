--[[
  Records where a request's Slack message lives, with the index that maps the
  message back to the request, and takes the request out of the posting set:
  it is posted. Works in any status; never creates a request.

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] message index key    <prefix>:msg:<channel>:<ts>
  KEYS[3] posting zset         <prefix>:posting
  KEYS[4] updates zset         <prefix>:updates (queued here when the request
                               has already ended: its message must show it)
  ARGV[1] request id
  ARGV[2] {channel, ts} (JSON, opaque here)
  ARGV[3] when that message update is due (Unix ms)

  Returns
    {APPLIED, field, value, ...}  the stored hash, as it now is
    {NOT_FOUND}

  The index key lives as long as the request's hash (its remaining TTL).
]]
--- @include "common"

redis.call("ZREM", KEYS[3], ARGV[1])
if redis.call("EXISTS", KEYS[1]) == 0 then return {NOT_FOUND} end

redis.call("HSET", KEYS[1], "slack", ARGV[2], "msgKey", KEYS[2])
local ttl = redis.call("PTTL", KEYS[1])
if ttl > 0 then
  redis.call("SET", KEYS[2], ARGV[1], "PX", ttl)
else
  redis.call("SET", KEYS[2], ARGV[1])
end
if redis.call("HGET", KEYS[1], "status") ~= "pending" then redis.call("ZADD", KEYS[4], ARGV[3], ARGV[1]) end
return reply(APPLIED, KEYS[1])
