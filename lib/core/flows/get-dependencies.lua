--[[
  One page of a flow parent's children, wherever they live, each with its state
  (lib/core/flows/flows.ts getDependencies(), getFlow()): read from kidsKey(parent), which
  lists them in the order the flow gave them (flows/flows.lua). The parent may be in another
  queue of this one's slot (a child of a flow across queues, walked by getFlow()).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      tag: the key tag of the parent's queue, '' for this queue
    ARGV[2]      id: the parent's id
    ARGV[3]      offset: the first child to answer, 0-based
    ARGV[4]      limit: how many children at most

  Output:
    { parent state ('' none), children in all, then 4 fields a child: id, its queue's tag ('' the
    parent's queue), state ('' gone: removed, or past its retention), its own children in all }
]]
local tag, id, offset, limit = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if tag ~= '' then bindTag(tag) end -- redis/keys.lua: same slot, read only
local now = nowMs()

-- The state of job `jid` of the bound queue ('' none) and how many children it has.
local function stateOf(jid)
  if redis.call('HEXISTS', K_JOBS, jid) == 0 then return '', 0 end
  local state, score = locateJob(jid) -- management/remove.lua
  if state == 'completed' and tonumber(score) <= now then return '', 0 end
  return state, redis.call('LLEN', kidsKey(jid))
end

local out = { stateOf(id) }
local home = K_TAG
for _, member in ipairs(redis.call('LRANGE', kidsKey(id), offset, offset + limit - 1)) do
  local nl = string.find(member, '\n', 1, true)
  local kid, ktag = member, ''
  if nl then
    kid, ktag = string.sub(member, 1, nl - 1), string.sub(member, nl + 1)
    bindTag(ktag)
  end
  local state, total = stateOf(kid)
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = kid, ktag, state, total
  if nl then bindTag(home) end
end
return out
