local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Lua's unpack() fails past ~8000 values, so long argument lists go in slices.
-- `pre` holds options placed before the list (e.g. {'XX'}); returns the last reply.
local UNPACK_SLICE = 4000 -- even, so field/value and score/member pairs stay whole
local function callMany(cmd, key, list, pre)
  if #list == 0 then return nil end
  if not pre and #list <= UNPACK_SLICE then return redis.call(cmd, key, unpack(list)) end
  local reply
  for i = 1, #list, UNPACK_SLICE do
    local args = { key }
    for _, p in ipairs(pre or {}) do args[#args + 1] = p end
    for j = i, math.min(i + UNPACK_SLICE - 1, #list) do args[#args + 1] = list[j] end
    reply = redis.call(cmd, unpack(args))
  end
  return reply
end

local function hmgetMany(key, fields)
  if #fields == 0 then return {} end
  if #fields <= UNPACK_SLICE then return redis.call('HMGET', key, unpack(fields)) end
  local out = {}
  for i = 1, #fields, UNPACK_SLICE do
    local part = redis.call('HMGET', key, unpack(fields, i, math.min(i + UNPACK_SLICE - 1, #fields)))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

-- The built-in job policy, sent by the client with every lease and settle call (its one
-- owner is lib/core/defaults.ts): "<keepCompletedMs> <dedupWindowMs> <backoff json>", what a
-- record leaves out. The backoff is decoded only when a nack needs it.
local function parseDefaults(text)
  local keep, dedup, backoff = string.match(text, '^(%d+) (%d+) (.*)$')
  return { keepMs = tonumber(keep), dedupMs = tonumber(dedup), backoffJson = backoff }
end

-- A record is "<meta json>\n<data json>"; JSON never holds a raw newline.
local function splitRecord(rec)
  local nl = string.find(rec, '\n', 1, true) or (#rec + 1)
  return string.sub(rec, 1, nl - 1), string.sub(rec, nl + 1)
end

-- nil for a record that cannot be decoded: a script must not stop half-way because of
-- one bad job (scripts do not roll back), so callers dead-letter it untouched instead.
local function decodeMeta(rec)
  local metaJson, data = splitRecord(rec)
  local ok, meta = pcall(cjson.decode, metaJson)
  if not ok or type(meta) ~= 'table' then return nil, data end
  return meta, data
end

-- Size of a record's data part.
local function dataBytes(rec)
  return #rec - (string.find(rec, '\n', 1, true) or #rec)
end

local function encodeRecord(meta, data)
  return cjson.encode(meta) .. '\n' .. data
end

-- Cheap read of one top-level integer meta field without decoding or copying the record:
-- the first '"<field>":' preceded by '{' or ',' before the newline. A quote inside a JSON
-- string is always escaped, so only a key matches.
local function metaInt(rec, field)
  local key = '"' .. field .. '":'
  local nl = string.find(rec, '\n', 1, true) or (#rec + 1)
  local init = 1
  while true do
    local s, e = string.find(rec, key, init, true)
    if not s or s > nl then return nil end
    local before = string.byte(rec, s - 1)
    if before == 123 or before == 44 then return tonumber(string.match(rec, '^%-?%d+', e + 1)) end
    init = e + 1
  end
end

-- Events are collected during a script and published once, as one JSON array, when the
-- caller asked for them (ARGV[1]) and some process listens: nobody subscribed, no encoding
-- and no SPUBLISH. Listeners keep K_LISTEN alive (lib/core/queue/event-hub.ts).
local events      -- per call (reset by begin())
local eventsArg   -- ARGV[1] == '1', set by each function that publishes
local listening
local function eventsOn()
  if listening == nil then listening = eventsArg and redis.call('EXISTS', K_LISTEN) == 1 end
  return listening
end
local function emit(ev)
  if eventsOn() then events[#events + 1] = ev end
end
local function flushEvents()
  if #events > 0 then
    redis.call('SPUBLISH', K_EVENTS, cjson.encode(events))
  end
end

local wakeNeeded  -- per call
--!include include/ext.lua
local function flushWake()
  if wakeNeeded then
    if redis.call('RPUSH', K_WAKE, '1') > 16 then
      redis.call('LTRIM', K_WAKE, 0, 15)
    end
  end
end

local PRIO_SPAN = 4398046511104 -- 2^42: FIFO sequence space within one priority

-- Makes ids leasable. Priority-0 ids go to the list in one RPUSH. groups[i] (optional):
-- the job's group, whose own list it joins instead (include/ext.lua).
local function pushPending(ids, priorities, groups)
  local plain = {}
  for i, id in ipairs(ids) do
    local p = priorities[i] or 0
    if groups and groups[i] then
      pushGroup(groups[i], { id })
    elseif p == 0 then
      plain[#plain + 1] = id
    else
      local seq = redis.call('INCR', K_SEQ) % PRIO_SPAN
      redis.call('ZADD', K_PRIO, -p * PRIO_SPAN + seq, id)
      wakeNeeded = true
    end
  end
  if #plain > 0 then
    local len = callMany('RPUSH', K_PENDING, plain)
    if len == #plain then wakeNeeded = true end
  end
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
    local recs = hmgetMany(K_JOBS, due)
    local ids, prios, groups = {}, {}, {}
    for i, id in ipairs(due) do
      if recs[i] then
        ids[#ids + 1] = id
        prios[#prios + 1] = metaInt(recs[i], 'p') or 0
        groups[#groups + 1] = metaGroup(recs[i]) or false
        emit({ type = 'promoted', id = id })
      end
    end
    callMany('ZREM', K_DELAYED, due)
    pushPending(ids, prios, groups)
  end
  local nxt = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
  if nxt[2] then
    redis.call('HSET', K_META, 'nextDue', nxt[2])
    return #due, tonumber(nxt[2])
  end
  redis.call('HDEL', K_META, 'nextDue')
  return #due, nil
end

local function deadLetterUndecodable(id, now)
  redis.call('ZADD', K_DEAD, now, id)
  emit({ type = 'dead', id = id, error = 'job record could not be decoded' })
end

local function deadLetter(id, meta, data, now, reason)
  if not meta then return deadLetterUndecodable(id, now) end
  meta.e = reason
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  redis.call('ZADD', K_DEAD, now, id)
  emit({ type = 'dead', id = id, attempt = (meta.f or 0) - (meta.o or 0), error = reason })
end

-- Counts a failed attempt; retries (now or after delayMs) or dead-letters. Returns 'dead'
-- (the caller counts a freed slot: a dead job no longer counts against a bound) or 'retried'.
local function failAttempt(id, rec, now, reason, delayMs, eventType)
  local meta, data = decodeMeta(rec)
  if not meta then
    deadLetterUndecodable(id, now)
    return 'dead'
  end
  meta.f = (meta.f or 0) + 1
  meta.e = reason
  emit({ type = eventType, id = id, attempt = meta.f - (meta.o or 0), error = reason })
  if meta.f - (meta.o or 0) >= (meta.a or 1) then
    deadLetter(id, meta, data, now, reason)
    return 'dead'
  end
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  if delayMs > 0 then
    addDelayed(id, now + delayMs)
  else
    pushPending({ id }, { meta.p or 0 }, { meta.g or false })
  end
  emit({ type = 'retried', id = id, attempt = meta.f - (meta.o or 0), delayMs = delayMs })
  return 'retried'
end
