--[[
  The dead letters a redrive or purge takes (redrive-dead.lua, purge-dead.lua): the ids named,
  or the oldest that pass a filter. Needs redis/keys.lua, redis/calls.lua, redis/record.lua.
]]

-- Dead letters of job name `name` that died by `maxDiedAt`, oldest first, at most `limit`.
-- Read by rank in slices; only the meta part of each record is decoded.
local function deadNamed(name, maxDiedAt, limit)
  local found, pos = {}, 0
  local count = redis.call('ZCOUNT', K_DEAD, '-inf', maxDiedAt)
  while #found < limit and pos < count do
    local slice = redis.call('ZRANGE', K_DEAD, pos, math.min(pos + 199, count - 1))
    pos = pos + 200
    local recs = hmgetMany(K_JOBS, slice)
    for i, id in ipairs(slice) do
      local ok, meta = pcall(cjson.decode, recs[i] and metaPart(recs[i]) or '')
      if ok and type(meta) == 'table' and (meta.n or '') == name and #found < limit then
        found[#found + 1] = id
      end
    end
  end
  return found
end

-- The target read from ARGV[at..]: ARGV[at] the limit, or 'ids' to name them; then with
-- 'ids' the ids (those not dead are skipped, one named twice counts once), else the filter:
-- olderThanMs ('' any), then 'n<name>' ('' any).
local function deadTargets(at)
  if ARGV[at] == 'ids' then
    local ids, named = {}, {} -- an id named twice is taken once
    for i = at + 1, #ARGV do
      local id = ARGV[i]
      if not named[id] and redis.call('ZSCORE', K_DEAD, id) then
        named[id] = true
        ids[#ids + 1] = id
      end
    end
    return ids
  end
  local limit, older, name = tonumber(ARGV[at]), ARGV[at + 1], ARGV[at + 2]
  if older == '' and name == '' then return redis.call('ZRANGE', K_DEAD, 0, limit - 1) end
  local maxDiedAt = older == '' and '+inf' or nowMs() - tonumber(older)
  if name == '' then return redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', maxDiedAt, 'LIMIT', 0, limit) end
  return deadNamed(string.sub(name, 2), maxDiedAt, limit)
end
