--[[
  Adds jobs on the plain path: FCALL + HSETNX + RPUSH for a job without options. The
  producer (lib/core/adds/producer.ts) sends jobs here while the queue has no bound,
  groups, stats or close checks, and produce.lua otherwise.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not; for a
                 partition of a partitioned queue followed by ':<epoch>', the epoch of the
                 map its producer routed with
    ARGV[2..]    jobs: n, the jobs given in full, 5 fields each:
                   id, flag ('1' when the caller chose the id: an idempotency key, else
                   '0'; '3' and '2' the same for a job whose meta holds a deduplication id,
                   adds/deduplication.lua), record, priority, due ('' now | 'l' now, at the
                   head of its priority or group: lifo | 'd<ms>' after a delay | 'a<ms>' at
                   an absolute time, Redis clock);
                 then m, the jobs with a generated id and no options, 2 fields each: id, record.
                 A call sends all its jobs one way or the other (n = 0 or m = 0), so they keep
                 their order.

  Output:
    'moved' for a partition that saw a later epoch (partitions/fence-partition.lua): nothing
    written, the producer reads the map again and routes the jobs anew; otherwise
    one value per job, the n then the m: 1 created (a generated id found existing is this
    very request replayed after a lost reply: created too), 0 its custom id exists or its
    idempotency window is still open (nothing written); for a job whose deduplication id
    another job holds, 'i' (ignored: nothing written), 'r' (that job, waiting, got this one's
    data and due time) or 'd' (kept until that job, running, ends), followed by that job's id

  Events:
    added (each job created); deduplicated (each job whose deduplication id another job holds)
]]
eventsArg = ARGV[1] == '1'
if #ARGV[1] > 1 then
  eventsArg = string.byte(ARGV[1]) == 49
  if movedSince(ARGV[1], redis.call('HGET', K_META, 'pe')) then return 'moved' end
end
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
