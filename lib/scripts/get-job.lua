--[[
  Reads one job (lib/core/queue/inspector.ts getJob()). Read-only: it still runs when Redis
  refuses writes.

  Input:
    KEYS[1..15]  the queue keys (include/keys.lua)

    ARGV[1]      job id

  Output:
    {} when there is no such job, or it completed and its retention has ended (whether or
    not a sweep removed it yet); else { state, record, score[, result] }:
      'working',   record, lease deadline (ms; '' when missing from working)
      'delayed',   record, due time (ms)
      'completed', record, end of its retention (ms), result ('{"at":ms,"r":json or null}',
                   '' when none was kept)
      'dead',      record, time of death (ms)
      'pending',   record, ''
    Scores are bulk strings, as ZSCORE answers them.
]]
local id = ARGV[1]
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return {} end
if redis.call('HEXISTS', K_LEASES, id) == 1 then
  return { 'working', rec, redis.call('ZSCORE', K_WORKING, id) or '' }
end
local s = redis.call('ZSCORE', K_DELAYED, id)
if s then return { 'delayed', rec, s } end
s = redis.call('ZSCORE', K_DONE, id)
if s then
  -- past its retention it is gone, whether or not a sweep removed it yet
  if tonumber(s) <= nowMs() then return {} end
  return { 'completed', rec, s, redis.call('HGET', K_RESULTS, id) or '' }
end
s = redis.call('ZSCORE', K_DEAD, id)
if s then return { 'dead', rec, s } end
return { 'pending', rec, '' }
