--[[
  The tombstone of a deleted queue (settings/delete-queue.lua leaves it: meta del=1), which
  refuses the operations that would bring the queue back. Needs redis/keys.lua.
]]

local function isDeleted()
  return redis.call('HEXISTS', K_META, 'del') == 1
end
