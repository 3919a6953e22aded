local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- A record is "<meta json>\n<data json>"; JSON never holds a raw newline.
local function splitRecord(rec)
  local nl = string.find(rec, '\n', 1, true)
  return string.sub(rec, 1, nl - 1), string.sub(rec, nl + 1)
end

local function decodeMeta(rec)
  local metaJson, data = splitRecord(rec)
  return cjson.decode(metaJson), data
end

local function encodeRecord(meta, data)
  return cjson.encode(meta) .. '\n' .. data
end

-- Cheap read of one top-level integer meta field without decoding the record. A key
-- is preceded by '{' or ','; a quote inside a JSON string is always escaped.
local function metaInt(rec, field)
  local metaJson = splitRecord(rec)
  local v = string.match(metaJson, '[{,]"' .. field .. '":(%-?%d+)')
  if v then return tonumber(v) end
  return nil
end

-- Events are collected during a script and published once, as one JSON array.
local events = {}
local eventsOn = false
local function emit(ev)
  if eventsOn then events[#events + 1] = ev end
end
local function flushEvents()
  if #events > 0 then
    redis.call('SPUBLISH', K_EVENTS, cjson.encode(events))
  end
end

local wakeNeeded = false
local function flushWake()
  if wakeNeeded then
    if redis.call('RPUSH', K_WAKE, '1') > 16 then
      redis.call('LTRIM', K_WAKE, 0, 15)
    end
  end
end

local PRIO_SPAN = 4398046511104 -- 2^42: FIFO sequence space within one priority

-- Makes ids leasable. Priority-0 ids go to the list in one RPUSH.
local function pushPending(ids, priorities)
  local plain = {}
  for i, id in ipairs(ids) do
    local p = priorities[i] or 0
    if p == 0 then
      plain[#plain + 1] = id
    else
      local seq = redis.call('INCR', K_SEQ) % PRIO_SPAN
      redis.call('ZADD', K_PRIO, -p * PRIO_SPAN + seq, id)
      wakeNeeded = true
    end
  end
  if #plain > 0 then
    local len = redis.call('RPUSH', K_PENDING, unpack(plain))
    if len == #plain then wakeNeeded = true end
  end
end

local function pushOne(id, rec)
  pushPending({ id }, { metaInt(rec, 'p') or 0 })
end

local function addDelayed(id, due)
  redis.call('ZADD', K_DELAYED, due, id)
  local cur = tonumber(redis.call('HGET', K_META, 'nextDue'))
  if not cur or due < cur then
    redis.call('HSET', K_META, 'nextDue', due)
    wakeNeeded = true -- blocked leasers must shorten their wait
  end
end

-- Moves up to `limit` due delayed jobs to pending; returns count and next due time.
local function promoteDue(now, limit)
  local due = redis.call('ZRANGEBYSCORE', K_DELAYED, '-inf', now, 'LIMIT', 0, limit)
  if #due > 0 then
    local recs = redis.call('HMGET', K_JOBS, unpack(due))
    local ids, prios = {}, {}
    for i, id in ipairs(due) do
      if recs[i] then
        ids[#ids + 1] = id
        prios[#prios + 1] = metaInt(recs[i], 'p') or 0
        emit({ type = 'promoted', id = id })
      end
    end
    redis.call('ZREM', K_DELAYED, unpack(due))
    pushPending(ids, prios)
  end
  local nxt = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
  if nxt[2] then
    redis.call('HSET', K_META, 'nextDue', nxt[2])
    return #due, tonumber(nxt[2])
  end
  redis.call('HDEL', K_META, 'nextDue')
  return #due, nil
end

local function deadLetter(id, meta, data, now, reason)
  meta.e = reason
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  redis.call('ZADD', K_DEAD, now, id)
  emit({ type = 'dead', id = id, attempt = meta.f, error = reason })
end

-- Counts a failed attempt; retries (now or after delayMs) or dead-letters.
local function failAttempt(id, rec, now, reason, delayMs, eventType)
  local meta, data = decodeMeta(rec)
  meta.f = (meta.f or 0) + 1
  meta.e = reason
  emit({ type = eventType, id = id, attempt = meta.f, error = reason })
  if meta.f >= (meta.a or 1) then
    deadLetter(id, meta, data, now, reason)
    return 'dead'
  end
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  if delayMs > 0 then
    addDelayed(id, now + delayMs)
  else
    pushPending({ id }, { meta.p or 0 })
  end
  emit({ type = 'retried', id = id, attempt = meta.f, delayMs = delayMs })
  return 'retried'
end
