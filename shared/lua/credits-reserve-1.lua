-- Takes one credit for a request (shared/billing/credit-ledger.ts), refusing past the limit when the hard cap is on.
-- KEYS[1]: the customer's credits hash for the month. Fields: calls (committed + in flight), used, overage,
--   d:DD (daily committed), p:<requestId> (in flight, value = ms).
-- ARGV: limit, hard cap ('1'/'0'), request id, now (epoch ms), stale reservation ms (a capped call first releases
--   reservations older than this: orphaned by a crashed API process).
-- Returns -1 when the hash is missing (seed it from the events, then ask again), 0 when capped, 1 when reserved.
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return -1 end
local limit, capped, rid, now, stale = tonumber(ARGV[1]), ARGV[2] == '1', ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local calls = tonumber(redis.call('HGET', key, 'calls') or '0')
if capped and calls >= limit then
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'p:' and tonumber(fields[i + 1]) < now - stale then
      redis.call('HDEL', key, fields[i])
      calls = tonumber(redis.call('HINCRBY', key, 'calls', -1))
    end
  end
  if calls >= limit then return 0 end
end
redis.call('HINCRBY', key, 'calls', 1)
redis.call('HSET', key, 'p:' .. rid, now)
return 1
