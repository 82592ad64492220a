-- Drops a cached authentication and moves its generation on (shared/accounts/auth-cache.ts), so a lookup that
-- began before cannot cache its older read.
-- KEYS[1]: generation, KEYS[2]: entry.
-- ARGV: mark TTL seconds.
-- Returns 1.
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
