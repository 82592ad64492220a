-- A token bucket (api/http/throttle.ts). The key lives until the bucket is full again, so a debt is never
-- forgiven by expiry.
-- KEYS[1]: the bucket (hash: t tokens, ts last update ms).
-- ARGV: capacity, refill per ms, now ms, cost, mode: 'take' (refused while fewer than `cost` tokens, at least one,
--   are left), 'look' (the same test, nothing spent), 'give' (cost back, never above capacity), 'charge' (cost
--   spent whatever is left: the bucket may go below zero, a debt the refill pays before the next take).
-- Returns {allowed (1/0), retryAfterMs}.
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local mode = ARGV[5]
local b = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(b[1]) or cap
local ts = tonumber(b[2]) or now
tokens = math.min(cap, tokens + (now - ts) * rate)
if mode == 'give' then
  tokens = math.min(cap, tokens + cost)
elseif mode == 'charge' then
  tokens = tokens - cost
else
  local need = math.max(1, cost)
  if tokens < need then
    return {0, math.ceil((need - tokens) / rate)}
  end
  if mode == 'look' then return {1, 0} end
  tokens = tokens - cost
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate) + 1000)
return {1, 0}
