--[[
  Changes what a parked run counts against its tenant's parked bytes (SPEC §10 "Parked memory"):
  its VM's memory size while a worker keeps it in memory, its image's size once it is only in
  Redis (evicted, or handed over). Never refused: a run that leaves memory only shrinks (a run
  back in memory is counted again by admit-parked-run when it parks). A run no longer counted
  (released, or lapsed at its expiry) is left uncounted.

    Input:
      KEYS[1] the tenant's parked runs (sorted set: runId → expiry, ms)
      KEYS[2] the tenant's parked bytes (hash: runId → bytes)

      ARGV[1] runId
      ARGV[2] the bytes it counts from now on

    Output:
      1  recounted
      0  the run holds no place in the quota

    Events:
      none
]]
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
