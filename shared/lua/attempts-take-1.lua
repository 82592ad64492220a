-- Counts one attempt (api/console/attempts.ts); the window starts at the first. The caller compares with its limit.
-- KEYS[1]: the counter.
-- ARGV: the window (ms).
-- Returns {attempts so far including this one, ms left in the window}.
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { n, redis.call('PTTL', KEYS[1]) }
