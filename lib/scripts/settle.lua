-- Settles leases (ack, nack, requeue, reject) without leasing more.
-- KEYS[16] = this request's replay record (include/replay.lua).
-- ARGV: 1 events(0/1), 2 policy defaults (include/common.lua), 3.. settle items
-- (include/settle.lua). Reply: 0/1 per item.
eventsArg = ARGV[1] == '1'
local recorded = redis.call('GET', KEYS[16])
if recorded then return (recordedRequest(recorded)) end
local now = nowMs()
local ended = endedLeases()
local settled = settleItems(ARGV, 3, now, parseDefaults(ARGV[2]), ended)
recordRequest(KEYS[16], settled, {}, 0)
flushEnded(ended)
flushWake()
flushEvents()
return settled
