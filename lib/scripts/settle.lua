-- Settles leases (ack, nack, requeue, reject) without leasing more.
-- ARGV: 1 events(0/1), 2.. settle items. Reply: 0/1 per item.
eventsArg = ARGV[1] == '1'
local now = nowMs()
local settled = settleItems(now, 2)
flushWake()
flushEvents()
return settled
