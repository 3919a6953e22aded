--!include include/keys.lua
--!include include/common.lua
-- Dead-letter management. ARGV: 1 events(0/1), 2 op, 3 offset|'ids', 4 limit, 5.. ids
--   list:    { id, record, diedAt, ... } oldest first
--   redrive: back to pending with a fresh attempt budget; reply = ids moved
--   purge:   deleted for good; reply = ids removed
eventsOn = ARGV[1] == '1'
local op = ARGV[2]
local ids
if ARGV[3] == 'ids' then
  ids = {}
  for i = 5, #ARGV do
    if redis.call('ZSCORE', K_DEAD, ARGV[i]) then ids[#ids + 1] = ARGV[i] end
  end
else
  local offset, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
  ids = redis.call('ZRANGE', K_DEAD, offset, offset + limit - 1)
end
if #ids == 0 then return {} end

if op == 'list' then
  local recs = redis.call('HMGET', K_JOBS, unpack(ids))
  local out = {}
  for i, id in ipairs(ids) do
    out[#out + 1] = id
    out[#out + 1] = recs[i] or ''
    out[#out + 1] = redis.call('ZSCORE', K_DEAD, id)
  end
  return out
end

redis.call('ZREM', K_DEAD, unpack(ids))
if op == 'purge' then
  redis.call('HDEL', K_JOBS, unpack(ids))
  for _, id in ipairs(ids) do emit({ type = 'removed', id = id }) end
else
  local recs = redis.call('HMGET', K_JOBS, unpack(ids))
  for i, id in ipairs(ids) do
    local meta, data = decodeMeta(recs[i])
    meta.f = 0
    meta.e = nil
    redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
    pushPending({ id }, { meta.p or 0 })
    emit({ type = 'retried', id = id, reason = 'redrive' })
  end
end
flushWake()
flushEvents()
return ids
