--[[
  The job policy a record may leave out: the built-in defaults the client sends with every
  lease and settle call (their one owner is lib/core/defaults.ts), the backoff before a
  retry, and the retention a lease token carries. Needs redis/record.lua.
]]

-- "<keepCompletedMs> <dedupWindowMs> <backoff json>" (POLICY_DEFAULTS_ARG in
-- lib/core/settles/settle-items.ts). The backoff is decoded only when a nack needs it.
-- Every client of one version sends the same text: the last one parsed is kept (the library
-- outlives a call), so a lease or settle call pays for a string comparison only.
local parsedText, parsed
local function parseDefaults(text)
  if text ~= parsedText then
    local keep, dedup, backoff = string.match(text, '^(%d+) (%d+) (.*)$')
    -- the digits too: lease tokens copy them (redis/lease-token.lua)
    parsed = { keepMs = tonumber(keep), dedupMs = tonumber(dedup), keepText = keep, dedupText = dedup, backoffJson = backoff }
    parsedText = text
  end
  return parsed
end

-- Delay before the retry after failed attempt number `attempt` (1 = the first), as
-- the backoff option documents it; `rnd` comes from the client (scripts stay deterministic).
-- A strategy of the workers' ('custom') chose its delay in the worker: here (a worker
-- without that strategy, a nack without a delay) the built-in backoff applies.
local function backoffDelay(rec, attempt, rnd, defaults)
  if not defaults.backoff then defaults.backoff = cjson.decode(defaults.backoffJson) end
  local b = defaults.backoff
  local meta = decodeMeta(rec)
  if meta and meta.b then
    b = meta.b
    if type(b) == 'string' then b = cjson.decode(b) end
    if b.type == 'custom' then b = defaults.backoff end
  end
  local base = b.delayMs
  if b.type ~= 'fixed' then
    base = math.min(b.delayMs * 2 ^ math.max(0, attempt - 1), b.maxDelayMs or defaults.backoff.maxDelayMs)
  end
  local jitter = b.jitter or defaults.backoff.jitter
  return math.max(0, math.floor(base * (1 - jitter + 2 * jitter * rnd) + 0.5))
end
