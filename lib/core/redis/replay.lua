--[[
  Replayed requests. ioredis resends a command whose reply was lost when it reconnects, and
  a worker retries a failed call with the same request id, so one settle or lease request
  may run twice. Its first run records what it answered under the request's key
  (`<tag>:req:<id>`, passed as KEYS[16]): "<0/1 per settle item>\n<leased id>\n...". A
  second run returns the same answers and changes nothing, so a lost reply is invisible to
  the caller; a genuinely stale lease (another request) still gets 0. Needs
  redis/keys.lua, redis/calls.lua.
]]

-- How long a request's answers are kept: longer than a client takes to reconnect and resend
-- (seconds), or to retry after a timeout.
local REPLAY_MS = 30000

local function recordRequest(key, settled, leasedIds, ttlMs)
  if #settled == 0 and #leasedIds == 0 then return end
  local value
  if #settled == 1 then
    value = int(settled[1])
  else
    local bits = {}
    for i, v in ipairs(settled) do bits[i] = int(v) end
    value = table.concat(bits)
  end
  if #leasedIds > 0 then value = value .. '\n' .. table.concat(leasedIds, '\n') end
  redis.call('SET', key, value, 'PX', int(math.max(ttlMs or 0, REPLAY_MS)))
end

-- The settle answers and leased ids of a recorded request.
local function recordedRequest(recorded)
  local nl = string.find(recorded, '\n', 1, true)
  local bits = nl and string.sub(recorded, 1, nl - 1) or recorded
  local settled, ids = {}, {}
  for i = 1, #bits do settled[i] = string.byte(bits, i) - 48 end
  if nl then
    for id in string.gmatch(string.sub(recorded, nl + 1), '[^\n]+') do ids[#ids + 1] = id end
  end
  return settled, ids
end

-- The leases a replayed request got that it still holds, appended to `reply` as
-- grantLeases does.
local function replayLeases(reply, ids, reqId)
  if #ids == 0 then return end
  local tokens = hmgetMany(K_LEASES, ids)
  local recs = hmgetMany(K_JOBS, ids)
  for j, id in ipairs(ids) do
    local t = tokens[j]
    if t and recs[j] and string.sub(t, 1, #reqId + 1) == reqId .. '.' then
      reply[#reply + 1] = id
      reply[#reply + 1] = t
      reply[#reply + 1] = tonumber(redis.call('ZSCORE', K_WORKING, id))
      reply[#reply + 1] = recs[j]
    end
  end
end
