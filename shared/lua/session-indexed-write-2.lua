-- Stores a console session under its index (api/console/session.ts). Expired members are dropped first, so the
-- cap counts live sessions.
-- KEYS[1]: index (sorted set: member = session key suffix, score = expiry ms), KEYS[2]: session key.
-- ARGV: now, expiry, cap, member, value, ttl ms, key base, mode ('evict' oldest or 'refuse' when full), index ttl ms.
-- Returns 1 when stored, 0 when refused.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local cap = tonumber(ARGV[3])
local known = redis.call('ZSCORE', KEYS[1], ARGV[4])
if not known and ARGV[8] == 'refuse' and redis.call('ZCARD', KEYS[1]) >= cap then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[6])
while redis.call('ZCARD', KEYS[1]) > cap do
  local oldest = redis.call('ZPOPMIN', KEYS[1])
  redis.call('DEL', ARGV[7] .. oldest[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[9])
return 1
