--!include include/keys.lua
--!include include/common.lua
-- Adds jobs. ARGV: 1 events(0/1), 2 n, then n items of 5 fields:
--   id, custom (1 when the caller chose the id: an idempotency key), record,
--   priority, due ('' now | 'd<ms>' after a delay | 'a<ms>' at an absolute time)
-- Reply: 1 per job created, 0 when a custom id already exists (nothing written).
eventsOn = ARGV[1] == '1'
local n = tonumber(ARGV[2])
local now
local function clock()
  if not now then now = nowMs() end
  return now
end
local out, plainIds, plainPrios = {}, {}, {}
for i = 1, n do
  local b = 3 + (i - 1) * 5
  local id, custom, rec, prio, due = ARGV[b], ARGV[b + 1] == '1', ARGV[b + 2], tonumber(ARGV[b + 3]), ARGV[b + 4]
  local fresh = true
  if custom then
    local until_ = redis.call('ZSCORE', K_DEDUP, id)
    if until_ and tonumber(until_) > clock() then fresh = false end
  end
  if fresh and redis.call('HSETNX', K_JOBS, id, rec) == 0 then
    -- An existing custom id is a duplicate. An existing generated id can only be
    -- this very request replayed after a lost reply, so it was created.
    fresh = not custom and true or false
    out[i] = fresh and 1 or 0
  elseif fresh then
    out[i] = 1
    if due == '' then
      plainIds[#plainIds + 1] = id
      plainPrios[#plainPrios + 1] = prio
    else
      local at = tonumber(string.sub(due, 2))
      if string.sub(due, 1, 1) == 'd' then at = clock() + at end
      addDelayed(id, at)
    end
    emit({ type = 'added', id = id })
  else
    out[i] = 0
  end
end
if #plainIds > 0 then pushPending(plainIds, plainPrios) end
flushWake()
flushEvents()
return out
