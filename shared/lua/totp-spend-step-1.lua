-- Spends a TOTP time step (api/console/totp.ts). One script: a later step is never overwritten by an earlier
-- one, and of concurrent requests with one code exactly one records it.
-- KEYS[1]: the account's last spent step.
-- ARGV: step, TTL seconds.
-- Returns 1 when the step is later than the last spent one (and records it), else 0.
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
