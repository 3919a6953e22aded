--[[
  A finished job back to pending (redrive-dead.lua, retry-job.lua): a fresh attempt budget
  (o: the failures so far count no more against its attempts), its data, name, priority,
  group and failure history kept, the number of times it was moved back (rt) counted. Needs
  redis/keys.lua, redis/record.lua, events/events.lua, adds/pending.lua.
]]

-- Job `id` (its record decoded: `meta`, `data`), already out of the done or dead set, goes
-- to pending; `reason` ('redrive', 'retry') is its retried event's.
local function retryFinished(id, meta, data, reason)
  meta.o = (meta.f or 0) > 0 and meta.f or nil -- left out while 0, as f is
  meta.e = nil
  meta.po = nil -- not processed since its fresh start
  meta.rt = (meta.rt or 0) + 1
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  pushPending({ id }, { meta.p or 0 }, { meta.g or false })
  emit({ type = 'retried', id = id, reason = reason })
end
