--[[
Appends one audit event (src/store/redis-audit.ts), letting events older
than the retention go. An event that is no decision is not written, but
counted in the drops hash, when the stream is at the cap (the reason given
first) or its token already holds its share of such events: no token can push old events out, nor
take another token's room (src/requests/audit.ts says why).

KEYS[1] the audit STREAM
KEYS[2] the drops HASH: `events`, `firstAt`, `lastAt` for every event not
        written; `cap:<field>` for those the cap kept out and
        `token_share:<field>:<token>` for those past a token's share
KEYS[3] the token's share LIST: the ms of the ids of its events in the stream
        that are no decision, oldest first (a key of nobody's when the event has no token)
ARGV[1] the event's JSON
ARGV[2] the oldest ms kept: now - retention
ARGV[3] the cap (events)
ARGV[4] "1" when the event records a decision (always written)
ARGV[5] the token's share (events); "0" when the event has no token
ARGV[6] the token's name
ARGV[7] now (Unix ms), for the drops' times
ARGV[8] the retention (ms): the share LIST expires when it would be empty
Returns "written", or the reason it was not: "token_share" or "cap".
]]
local oldest = ARGV[2]
redis.call('XTRIM', KEYS[1], 'MINID', oldest .. '-0')
local decision = ARGV[4] == '1'
local share = tonumber(ARGV[5])
local reason
if not decision then
  if share > 0 then
    local cutoff = tonumber(oldest)
    local first = redis.call('LINDEX', KEYS[3], 0)
    while first and tonumber(first) < cutoff do
      redis.call('LPOP', KEYS[3])
      first = redis.call('LINDEX', KEYS[3], 0)
    end
  end
  if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[3]) then
    reason = 'cap'
  elseif share > 0 and redis.call('LLEN', KEYS[3]) >= share then
    reason = 'token_share'
  end
end
if reason then
  local function count(field)
    redis.call('HINCRBY', KEYS[2], field('events'), 1)
    redis.call('HSETNX', KEYS[2], field('firstAt'), ARGV[7])
    redis.call('HSET', KEYS[2], field('lastAt'), ARGV[7])
  end
  count(function(name) return name end)
  if reason == 'cap' then
    count(function(name) return 'cap:' .. name end)
  else
    count(function(name) return 'token_share:' .. name .. ':' .. ARGV[6] end)
  end
  return reason
end
local id = redis.call('XADD', KEYS[1], '*', 'event', ARGV[1])
if not decision and share > 0 then
  redis.call('RPUSH', KEYS[3], string.match(id, '^(%d+)'))
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
end
return 'written'
