--[[
  Redis calls every operation uses: the Redis clock (scripts read time from Redis, never
  from the caller, so all clients agree) and calls with argument lists of any length.
  Needs nothing.
]]

-- The file's own state and constants are local to the block below (not indented), so that
-- they take no place among the prelude's top-level locals: Lua allows a function 200.
local nowMs, int, num, callMany, readMany
do
-- The seconds of the last TIME reply, parsed: they change once a second.
local lastSecText, lastSecMs
function nowMs()
  local t = redis.call('TIME')
  if t[1] ~= lastSecText then lastSecText, lastSecMs = t[1], tonumber(t[1]) * 1000 end
  return lastSecMs + math.floor(tonumber(t[2]) / 1000)
end

-- Redis formats a number argument of redis.call with "%.17g" (Lua a concatenated one with
-- "%.14g"): a float path that costs several times an integer's. Hot paths pass integers
-- as text; small ones are kept, as most are counts.
local intTexts = {}
function int(n)
  local s = intTexts[n]
  if s then return s end
  s = string.format('%d', n)
  if n >= 0 and n < 4096 then intTexts[n] = s end
  return s
end

-- tonumber() of an argument a hot path reads every call (counts, lengths of time): a
-- client sends the same few, so their values are kept (strtod is not cheap).
local numbers, numberCount = {}, 0
function num(text)
  local n = numbers[text]
  if n then return n end
  n = tonumber(text)
  if n and numberCount < 256 then numbers[text], numberCount = n, numberCount + 1 end
  return n
end

-- Lua's unpack() fails past ~8000 values, so long argument lists go in slices.
-- `pre` holds options placed before the list (e.g. {'XX'}); returns the last reply.
local UNPACK_SLICE = 4000 -- even, so field/value and score/member pairs stay whole
function callMany(cmd, key, list, pre)
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

-- A read of many fields or members (HMGET, ZMSCORE) that answers one value each.
function readMany(cmd, key, fields)
  if #fields == 0 then return {} end
  if #fields <= UNPACK_SLICE then return redis.call(cmd, key, unpack(fields)) end
  local out = {}
  for i = 1, #fields, UNPACK_SLICE do
    local part = redis.call(cmd, key, unpack(fields, i, math.min(i + UNPACK_SLICE - 1, #fields)))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end
end -- of the block

local function hmgetMany(key, fields) return readMany('HMGET', key, fields) end
