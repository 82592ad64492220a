-- Decides a job's admission to the fair queue and, when admitted, counts it as its tenant's waiting job, in one
-- step (shared/queues/fair-queue.ts; its header explains the estimate). Each tenant's keys are reached by name
-- from the prefix given: they share the queue prefix's hash tag, so they sit in the declared keys' slot.
-- KEYS[1]: tenants, KEYS[2]: this tenant's waiting jobs.
-- ARGV: key prefix of a tenant's set, tenant, job id, deadline (epoch ms), now (epoch ms), service ms (-1: not
--   measured yet), workers, usable ms, ceiling of waiting jobs in all (0: none), scale (a tenant's cost figure x
--   scale = its time per job), key prefix of a tenant's cost, quantum ms.
-- Returns {verdict (0 admitted, 1 expected wait too long, 2 ceiling), rank, ahead, waiting, expected wait ms (-1), round}.
local now = tonumber(ARGV[5])
local service, workers, scale = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[10])
local function perJob(t)
  local cost = tonumber(redis.call('GET', ARGV[11] .. t))
  if cost == nil or service < 0 then return service end
  return cost * scale
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local mine = redis.call('ZCARD', KEYS[2])
local rank = mine + 1
local own = perJob(ARGV[2])
local quantum = tonumber(ARGV[12])
local measured = service >= 0
local round = 1
if measured then round = 1 + math.floor(mine * own / quantum) end
local ahead, waiting, aheadMs = mine, mine, mine * own
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for _, t in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if t ~= ARGV[2] then
    local k = ARGV[1] .. t
    redis.call('ZREMRANGEBYSCORE', k, '-inf', now)
    local n = redis.call('ZCARD', k)
    if n == 0 then
      redis.call('ZREM', KEYS[1], t)
    else
      waiting = waiting + n
      if measured then
        -- Its work in rounds up to this job's runs first; in earlier rounds, also work it sends after this job.
        local each = math.max(perJob(t), 0.001)
        local share = math.max(math.min(n * each, round * quantum), (round - 1) * quantum)
        aheadMs = aheadMs + share
        ahead = ahead + math.ceil(share / each)
      else
        ahead = ahead + n
      end
    end
  end
end
local expected = -1
if service >= 0 then expected = math.ceil(aheadMs / workers + own) end
local verdict = 0
if expected > tonumber(ARGV[8]) then
  verdict = 1
elseif tonumber(ARGV[9]) > 0 and waiting >= tonumber(ARGV[9]) then
  verdict = 2
else
  local deadline = tonumber(ARGV[4])
  redis.call('ZADD', KEYS[2], deadline, ARGV[3])
  redis.call('PEXPIREAT', KEYS[2], deadline + 1000)
  local latest = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]))
  if latest == nil or latest < deadline then redis.call('ZADD', KEYS[1], deadline, ARGV[2]) end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 or ttl < deadline - now + 1000 then redis.call('PEXPIREAT', KEYS[1], deadline + 1000) end
end
return {verdict, rank, ahead, waiting, expected, round}
