--[[
  Removes completed jobs before their retention ends (lib/core/management/management.ts
  clean('completed')): those completed at least olderThanMs ago (Redis clock), at most
  `limit`, their records and results with them. Their idempotency windows stay, as after a
  sweep: cleaning history does not let a finished job's id be added again (remove() does).
  Completed jobs are indexed by the end of their retention, so they are examined in that
  order and the pass stops at the first one completed too recently. With one
  keepCompletedMs for the queue's jobs that is completion order and exact; a job kept longer
  than the one the pass stopped at waits for a later call (or its own retention's end).
  Cost: O(log C + limit) for C completed jobs.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      olderThanMs: completed at least this long ago (0: any)
    ARGV[3]      limit: most jobs removed

  Output:
    the ids removed, oldest first

  Events:
    removed (each job); cleaned (once, with the count and state 'completed', also when none)
]]
eventsArg = ARGV[1] == '1'
local cutoff = nowMs() - tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local head = redis.call('ZRANGE', K_DONE, 0, limit - 1, 'WITHSCORES')
local ids = {}
for i = 1, #head, 2 do ids[#ids + 1] = head[i] end
local results = hmgetMany(K_RESULTS, ids)
local gone = {}
for i, id in ipairs(ids) do
  -- completion time from its stored result ({"at":ms,...}); without one, the end of its
  -- retention, which is never earlier
  local at = tonumber(results[i] and string.match(results[i], '^{"at":(%d+)') or head[2 * i])
  if at > cutoff then break end
  gone[#gone + 1] = id
  emit({ type = 'removed', id = id })
end
if #gone > 0 then forgetCompleted(gone) end
emit({ type = 'cleaned', state = 'completed', count = #gone })
flushEvents()
return gone
