--[[
  The end of a job that holds a deduplication id in mode 'u' or 'd' (adds/deduplication.lua):
  completed (settles/settle-items.lua, its lease token carries dedupIds.ENDS) or dead-lettered
  (settles/failures.lua, from its meta). Apart from adds/deduplication.lua because it adds the
  kept add as addJobs does. Needs redis/keys.lua, redis/record.lua, adds/deduplication.lua,
  adds/add-jobs.lua.
]]

-- Job `id`, holding deduplication id `did`, completed or died at `now`: the id is free again,
-- or taken at once by the add kept while the job ran (keepLastIfActive), added now as addJobs
-- adds it (its delay counts from now). Nothing when the job no longer holds the id (a later
-- add took it over, or removeDeduplicationKey released it).
function dedupIds.ended(id, did, now)
  local kept = dedupIds.release(id, did)
  if not kept then return end
  local flag, due, nid, rec = string.match(kept, '^(%d)([^\n]*)\n([^\n]*)\n(.*)$')
  local stats = redis.call('HEXISTS', K_META, 'stats') == 1
  local _, created, bytes = addJobs({ nid, flag, rec, metaInt(rec, 'p') or 0, due, metaGroup(rec) or '' }, 1, 6, 1, function() return now end, stats)
  if stats and created > 0 then countProduced(created, bytes) end
end

-- The ack of job `id` whose token carries dedupIds.ENDS: its deduplication id is in its record.
function dedupIds.acked(id, now)
  local rec = redis.call('HGET', K_JOBS, id)
  local did = rec and dedupIds.idOf(rec)
  if did then dedupIds.ended(id, did, now) end
end
