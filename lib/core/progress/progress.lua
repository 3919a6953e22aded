--[[
  Progress and log lines of jobs, written by the handler that holds a job's lease
  (progress.lua, log.lua): K_PROGRESS maps a job to its last progress, logKey(id) lists its
  lines (the last ones, capped), and K_LOGGED maps each job that has such a list to the
  writer, number and lease token of its last line (log.lua), so that lists are found without
  SCAN. Both outlive retries and go with the job. The first write marks the queue (meta
  notes): queues without it skip every clean-up. Needs redis/keys.lua, redis/calls.lua.
]]

local function logKey(id) return K_TAG .. ':log:' .. id end

local notesFlag    -- per call (reset by begin()): meta notes as the lease script read it, nil unread
local droppedIds   -- per call: records an ack dropped (nil: none yet), forgotten by forgetDropped()

-- Marks the queue as one whose jobs have progress or lines (progress.lua, log.lua).
local function markNotes()
  redis.call('HSETNX', K_META, 'notes', '1')
end

-- Forgets the progress and lines of `ids`, jobs that are gone. Nothing for a queue whose
-- handlers never wrote either (one HEXISTS, none when the lease script read the flag).
local function forgetProgress(ids)
  if #ids == 0 or notesFlag == false then return end
  if notesFlag == nil and redis.call('HEXISTS', K_META, 'notes') == 0 then return end
  callMany('HDEL', K_PROGRESS, ids)
  for _, id in ipairs(ids) do
    if redis.call('HDEL', K_LOGGED, id) == 1 then redis.call('DEL', logKey(id)) end
  end
end

-- Acked jobs whose records were dropped (no retention): their notes are forgotten at the end
-- of the call, once the lease script has read the queue's flags (the hot path stays as it was).
local function noteDropped(ids)
  if not droppedIds then droppedIds = ids return end -- the caller's list: no copy
  for _, id in ipairs(ids) do droppedIds[#droppedIds + 1] = id end
end

local function forgetDropped()
  if droppedIds then forgetProgress(droppedIds) end
end
