--[[
  Retries one finished job (lib/core/management/management.ts retry()): a completed or dead
  job goes back to pending with a fresh attempt budget, its data and name kept
  (management/retried.lua). A completed job's result goes, and so does its idempotency
  window (its record holds its id again until it finishes). Any other job is refused with
  nothing written. Cost: O(log N) in the done or dead set, plus O(log P) for a prioritized
  job.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the job's id

  Output:
    'completed' or 'dead': the state it was retried from. Refused, nothing written: ''
    when there is no such job (or it completed and its retention has ended), '!' and its
    state ('!dead') for a record that cannot be decoded, else the job's state ('pending',
    'working', 'delayed', 'waiting-children').

  Events:
    retried (reason 'retry')
]]
eventsArg = ARGV[1] == '1'
local id = ARGV[2]
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return '' end
local state, score = locateJob(id) -- management/remove.lua
if state == 'completed' and tonumber(score) <= nowMs() then return '' end -- gone, as for getJob
if state ~= 'completed' and state ~= 'dead' then return state end
local meta, data = decodeMeta(rec)
if not meta then return '!' .. state end
if state == 'completed' then
  redis.call('ZREM', K_DONE, id)
  redis.call('HDEL', K_RESULTS, id)
  redis.call('ZREM', K_DEDUP, id)
  meta.c = (meta.c or 0) + 1 -- its completed lease still counts among its dequeues
else
  unDead({ id }) -- management/remove.lua
end
retryFinished(id, meta, data, 'retry')
flushWake()
flushEvents()
return state
