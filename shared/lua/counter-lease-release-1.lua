-- Gives up a usage counter's lease (shared/billing/usage-counters.ts), only when this writer still holds it.
-- KEYS[1]: the lease key.
-- ARGV: this writer's token.
-- Returns 1 when released, 0 when another writer holds it (or nobody).
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
