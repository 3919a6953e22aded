--[[
  Redis calls every operation uses: the Redis clock (scripts read time from Redis, never
  from the caller, so all clients agree) and calls with argument lists of any length.
  Needs nothing.
]]

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
