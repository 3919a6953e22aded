--[[
  Progress and log lines of jobs, written by the handler that holds a job's lease
  (progress.lua, log.lua): K_PROGRESS maps a job to its last progress, logKey(id) lists its
  lines (the last ones, capped), and K_LOGGED maps each job that has such a list to the
  writer, number and lease token of its last line (log.lua), so that lists are found without SCAN. Both outlive retries and go with the job. Needs
  include/keys.lua, include/calls.lua.
]]

local function logKey(id) return K_TAG .. ':log:' .. id end

-- Forgets the progress and lines of `ids`, jobs that are gone. One EXISTS when no handler
-- of the queue ever wrote either: free for queues that do not use them.
local function forgetProgress(ids)
  if #ids == 0 or redis.call('EXISTS', K_PROGRESS, K_LOGGED) == 0 then return end
  callMany('HDEL', K_PROGRESS, ids)
  for _, id in ipairs(ids) do
    if redis.call('HDEL', K_LOGGED, id) == 1 then redis.call('DEL', logKey(id)) end
  end
end
