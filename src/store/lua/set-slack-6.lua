--[[
  Records where a request's Slack message lives, with the index that maps the
  message back to the request, and takes the request out of the posting set:
  it is posted. Works in any status; never creates a request. The first time
  a pending request's message is recorded, the same step records when it
  was posted and queues its reminders and escalations; a repeated call
  queues nothing again. A request that has already ended gets the update of
  its message queued, and its outcome notices unless they were queued before.

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] message index key    <prefix>:msg:<channel>:<ts>
  KEYS[3] posting zset         <prefix>:posting
  KEYS[4] updates zset         <prefix>:updates (queued here when the request
                               has already ended: its message must show it)
  KEYS[5] reminders zset       <prefix>:reminders (members <id>:<index>, as
                               leased-queue.ts builds them)
  KEYS[6] notices zset         <prefix>:notices (queued here when the request
                               has already ended; see queueNotices in
                               includes/common.lua)
  ARGV[1] request id
  ARGV[2] {channel, ts} (JSON, opaque here)
  ARGV[3] when that message update is due (Unix ms)
  ARGV[4] when the message was posted (Unix ms), stored as postedAt
  ARGV[5] when those outcome notices are due (Unix ms)
  ARGV[6..] reminders as pairs: schedule index, when it is due (Unix ms)

  Returns
    {APPLIED, field, value, ...}  the stored hash, as it now is
    {NOT_FOUND}

  The index key lives as long as the request's hash (its remaining TTL). The
  queued indexes are kept in the hash (`reminders`, e.g. "0,1,3") so the
  step that ends the request drops them (see finish in common.lua).
]]
--- @include "common"

redis.call("ZREM", KEYS[3], ARGV[1])
if redis.call("EXISTS", KEYS[1]) == 0 then return {NOT_FOUND} end

redis.call("HSET", KEYS[1], "slack", ARGV[2], "msgKey", KEYS[2])
indexMessage(KEYS[1], KEYS[2], ARGV[1])
if redis.call("HGET", KEYS[1], "status") ~= "pending" then
  redis.call("ZADD", KEYS[4], ARGV[3], ARGV[1])
  queueNotices(KEYS[1], KEYS[6], ARGV[1], ARGV[5])
elseif redis.call("HEXISTS", KEYS[1], "postedAt") == 0 then
  redis.call("HSET", KEYS[1], "postedAt", ARGV[4])
  local indexes = {}
  for i = 6, #ARGV - 1, 2 do
    redis.call("ZADD", KEYS[5], ARGV[i + 1], ARGV[1] .. ":" .. ARGV[i])
    table.insert(indexes, ARGV[i])
  end
  if #indexes > 0 then redis.call("HSET", KEYS[1], "reminders", table.concat(indexes, ",")) end
end
return reply(APPLIED, KEYS[1])
