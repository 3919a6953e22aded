-- Stops or restarts leasing (adds go on). ARGV: 1 events(0/1), 2 'pause' | 'resume'.
eventsArg = ARGV[1] == '1'
if ARGV[2] == 'pause' then
  redis.call('HSET', K_META, 'paused', '1')
  emit({ type = 'paused' })
else
  if redis.call('HDEL', K_META, 'paused') == 1 then wakeNeeded = true end
  emit({ type = 'resumed' })
end
flushWake()
flushEvents()
return 1
