--[[
  Opens a closed queue for adds again (lib/core/settings/queue-settings.ts reopenQueue()).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not

  Output:
    1, 0 when it was open, or 'deleted' (tombstone: nothing written)

  Events:
    reopened
]]
eventsArg = ARGV[1] == '1'
if isDeleted() then return 'deleted' end
local result = redis.call('HDEL', K_META, 'closed')
if result == 1 then emit({ type = 'reopened' }) end
flushEvents()
return result
