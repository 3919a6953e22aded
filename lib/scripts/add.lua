-- Adds jobs. ARGV: 1 events(0/1), 2 n, then n items of 5 fields:
--   id, custom (1 when the caller chose the id: an idempotency key), record,
--   priority, due ('' now | 'd<ms>' after a delay | 'a<ms>' at an absolute time)
-- Reply: 1 per job created, 0 when a custom id already exists (nothing written).
eventsArg = ARGV[1] == '1'
local now
local function clock()
  if not now then now = nowMs() end
  return now
end
local out = addJobs(3, 5, tonumber(ARGV[2]), clock)
flushWake()
flushEvents()
return out
