--[[
  Adds jobs on the plain path: FCALL + HSETNX + RPUSH for a job without options. The
  producer (lib/core/adds/producer.ts) sends jobs here while the queue has no bound,
  groups, stats or close checks, and produce.lua otherwise.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2..]    jobs: n, the jobs given in full, 5 fields each:
                   id, custom ('1' when the caller chose the id: an idempotency key, else
                   '0'), record, priority, due ('' now | 'l' now, at the head of its
                   priority or group: lifo | 'd<ms>' after a delay | 'a<ms>' at an absolute
                   time, Redis clock);
                 then m, the jobs with a generated id and no options, 2 fields each: id, record.
                 A call sends all its jobs one way or the other (n = 0 or m = 0), so they keep
                 their order.

  Output:
    one integer per job, the n then the m: 1 created (a generated id found existing is this
    very request replayed after a lost reply: created too), 0 its custom id exists or its
    idempotency window is still open (nothing written)

  Events:
    added (each job created)
]]
eventsArg = ARGV[1] == '1'
local now
local function clock()
  if not now then now = nowMs() end
  return now
end
local n = num(ARGV[2])
local plainAt = 3 + n * 5
local out = addJobs(ARGV, 3, 5, n, clock, false, plainAt + 1, num(ARGV[plainAt]))
flushWake()
flushEvents()
return out
