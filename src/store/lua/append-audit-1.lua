--[[
Appends one audit event (src/store/redis-audit.ts), letting events older
than the retention go; at the cap, an event that is no decision is not
written (the caller counts it), so no token can push old events out.

KEYS[1] the audit STREAM
ARGV[1] the event's JSON
ARGV[2] the oldest id kept: `<now - retention ms>-0`
ARGV[3] the cap (events)
ARGV[4] "1" when the event records a decision (always written)
Returns 1 when written, 0 when left out at the cap.
]]
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[2])
if ARGV[4] ~= '1' and redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('XADD', KEYS[1], '*', 'event', ARGV[1])
return 1
