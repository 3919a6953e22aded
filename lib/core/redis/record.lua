--[[
  Job records. K_JOBS holds each job as "<meta json>\n<data json>" (RecordMeta in
  lib/core/redis/record.ts; JSON never holds a raw newline). Meta keys (RECORD_KEYS there is
  the legend): t created at, n name, a max attempts (always written), p priority, b backoff,
  l lease ms, x attempt timeout ms, k keep-completed ms, m keep-completed count, da keep-dead
  ms, dn keep-dead count (settles/retention.lua), u 1 for an idempotency key, i its window ms, f failures, o failures before the last retry or redrive, rt times retried or
  redriven (management/retried.lua), c completions before a retry, r requeues, e last
  error, eh the last errors (settles/failures.lua), g group, w flow bits, pa parent id, pq parent queue tag
  (flows/flows.lua) and bit 32 of w, dd deduplication id, dm its mode, dt its throttle ms, dk
  keepLastIfActive (adds/deduplication.lua), tc trace context, kl log lines kept
  (progress/log.lua), po start of the lease its last failure or requeue ended
  (settles/failures.lua), bk a partitioned queue's routing bucket (partitions/handover-scan.lua). A value equal to the built-in default is left out
  (settles/policy.lua); f, o, rt, c, r and p are left out while 0, so Lua reads them `or 0`
  as the client does. Needs nothing.
]]

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

local function encodeRecord(meta, data)
  return cjson.encode(meta) .. '\n' .. data
end

-- A record's meta part alone: several metaInt reads of one job search only it, not the data
-- (a field a job does not have is otherwise searched for through its whole payload).
local function metaPart(rec)
  local nl = string.find(rec, '\n', 1, true)
  return nl and string.sub(rec, 1, nl - 1) or rec
end

-- Size of a record's data part.
local function dataBytes(rec)
  return #rec - (string.find(rec, '\n', 1, true) or #rec)
end

-- Cheap read of one top-level integer meta field without decoding or copying the record:
-- the first '"<field>":' preceded by '{' or ',' before the newline. A quote inside a JSON
-- string is always escaped, so only a key matches.
local META_KEYS = {} -- field -> '"<field>":', built once per field
local function metaInt(rec, field)
  local key = META_KEYS[field]
  if not key then
    key = '"' .. field .. '":'
    META_KEYS[field] = key
  end
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

-- What leasing reads of a job, in one pass over its meta part (metaPart): its own lease ms
-- (l), retention (k) and count of completed jobs kept (m), idempotency key flag (u) and
-- window (i), flow bits (w), as the digits stored (a lease token copies them: no number is
-- formatted); nil where absent. One search per field present, not one per field asked for.
-- As in metaInt, only a key matches and the first occurrence wins.
local function leasePolicy(meta)
  local l, k, u, i, w, m
  local init = 1
  while true do
    local _, e, f, v = string.find(meta, '[{,]"([lkuiwm])":(%-?%d+)', init)
    if not e then return l, k, u, i, w, m end
    if f == 'l' then l = l or v elseif f == 'k' then k = k or v elseif f == 'u' then u = u or v elseif f == 'i' then i = i or v
    elseif f == 'w' then w = w or v else m = m or v end
    init = e + 1
  end
end

-- The job name of a record, nil for none: only a record that has one is decoded (as in
-- metaGroup).
local function metaName(rec)
  local metaJson = metaPart(rec)
  if not string.find(metaJson, '[{,]"n":"') then return nil end
  local ok, meta = pcall(cjson.decode, metaJson)
  if ok and type(meta) == 'table' and type(meta.n) == 'string' then return meta.n end
  return nil
end

-- The group of a record, or nil. A quote inside a JSON string is always escaped, so the
-- pattern only matches a key (see metaInt): records without a group are not decoded.
local function metaGroup(rec)
  local metaJson = splitRecord(rec)
  if string.find(metaJson, '[{,]"g":"') then
    local ok, meta = pcall(cjson.decode, metaJson)
    if ok and type(meta) == 'table' and type(meta.g) == 'string' then return meta.g end
  end
  return nil
end
