--[[
  Dead-letter management (lib/core/management/inspector.ts listDead(), deadOp()): lists dead
  jobs, redrives them (back to pending with a fresh attempt budget; the failure history
  stays) or purges them (deleted for good).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      verb: 'list' | 'redrive' | 'purge'
    ARGV[3]      offset: into the dead letters, oldest first; or 'ids' to name them
    ARGV[4]      limit: how many from the offset (unused with 'ids')
    ARGV[5..]    target: with 'ids', the ids (those not dead are skipped, one named twice
                 counts once); without, for redrive and purge, a filter (the offset then
                 counts the dead letters that pass it): olderThanMs, dead at least this long
                 ago (Redis clock, '' any), then 'n<name>', only jobs of that name ('' any)

  Cost: O(log D + offset + limit) for D dead letters, ids: O(ids); with a name, every dead
  letter old enough is examined until `limit` match: O(log D + examined).

  Output:
    list     { id, record ('' when gone), time of death (ms, a bulk string), ... } oldest first
    redrive  the ids moved to pending; one whose record cannot be decoded stays dead (with a
             new time of death) and is left out
    purge    the ids removed

  Events:
    retried (reason 'redrive'), removed
]]
eventsArg = ARGV[1] == '1'
local op = ARGV[2]

-- Dead letters of job name `name` that died by `maxDiedAt`, oldest first: `limit` of them
-- after skipping `skip`. Read by rank in slices (a score range with an offset would walk
-- the offset again for every slice); only the meta part of each record is decoded.
local function deadNamed(name, maxDiedAt, skip, limit)
  local found, pos = {}, 0
  local count = redis.call('ZCOUNT', K_DEAD, '-inf', maxDiedAt)
  while #found < limit and pos < count do
    local slice = redis.call('ZRANGE', K_DEAD, pos, math.min(pos + 199, count - 1))
    pos = pos + 200
    local recs = hmgetMany(K_JOBS, slice)
    for i, id in ipairs(slice) do
      local ok, meta = pcall(cjson.decode, recs[i] and metaPart(recs[i]) or '')
      if ok and type(meta) == 'table' and (meta.n or '') == name then
        if skip > 0 then
          skip = skip - 1
        elseif #found < limit then
          found[#found + 1] = id
        end
      end
    end
  end
  return found
end
local ids
if ARGV[3] == 'ids' then
  ids = {}
  local named = {} -- an id named twice is moved once
  for i = 5, #ARGV do
    local id = ARGV[i]
    if not named[id] and redis.call('ZSCORE', K_DEAD, id) then
      named[id] = true
      ids[#ids + 1] = id
    end
  end
else
  local offset, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
  local older, name = ARGV[5] or '', ARGV[6] or ''
  if older == '' and name == '' then
    ids = redis.call('ZRANGE', K_DEAD, offset, offset + limit - 1)
  else
    local maxDiedAt = older == '' and '+inf' or nowMs() - tonumber(older)
    if name == '' then
      ids = redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', maxDiedAt, 'LIMIT', offset, limit)
    else
      ids = deadNamed(string.sub(name, 2), maxDiedAt, offset, limit)
    end
  end
end
if #ids == 0 then return {} end

if op == 'list' then
  local recs = hmgetMany(K_JOBS, ids)
  local out = {}
  for i, id in ipairs(ids) do
    out[#out + 1] = id
    out[#out + 1] = recs[i] or ''
    out[#out + 1] = redis.call('ZSCORE', K_DEAD, id)
  end
  return out
end

callMany('ZREM', K_DEAD, ids)
if op == 'purge' then
  flowJobsGone(ids) -- flows/flows.lua
  callMany('HDEL', K_JOBS, ids)
  forgetProgress(ids)
  for _, id in ipairs(ids) do emit({ type = 'removed', id = id }) end
else
  local recs = hmgetMany(K_JOBS, ids)
  local moved = {}
  for i, id in ipairs(ids) do
    local meta, data = decodeMeta(recs[i] or '')
    if meta then
      meta.o = meta.f or 0 -- a fresh attempt budget; the failure history stays
      meta.e = nil
      redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
      pushPending({ id }, { meta.p or 0 }, { meta.g or false })
      emit({ type = 'retried', id = id, reason = 'redrive' })
      moved[#moved + 1] = id
    else
      redis.call('ZADD', K_DEAD, nowMs(), id) -- cannot run: stays dead
    end
  end
  ids = moved
end
flushWake()
flushEvents()
return ids
