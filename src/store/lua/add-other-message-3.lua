--[[
  Records another message posted for a request (a copy left by a retry whose
  first reply from Slack was lost), with the index that maps it back to the
  request. Works in any status; never creates a request. When the request
  has already ended, the update of its messages is queued: the copy must
  show the outcome too.

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] message index key    <prefix>:msg:<channel>:<ts>
  KEYS[3] updates zset         <prefix>:updates
  ARGV[1] request id
  ARGV[2] hash field of the message (other:<channel>:<ts>, built by redis-record.ts)
  ARGV[3] {channel, ts} (JSON, opaque here)
  ARGV[4] when the message update is due (Unix ms)

  Returns
    {APPLIED, field, value, ...}  the stored hash, as it now is
    {NOT_FOUND}

  The index key lives as long as the request's hash (its remaining TTL).
]]
--- @include "common"

if redis.call("EXISTS", KEYS[1]) == 0 then return {NOT_FOUND} end

redis.call("HSET", KEYS[1], ARGV[2], ARGV[3])
indexMessage(KEYS[1], KEYS[2], ARGV[1])
if redis.call("HGET", KEYS[1], "status") ~= "pending" then redis.call("ZADD", KEYS[3], ARGV[4], ARGV[1]) end
return reply(APPLIED, KEYS[1])
