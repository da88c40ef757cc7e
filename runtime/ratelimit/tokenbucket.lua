-- A token bucket per key of KEYS, the i-th refilled continuously at ARGV[2i-1] tokens per second (a fraction for
-- limits per hour) up to ARGV[2i] tokens (its burst). A call takes one token from every bucket if each has one,
-- and none otherwise: a request one bucket refuses spends nothing of the others. Run atomically by Redis; the
-- time is the Redis server's (TIME), so the clocks of the replicas calling it never matter. A rate or burst other
-- than last time applies at once: the tokens left are kept, refilled at the new rate and capped at the new burst.
-- State: a hash {tokens, ts} (ts in microseconds) per key, expiring once the bucket would be full again, so idle
-- merchants and clients cost no memory.
-- Returns {index (from 1) of the first bucket without a token, or 0 if allowed; that bucket's whole tokens left
-- (the first bucket's when allowed); microseconds until it has a token (0 if one is left)}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rates, bursts, tokens, stamps = {}, {}, {}, {}
local refused = 0
for i, key in ipairs(KEYS) do
  local rate, burst = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local state = redis.call('HMGET', key, 'tokens', 'ts')
  local n, ts = tonumber(state[1]), tonumber(state[2])
  if n == nil or ts == nil then
    n, ts = burst, now
  end
  if now > ts then -- a Redis clock that stepped back refills nothing until it catches up
    n = n + (now - ts) * rate / 1000000
    ts = now
  end
  if n > burst then
    n = burst
  end
  if n < 1 and refused == 0 then
    refused = i
  end
  rates[i], bursts[i], tokens[i], stamps[i] = rate, burst, n, ts
end
for i, key in ipairs(KEYS) do
  if refused == 0 then
    tokens[i] = tokens[i] - 1
  end
  redis.call('HSET', key, 'tokens', string.format('%.6f', tokens[i]), 'ts', string.format('%.0f', stamps[i]))
  redis.call('PEXPIRE', key, string.format('%d', math.ceil((bursts[i] - tokens[i]) * 1000 / rates[i]) + 1000))
end
local shown = math.max(refused, 1)
local wait = 0
if tokens[shown] < 1 then
  wait = math.ceil((1 - tokens[shown]) * 1000000 / rates[shown])
end
return {refused, math.floor(tokens[shown]), wait}
