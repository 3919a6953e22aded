-- Adds jobs. ARGV: 1 events(0/1), 2 n, then n items of 5 fields:
--   id, custom (1 when the caller chose the id: an idempotency key), record,
--   priority, due ('' now | 'd<ms>' after a delay | 'a<ms>' at an absolute time),
-- then m, then m items of 2 fields (id, record): jobs with a generated id and no options
-- (the client sends all of a call's jobs one way or the other, so they keep their order).
-- Reply: 1 per job created (the n, then the m), 0 when a custom id already exists (nothing
-- written).
eventsArg = ARGV[1] == '1'
local now
local function clock()
  if not now then now = nowMs() end
  return now
end
local n = tonumber(ARGV[2])
local plainAt = 3 + n * 5
local out = addJobs(ARGV, 3, 5, n, clock, false, plainAt + 1, tonumber(ARGV[plainAt]))
flushWake()
flushEvents()
return out
