-- Caches an authentication (shared/accounts/auth-cache.ts) only when nothing changed the account since the
-- lookup began: not revoked, and the generation still the one seen at lookup start.
-- KEYS[1]: entry, KEYS[2]: revoked mark, KEYS[3]: generation.
-- ARGV: generation seen at lookup start ('' = none), authentication JSON, TTL seconds.
-- Returns 1 when cached, 0 when refused.
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local gen = redis.call('GET', KEYS[3]) or ''
if gen ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
