--[[
  Settles leases (ack, nack, requeue, reject, delay) without leasing more
  (lib/core/settles/settling.ts settle()). A request run twice (redis/replay.lua) answers
  as the first run did and changes nothing.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)
    KEYS[16]     this request's replay record, '<tag>:req:<reqId>'

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      policy: the built-in policy defaults (settles/policy.lua)
    ARGV[3..]    items: settle items (settles/settle-items.lua)

  Output:
    0/1 per settle item (1: the token held the job, which is settled): the full ones, then
    the plain acks

  Events:
    completed, failed, retried, dead, limited, delayed; added (an add kept for the end of a
    job that held its deduplication id, adds/deduplication-ends.lua)
]]
eventsArg = ARGV[1] == '1'
local recorded = redis.call('GET', KEYS[16])
if recorded then return (recordedRequest(recorded)) end
local now = nowMs()
local ended = endedLeases()
local settled = settleItems(ARGV, 3, now, parseDefaults(ARGV[2]), ended)
recordRequest(KEYS[16], settled, {}, 0)
forgetDropped()
flushRetention() -- management/remove.lua
flushEnded(ended)
flushWake()
flushEvents()
return settled
