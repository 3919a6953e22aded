--[[
  Job schedulers (lib/core/schedulers/schedulers.ts): K_SCHEDS holds each scheduler's config
  ("<config json>\n<job record template>", written by the client, never read here), and
  K_SCHED_STATE its state "<version>:<next slot>:<jobs made>", next '' once it has ended.
  K_SCHED_NEXT indexes the next slots, so a tick finds the due schedulers in O(log S).
  Slots stay strings: Lua's tostring() would print an epoch ms as 1.7e+12. The job of a slot
  has the custom id 'repeat:<scheduler id>:<slot>', an idempotency key: a slot is added at
  most once, whoever adds it. Needs redis/keys.lua, redis/calls.lua, adds/delayed.lua,
  adds/add-jobs.lua.
]]

local function schedJobId(id, slot) return 'repeat:' .. id .. ':' .. slot end

-- version (number), next slot (string, nil once ended), jobs made (number); nil: no scheduler
local function schedState(id)
  local s = redis.call('HGET', K_SCHED_STATE, id)
  if not s then return nil end
  local v, nxt, made = string.match(s, '^(%d+):(%d*):(%d+)$')
  if nxt == '' then nxt = nil end
  return tonumber(v), nxt, tonumber(made)
end

local function setSchedState(id, v, nxt, made)
  redis.call('HSET', K_SCHED_STATE, id, string.format('%d', v) .. ':' .. (nxt or '') .. ':' .. string.format('%d', made))
  if nxt then redis.call('ZADD', K_SCHED_NEXT, nxt, id) else redis.call('ZREM', K_SCHED_NEXT, id) end
end

-- Adds the job of one slot, due at the slot (a past slot is due at once). Nothing while the
-- queue is closed (the slot still counts as passed). Returns 1 when a job was created.
local function addSlotJob(id, slot, rec, clock)
  if redis.call('HEXISTS', K_META, 'closed') == 1 then return 0 end
  local out = addJobs({ schedJobId(id, slot), '1', rec, '0', 'a' .. slot }, 1, 5, 1, clock, false)
  return out[1]
end

-- The next slot's job is made ahead of time: when the scheduler changes or goes, that job
-- goes too while it is still delayed. A slot that came due is a real run: it stays.
local function dropAheadJob(id, slot)
  local jid = schedJobId(id, slot)
  if not unDelay(jid) then return end
  redis.call('ZREM', K_DEDUP, jid)
  redis.call('HDEL', K_JOBS, jid)
  refreshNextDue()
  emit({ type = 'removed', id = jid })
end

-- Appends one scheduler as the read scripts answer it (scheduler-due.lua, scheduler-list.lua):
-- its id, its config ('' no such scheduler) and its state ('' no such scheduler).
local function putScheduler(out, id)
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', K_SCHEDS, id) or ''
  out[#out + 1] = redis.call('HGET', K_SCHED_STATE, id) or ''
end
