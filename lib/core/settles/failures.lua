--[[
  Failed attempts and dead letters. A job's attempts are counted in its record (f failures,
  o those before the last redrive, a the limit); past the limit it goes to K_DEAD with its
  last error (e) and its last ERROR_HISTORY errors (eh). A record that cannot be decoded is dead-lettered untouched. A dead job no
  longer counts against a bound: callers count it as a freed slot (settles/ended.lua).
  A job that held a deduplication id releases it (adds/deduplication-ends.lua). Needs
  redis/keys.lua, redis/record.lua, events/events.lua, adds/pending.lua, adds/delayed.lua,
  settles/retention.lua, adds/deduplication-ends.lua.
]]

-- Errors kept per job (meta.eh, oldest first: [error, at, attempt]), so that a job's story
-- survives the retries that overwrite its last error (e). Written on failures only.
local ERROR_HISTORY = 10

local function noteError(meta, reason, now, attempt)
  local history = meta.eh or {}
  history[#history + 1] = { reason, now, attempt }
  if #history > ERROR_HISTORY then table.remove(history, 1) end
  meta.eh = history
end

local function deadLetterUndecodable(id, now)
  redis.call('ZADD', K_DEAD, now, id)
  emit({ type = 'dead', id = id, error = 'job record could not be decoded' })
end

-- `noted`: failAttempt already put this error in the history.
local function deadLetter(id, meta, data, now, reason, noted)
  if not meta then return deadLetterUndecodable(id, now) end
  meta.e = reason
  if not noted then noteError(meta, reason, now, (meta.f or 0) - (meta.o or 0)) end
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  addDead(id, meta, now) -- with its retention (settles/retention.lua)
  emit({ type = 'dead', id = id, attempt = (meta.f or 0) - (meta.o or 0), error = reason })
  if meta.w then
    flowDied(id, meta, now, reason) -- its parent fails or goes on (flows/flows.lua)
    if flowBit(meta.w, dedupIds.ENDS) and type(meta.dd) == 'string' then dedupIds.ended(id, meta.dd, now) end
  end
end

-- Counts a failed attempt; retries (now or after delayMs) or dead-letters. Returns 'dead'
-- or 'retried'. `token`: the attempt's lease token, whose start the record keeps (po).
local function failAttempt(id, rec, now, reason, delayMs, eventType, token)
  local meta, data = decodeMeta(rec)
  -- Every record holds its limit (a: the client always writes it), so none is assumed here:
  -- a record without one is not a job's.
  if not meta or type(meta.a) ~= 'number' then
    deadLetterUndecodable(id, now)
    return 'dead'
  end
  meta.f = (meta.f or 0) + 1
  meta.e = reason
  meta.po = token and tonumber(leaseStart(token)) or nil
  noteError(meta, reason, now, meta.f - (meta.o or 0))
  emit({ type = eventType, id = id, attempt = meta.f - (meta.o or 0), error = reason })
  if meta.f - (meta.o or 0) >= meta.a then
    deadLetter(id, meta, data, now, reason, true)
    return 'dead'
  end
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  if delayMs > 0 then
    addDelayed(id, now + delayMs)
  else
    pushPending({ id }, { meta.p or 0 }, { meta.g or false })
  end
  emit({ type = 'retried', id = id, attempt = meta.f - (meta.o or 0), delayMs = delayMs, runAt = delayMs > 0 and now + delayMs or nil })
  return 'retried'
end
