-- Gives one attempt back (api/console/attempts.ts): never below zero, never creating the key.
-- KEYS[1]: the counter.
-- ARGV: none.
-- Returns 0.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0
