--[[
  The queue's live workers (lib/core/workers/presence.ts, docs/observability.md "Who is working"):
  a worker's lease call or heartbeat carries its registration every few seconds (never a
  call of its own while it leases or is idle), written here into two keys derived from the
  tag: K_TAG .. ':workers' zset worker id -> when its entry expires (ms, Redis clock), and
  K_TAG .. ':workerinfo' hash worker id -> '<started ms> <last seen ms> <info json>'.
  Expired entries are dropped by whoever reads them and by the sweep, in bounded steps.
  One table: one local of the shared code (whose locals Lua bounds). Needs redis/keys.lua,
  redis/calls.lua.
]]
local workerList = {}

function workerList.keys() return K_TAG .. ':workers', K_TAG .. ':workerinfo' end

-- A call's registration argument: '' none; '-<id>' the worker leaves; '<ttl ms> <id> <info
-- json>' it is alive. Its start is kept from its first registration.
function workerList.note(arg, now)
  if arg == '' then return end
  local zkey, hkey = workerList.keys()
  if string.sub(arg, 1, 1) == '-' then
    local id = string.sub(arg, 2)
    redis.call('ZREM', zkey, id)
    redis.call('HDEL', hkey, id)
    return
  end
  local ttl, id, info = string.match(arg, '^(%d+) (%S+) (.*)$')
  local prev = redis.call('HGET', hkey, id)
  local started = prev and string.match(prev, '^%d+') or int(now)
  redis.call('HSET', hkey, id, started .. ' ' .. int(now) .. ' ' .. info)
  redis.call('ZADD', zkey, now + tonumber(ttl), id)
end

-- Drops up to `limit` entries expired at `now`. One ZRANGEBYSCORE when none is.
function workerList.prune(now, limit)
  local zkey, hkey = workerList.keys()
  local gone = redis.call('ZRANGEBYSCORE', zkey, '-inf', now, 'LIMIT', 0, limit)
  if #gone == 0 then return end
  callMany('ZREM', zkey, gone)
  callMany('HDEL', hkey, gone)
end
