-- A token bucket per key, refilled continuously at ARGV[1] tokens per second (a fraction for limits per hour) up
-- to ARGV[2] tokens (the burst), taking one token per call. Run atomically by Redis; the time is the Redis server's
-- (TIME), so the clocks of the replicas calling it never matter. A rate or burst other than last time applies at once: the tokens left are
-- kept, refilled at the new rate and capped at the new burst.
-- State: a hash {tokens, ts} (ts in microseconds), expiring once the bucket would be full again, so idle
-- merchants cost no memory.
-- Returns {1 if allowed else 0, whole tokens left, microseconds until the next token (0 if one is left)}.
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens, ts = burst, now
end
if now > ts then -- a Redis clock that stepped back refills nothing until it catches up
  tokens = tokens + (now - ts) * rate / 1000000
  ts = now
end
if tokens > burst then
  tokens = burst
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
local wait = 0
if tokens < 1 then
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', string.format('%.0f', ts))
redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil((burst - tokens) * 1000 / rate) + 1000))
return {allowed, math.floor(tokens), wait}
