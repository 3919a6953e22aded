-- Settles finished leases, then leases up to `count` more, in one round trip.
-- KEYS[16] = this request's replay record (include/replay.lua).
-- ARGV: 1 events(0/1), 2 reqId, 3 count, 4 leaseMs, 5 woken(0/1), 6 promoteLimit,
--   7 policy defaults (include/common.lua), 8.. settle items (include/settle.lua)
-- Reply: { settled 0/1 per item, {now, nextDue or -1, state, ghosts, id, token, deadline, record, ...} }
--   state: 0, 1 paused, 2 closed and drained, 3 deleted; ghosts: ids without a record dropped
eventsArg = ARGV[1] == '1'
local now = nowMs()
local recorded = redis.call('GET', KEYS[16])
local ended = endedLeases()
local settled, reply, nextDue, state, ghosts
if recorded then
  local ids
  settled, ids = recordedRequest(recorded)
  reply, nextDue, state, ghosts = replayLeases(ids, ARGV[2]), nil, 0, 0
else
  local leaseMs = tonumber(ARGV[4])
  local leased
  local defaults = parseDefaults(ARGV[7])
  settled = settleItems(ARGV, 8, now, defaults, ended)
  reply, nextDue, state, ghosts, leased = leaseJobs(now, ARGV[2], tonumber(ARGV[3]), leaseMs, ARGV[5] == '1', tonumber(ARGV[6]), defaults)
  recordRequest(KEYS[16], settled, leased, leaseMs)
end
flushEnded(ended)
flushWake()
flushEvents()
local head = { now, nextDue or -1, state, ghosts }
for _, v in ipairs(reply) do head[#head + 1] = v end
return { settled, head }
