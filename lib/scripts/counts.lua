-- Per-state counts, read atomically. Reply: { pending, working, delayed, completed, dead, paused, ghosts }
-- Completed jobs past their retention are not counted, whether or not a sweep removed them yet.
return {
  redis.call('LLEN', K_PENDING) + redis.call('ZCARD', K_PRIO) + (tonumber(redis.call('HGET', K_META, 'gp')) or 0),
  redis.call('ZCARD', K_WORKING),
  redis.call('ZCARD', K_DELAYED),
  redis.call('ZCOUNT', K_DONE, '(' .. nowMs(), '+inf'),
  redis.call('ZCARD', K_DEAD),
  redis.call('HEXISTS', K_META, 'paused'),
  tonumber(redis.call('HGET', K_META, 'ghosts')) or 0,
}
