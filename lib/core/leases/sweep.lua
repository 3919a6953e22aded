--[[
  One bounded pass of housekeeping (lib/core/management/inspector.ts sweep(), run by workers and
  sweepers): expired leases count as a failed attempt (back to pending, or dead past the
  limit), due delayed jobs are promoted, completed and dead jobs past their retention are
  removed (settles/retention.lua), ended idempotency windows and throttle windows of
  deduplication ids forgotten, the flow keys of parents gone (flows/flows.lua), and the
  entries of workers no longer seen (workers/workers.lua).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      limit: most items of each kind handled in this pass

  Output:
    { stalled, deadLettered, promoted, completedRemoved, dedupForgotten, now, stalledIds, deadRemoved }
      stalled       expired leases returned (each a failed attempt)
      stalledIds    their job ids
      deadLettered  those of them dead-lettered
      promoted      due ids taken from the delayed set
      deadRemoved   dead jobs whose retention (keepDead.ageMs) ended
      now           Redis time (ms)

  Events:
    stalled, retried, dead, promoted; added (as settle.lua)
]]
eventsArg = ARGV[1] == '1'
local limit = tonumber(ARGV[2])
local now = nowMs()
local ended = endedLeases()

local stalled, dead = 0, 0
local stalledIds = {}
local mx -- the metrics history of the attempts it failed, for a queue that keeps one
local expired = redis.call('ZRANGEBYSCORE', K_WORKING, '-inf', now, 'LIMIT', 0, limit)
if #expired > 0 then
  local tokens = hmgetMany(K_LEASES, expired) -- their lease starts (redis/lease-token.lua)
  callMany('HDEL', K_LEASES, expired)
  callMany('ZREM', K_WORKING, expired)
  local recs = hmgetMany(K_JOBS, expired)
  for i, id in ipairs(expired) do
    if recs[i] then
      leaseEnded(ended, metaGroup(recs[i]) or '') -- group bookkeeping, bound and close checks
      stalled = stalled + 1
      stalledIds[stalled] = id
      local became = failAttempt(id, recs[i], now, 'lease expired', 0, 'stalled', tokens[i])
      if became == 'dead' then dead = dead + 1 end
      -- counted, not timed: no handler ended it (metrics-history/history.lua)
      mx = metricsHistory.note(mx, tokens[i], became == 'dead' and 'd' or 'f', now, false)
    end
  end
  metricsHistory.flush(mx, now)
end
ended.freed = dead

local promoted = 0
local nextDue = tonumber(redis.call('HGET', K_META, 'nextDue'))
if nextDue and nextDue <= now then promoted = promoteDue(now, limit) end

local gone = redis.call('ZRANGEBYSCORE', K_DONE, '-inf', now, 'LIMIT', 0, limit)
if #gone > 0 then forgetCompleted(gone) end

local expired = redis.call('ZRANGEBYSCORE', K_DEADEXP, '-inf', now, 'LIMIT', 0, limit)
if #expired > 0 then forgetDead(expired) end

local forgotten = redis.call('ZRANGEBYSCORE', K_DEDUP, '-inf', now, 'LIMIT', 0, limit)
if #forgotten > 0 then callMany('ZREM', K_DEDUP, forgotten) end
dedupIds.forgetWindows(now, limit) -- ended throttle windows of deduplication ids (adds/deduplication.lua)
runningParents.sweepKeys(limit, now) -- keys of parents dropped before their lease knew them parents (flows/flows.lua)
workerList.prune(now, limit) -- workers that stopped without leaving (killed, cut off)

-- A prioritized job that an older relq added (it does not delete meta np, adds/pending.lua)
-- would wait behind the mark that lease calls trust: each sweep removes a wrong one.
if redis.call('ZCARD', K_PRIO) > 0 then redis.call('HDEL', K_META, 'np') end

-- Jobs wait, yet no wake-up token does: one was lost (leases/wake.lua), and adds into a
-- queue that holds jobs push none, so idle workers would sleep until their safety lease.
-- A consumer that just took a token and is about to lease makes this one spare: it costs one
-- empty lease call.
if redis.call('EXISTS', K_WAKE) == 0 and (ungroupedPending() or redis.call('EXISTS', K_GACTIVE) == 1)
    and not redis.call('HGET', K_META, 'paused') then
  wakeNeeded = true
end

flushRetention() -- the counts of jobs it dead-lettered (management/remove.lua)
flushEnded(ended)
flushWake()
flushEvents()
return { stalled, dead, promoted, #gone, #forgotten, now, stalledIds, #expired }
