-- Settles finished leases, then leases up to `count` more, in one round trip.
-- KEYS[16] = this request's replay record.
-- ARGV: 1 events(0/1), 2 reqId, 3 count, 4 leaseMs, 5 woken(0/1), 6 promoteLimit, 7.. settle items
-- Reply: { settled 0/1 per item, {now, nextDue or -1, paused, id, token, deadline, record, ...} }
eventsArg = ARGV[1] == '1'
local now = nowMs()
local settled = settleItems(now, 7)
local recorded = redis.call('GET', KEYS[16])
local reply, nextDue, paused
if recorded then
  reply, nextDue, paused = replayLease(recorded, ARGV[2]), nil, 0
else
  reply, nextDue, paused = leaseJobs(now, KEYS[16], ARGV[2], tonumber(ARGV[3]),
    tonumber(ARGV[4]), ARGV[5] == '1', tonumber(ARGV[6]))
end
flushWake()
flushEvents()
local head = { now, nextDue or -1, paused }
for _, v in ipairs(reply) do head[#head + 1] = v end
return { settled, head }
