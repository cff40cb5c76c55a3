--[[
  A worker gives up a parked replay-safe run it can no longer keep in memory (SPEC §6: graceful
  shutdown, forced replay mode, a lost lease): the owner is cleared, so the next `wait` rebuilds
  the run by replay at once instead of waiting for a lease to lapse. Fenced by owner and epoch.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index

      ARGV[1] runId
      ARGV[2] workerId releasing it
      ARGV[3] epoch it holds the run with
      ARGV[4] reason (kept in the event)

    Output:
      {1}          released
      {0, status}  not released: not parked, or no longer this worker's at this epoch

    Events:
      run.released
]]
--- @include "includes/append"

local runId, workerId, epoch = ARGV[1], ARGV[2], tonumber(ARGV[3])
local st = run_fields(KEYS[3], { 'status', 'owner', 'epoch' })
if st[1] ~= 'waiting' or st[2] ~= workerId or tonumber(st[3]) ~= epoch then return { 0, st[1] or '' } end

redis.call('HSET', KEYS[3], 'owner', '')
local head = '{"workerId":' .. cjson.encode(workerId) .. ',"reason":' .. cjson.encode(ARGV[4]) .. '}'
append_event(KEYS, { type = 'run.released', runId = runId, epoch = epoch, head = head, raws = {}, facts = {} })
return { 1 }
