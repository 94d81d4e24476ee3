--[[
  Stores a new request, atomically with its idempotency key, its place in
  the index of recent requests and, while it waits for its Slack message,
  its place in the posting set; while it is pending, it counts against its
  agent token's cap and a create asking the same joins it.

  KEYS[1] request hash         <prefix>:{<id>}:data
  KEYS[2] deadlines zset       <prefix>:deadlines
  KEYS[3] idempotency key      <prefix>:idem:<scoped key>, or KEYS[1] again
                               for none (not "": an ACL user limited to the
                               prefix's keys may not name an empty key)
  KEYS[4] callbacks zset       <prefix>:callbacks
  KEYS[5] posting zset         <prefix>:posting
  KEYS[6] recent zset          <prefix>:recent (id → createdAt), trimmed to
                               the newest ARGV[8]
  KEYS[7] token's pending zset <prefix>:pending:<token name> (id →
                               expiresAt): the token's requests that were
                               pending when last looked at; one that left
                               the deadlines zset has ended
  KEYS[8] same-ask key         <prefix>:same:<ask key> (the id of the
                               pending request that asks the same), or
                               KEYS[1] again for none
  ARGV[1] request id
  ARGV[2] pub/sub channel for ended requests
  ARGV[3] now (Unix ms)
  ARGV[4] retention (ms)
  ARGV[5] stale id: KEYS[3] may be taken over while it still names this id
          (the caller saw that request gone), or ""
  ARGV[6] end of the creator's post lease (Unix ms)
  ARGV[7] when the request was created (Unix ms)
  ARGV[8] most ids the recent zset keeps
  ARGV[9] most pending requests the token may hold with this one (a
          pending record only), or "" for no cap (nothing counted)
  ARGV[10..] the record's hash fields as field/value pairs; they include
          `status` and `expiresAt` (Unix ms), and `callbackUrl` when the
          request has one

  Returns
    {APPLIED}                     created (the caller holds the record it sent)
    {DUPLICATE, id}               KEYS[3] already names request `id`
    {JOINED, id}                  KEYS[8] names request `id`, still pending
    {TOO_MANY, count, earliest}   the token holds `count` pending requests,
                                  ARGV[9] or more; the earliest runs out at
                                  `earliest` (Unix ms): nothing written
    {ID_TAKEN}                    a request with this id already exists

  A pending request enters the deadlines zset and lives until expiresAt +
  retention at most; unless it comes with its Slack message, it also enters
  the posting zset, scored by ARGV[6], so that another instance posts it if
  the creator dies first. A request created already ended (autonomous
  answers) lives for the retention only, is published at once and, when it
  has a callback URL, has its callback queued as due now.
]]
--- @include "common"

local idempotent = KEYS[3] ~= KEYS[1]
if idempotent then
  local existing = redis.call("GET", KEYS[3])
  if existing and existing ~= ARGV[5] then return {DUPLICATE, existing} end
end
local joinable = KEYS[8] ~= KEYS[1]
if joinable then
  local named = redis.call("GET", KEYS[8])
  if named and redis.call("ZSCORE", KEYS[2], named) then return {JOINED, named} end
end
if redis.call("EXISTS", KEYS[1]) == 1 then return {ID_TAKEN} end
local capped = ARGV[9] ~= ""
if capped then
  local limit = tonumber(ARGV[9])
  if redis.call("ZCARD", KEYS[7]) >= limit then
    -- Forget the ones that ended since (they left the deadlines zset), then count again.
    for _, id in ipairs(redis.call("ZRANGE", KEYS[7], 0, -1)) do
      if not redis.call("ZSCORE", KEYS[2], id) then redis.call("ZREM", KEYS[7], id) end
    end
    local count = redis.call("ZCARD", KEYS[7])
    if count >= limit then
      local earliest = redis.call("ZRANGE", KEYS[7], 0, 0, "WITHSCORES")
      return {TOO_MANY, tostring(count), earliest[2]}
    end
  end
end

redis.call("HSET", KEYS[1], unpack(ARGV, 10))
redis.call("ZADD", KEYS[6], ARGV[7], ARGV[1])
redis.call("ZREMRANGEBYRANK", KEYS[6], 0, -(tonumber(ARGV[8]) + 1))
local status = redis.call("HGET", KEYS[1], "status")
local ttl = tonumber(ARGV[4])
if status == "pending" then
  local expiresAt = redis.call("HGET", KEYS[1], "expiresAt")
  redis.call("ZADD", KEYS[2], expiresAt, ARGV[1])
  ttl = ttl + math.max(math.ceil(tonumber(expiresAt) - tonumber(ARGV[3])), 0)
  if redis.call("HEXISTS", KEYS[1], "slack") == 0 then redis.call("ZADD", KEYS[5], ARGV[6], ARGV[1]) end
  if capped then
    redis.call("ZADD", KEYS[7], expiresAt, ARGV[1])
    if redis.call("PTTL", KEYS[7]) < ttl then redis.call("PEXPIRE", KEYS[7], ttl) end
  end
  if joinable then redis.call("SET", KEYS[8], ARGV[1], "PX", math.max(1, math.ceil(tonumber(expiresAt) - tonumber(ARGV[3])))) end
end
redis.call("PEXPIRE", KEYS[1], ttl)
if idempotent then
  redis.call("SET", KEYS[3], ARGV[1], "PX", ttl)
  redis.call("HSET", KEYS[1], "idemKey", KEYS[3])
end
if status ~= "pending" then
  if redis.call("HEXISTS", KEYS[1], "callbackUrl") == 1 then redis.call("ZADD", KEYS[4], ARGV[3], ARGV[1]) end
  redis.call("PUBLISH", ARGV[2], ARGV[1])
end
return {APPLIED}
