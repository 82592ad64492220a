-- Decides a job's admission to the fair queue and, when admitted, counts it as its tenant's waiting job, in one
-- step; may push out other tenants' latest waiting jobs to make it fit (docs/reliability.md, "Fair queueing across
-- tenants"). Tenants' keys are reached by name from the prefix given, in the declared keys' hash-tag slot.
-- KEYS[1]: tenants, KEYS[2]: this tenant's waiting jobs.
-- ARGV: key prefix of a tenant's set, tenant, job id, deadline (epoch ms), now (epoch ms), service ms (-1: not
--   measured yet), workers, usable ms, ceiling of waiting jobs in all (0: none), scale (a tenant's cost figure x
--   scale = its time per job), key prefix of a tenant's cost, quantum ms, key prefix of an evicted job's mark, most
--   work (ms) one admission may evict.
-- A pushed-out job leaves its tenant's set and is marked evicted (its worker answers it 503 at once, unrun).
-- Returns {verdict (0 admitted, 1 expected wait too long, 2 ceiling), rank, ahead, waiting, expected wait ms (-1),
--   round, then for each evicted job its id and its tenant}.
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
-- Its work in rounds up to this job's runs first; in earlier rounds, also work it sends after this job.
local function shareOf(n, each) return math.max(math.min(n * each, round * quantum), (round - 1) * quantum) end
-- The other tenants with jobs waiting (for push-out): key, tenant, count, time per job.
local busy = {}
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
        local each = math.max(perJob(t), 0.001)
        local share = shareOf(n, each)
        aheadMs = aheadMs + share
        ahead = ahead + math.ceil(share / each)
        busy[#busy + 1] = {key = k, tenant = t, n = n, each = each}
      else
        ahead = ahead + n
      end
    end
  end
end
local usable, ceiling = tonumber(ARGV[8]), tonumber(ARGV[9])
local function verdictOf(expectedMs, waitingJobs)
  if expectedMs > usable then return 1 end
  if ceiling > 0 and waitingJobs >= ceiling then return 2 end
  return 0
end
local function expectedOf(ms) return math.ceil(ms / workers + own) end
local expected = -1
if measured then expected = expectedOf(aheadMs) end
local verdict = verdictOf(expected, waiting)
-- Push-out, planned first and carried out only if it makes this job fit.
local plan = {}
if verdict ~= 0 and measured then
  local planned, planMs, planWaiting, budget = {}, aheadMs, waiting, tonumber(ARGV[14])
  while true do
    local best, bestGain = nil, 0
    for _, b in ipairs(busy) do
      local gain = shareOf(b.n, b.each) - shareOf(b.n - 1, b.each)
      if gain > 0 and (b.n - 1) * b.each >= (mine + 1) * own and (best == nil or b.n * b.each > best.n * best.each) then
        best, bestGain = b, gain
      end
    end
    if best == nil or best.each > budget then break end
    budget = budget - best.each
    best.n = best.n - 1
    planned[#planned + 1] = best
    planMs, planWaiting = planMs - bestGain, planWaiting - 1
    if verdictOf(expectedOf(planMs), planWaiting) == 0 then
      plan = planned
      expected, waiting, ahead, verdict = expectedOf(planMs), planWaiting, ahead - #planned, 0
      break
    end
  end
end
local result = {verdict, rank, ahead, waiting, expected, round}
for _, b in ipairs(plan) do
  -- The tenant's latest waiting job (latest deadline) not taken by this plan already.
  local latest = redis.call('ZRANGE', b.key, -1, -1, 'WITHSCORES')
  redis.call('ZREM', b.key, latest[1])
  redis.call('SET', ARGV[13] .. latest[1], b.tenant, 'PX', math.max(1, tonumber(latest[2]) - now + 1000))
  result[#result + 1] = latest[1]
  result[#result + 1] = b.tenant
end
if verdict == 0 then
  local deadline = tonumber(ARGV[4])
  redis.call('ZADD', KEYS[2], deadline, ARGV[3])
  redis.call('PEXPIREAT', KEYS[2], deadline + 1000)
  local latest = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]))
  if latest == nil or latest < deadline then redis.call('ZADD', KEYS[1], deadline, ARGV[2]) end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 or ttl < deadline - now + 1000 then redis.call('PEXPIREAT', KEYS[1], deadline + 1000) end
end
return result
