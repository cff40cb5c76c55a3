--[[
  Renews the leases of holders that still hold a slot of one tenant's quota (a holder whose
  lease already lapsed is not brought back: its slot may have been given to another).

    Input:
      KEYS[1] the quota's sorted set

      ARGV[1] lease length (ms)
      ARGV[2..n] holder ids

    Output:
      number of leases renewed

    Events:
      none
]]
local leaseMs = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local renewed = 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score ~= false and tonumber(score) > now then
    redis.call('ZADD', KEYS[1], 'XX', now + leaseMs, ARGV[i])
    renewed = renewed + 1
  end
end
if renewed > 0 and redis.call('PTTL', KEYS[1]) < leaseMs then redis.call('PEXPIRE', KEYS[1], leaseMs) end
return renewed
