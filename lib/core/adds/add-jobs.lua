--[[
  Adding jobs, for add.lua (plain) and produce.lua (managed). A custom id is the caller's
  idempotency key: while its job exists, or its window (K_DEDUP) is open after it finished,
  adding it again writes nothing. A job with a deduplication id is created only when no other
  job holds that id (adds/deduplication.lua). Needs redis/keys.lua, redis/record.lua,
  events/events.lua, groups/groups.lua, adds/pending.lua, adds/delayed.lua,
  adds/deduplication.lua.
]]

-- A custom id whose idempotency window is still open (its job finished recently). `clock()`
-- returns now; it is called only when needed, so a plain add reads Redis time only then.
local function inDedupWindow(id, clock)
  local until_ = redis.call('ZSCORE', K_DEDUP, id)
  return until_ and tonumber(until_) > clock()
end

-- Makes the jobs addJobs gathered leasable: the ungrouped ones in one push, each group's in one.
local function placeGathered(plainIds, plainPrios, groupIds, groupOrder)
  if #plainIds > 0 then pushPending(plainIds, plainPrios) end
  if groupOrder then
    for _, g in ipairs(groupOrder) do pushGroup(g, groupIds[g]) end
  end
end

-- Adds n jobs given in `args` as items of `width` fields from `base`: id, flag ('1' when the
-- caller chose the id: an idempotency key, '0' not; '3' and '2' the same for a job with a
-- deduplication id in its meta), record, priority, due ('' now | 'l' now, at the
-- head: lifo | 'd<ms>' after a delay | 'a<ms>' at an absolute time), and when width is 6 a
-- group ('' none); then, from
-- `plainBase`, m jobs of 2 fields (id, record) with a generated id and nothing else (the
-- usual add: 2 arguments instead of 5; a caller sends one kind or the other, so that jobs
-- keep their order). A duplicate custom id writes nothing. Returns 1 (created) / 0
-- (duplicate) per job, or for a deduplicated one what dedupIds.add answers ('i', 'r' or 'd'
-- and the id of the job that holds its deduplication id), the number created and, when
-- `countBytes`, the data bytes created.
local function addJobs(args, base, width, n, clock, countBytes, plainBase, m)
  local out, plainIds, plainPrios = {}, {}, {}
  local groupIds, groupOrder -- made for the first grouped job
  local created, bytes = 0, 0
  for i = 1, n + (m or 0) do
    local id, flag, rec, prio, due, group
    if i <= n then
      local b = base + (i - 1) * width
      id, flag, rec, prio, due = args[b], args[b + 1], args[b + 2], args[b + 3], args[b + 4]
      group = width > 5 and args[b + 5] or ''
    else
      local b = plainBase + (i - n - 1) * 2
      id, flag, rec, prio, due, group = args[b], '0', args[b + 1], 0, '', ''
    end
    local custom, made = flag == '1' or flag == '3', false
    if custom and inDedupWindow(id, clock) then
      out[i] = 0
    elseif flag == '2' or flag == '3' then
      -- where its deduplication id's holder is, placed: the jobs gathered before it go first
      placeGathered(plainIds, plainPrios, groupIds, groupOrder)
      plainIds, plainPrios, groupIds, groupOrder = {}, {}, nil, nil
      local r = dedupIds.add(id, flag, rec, due, clock)
      if r == true then
        redis.call('HSET', K_JOBS, id, rec)
        made = true
      else
        out[i] = r
      end
    elseif redis.call('HSETNX', K_JOBS, id, rec) == 0 then
      -- An existing custom id is a duplicate. An existing generated id can only be
      -- this very request replayed after a lost reply, so it was created.
      out[i] = custom and 0 or 1
    else
      made = true
    end
    if made then
      out[i] = 1
      created = created + 1
      if countBytes then bytes = bytes + dataBytes(rec) end
      local runAt -- a delayed job's due time, in its 'added' event
      if due == 'l' then
        -- lifo: at the head now, on its own (the batched ones below go to the tail)
        pushPending({ id }, { tonumber(prio) }, { group ~= '' and group or false }, true)
      elseif due ~= '' then
        runAt = dueTime(due, clock)
        addDelayed(id, runAt)
      elseif group ~= '' then
        if not groupIds then groupIds, groupOrder = {}, {} end
        if not groupIds[group] then
          groupIds[group] = {}
          groupOrder[#groupOrder + 1] = group
        end
        local g = groupIds[group]
        g[#g + 1] = id
      else
        plainIds[#plainIds + 1] = id
        plainPrios[#plainPrios + 1] = tonumber(prio)
      end
      if eventsOn() then emit({ type = 'added', id = id, name = metaName(rec), runAt = runAt }) end
    end
  end
  placeGathered(plainIds, plainPrios, groupIds, groupOrder)
  return out, created, bytes
end

-- A queue with stats counts what was produced; HINCRBY answers the new totals, so the stats
-- event costs no extra command.
local function countProduced(messages, bytes)
  local pm = redis.call('HINCRBY', K_STATS, 'pm', messages)
  local pb = redis.call('HINCRBY', K_STATS, 'pb', bytes)
  emit({ type = 'stats', produced = { messages = pm, bytes = pb } })
end
