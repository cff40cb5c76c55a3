--[[
  Recovery (SPEC §6): a worker takes a run over from an owner whose lease is gone (or that
  released it at shutdown), bumping the run's epoch so every later write of the old owner is
  rejected as stale (fencing). Compare-and-set on owner and epoch: of two workers racing for the
  run, one wins.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index

      ARGV[1] runId
      ARGV[2] workerId taking the run
      ARGV[3] owner the taker saw ('' for a released run)
      ARGV[4] epoch the taker saw
      ARGV[5] token of the wait's reservation ('' when a re-delivered cell job takes a running run)
      ARGV[6] reason (kept in the event)

    Output:
      {1, newEpoch}     taken
      {0, status}       not taken: ended, reserved by another wait, or owner/epoch changed

    Events:
      run.recovered
]]
--- @include "includes/append"

local runId, workerId, owner, epoch, token = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local st = run_fields(KEYS[3], { 'status', 'owner', 'epoch', 'resumeToken' })
if not st[1] then return { 0, '' } end
if (st[2] or '') ~= owner or tonumber(st[3]) ~= epoch then return { 0, st[1] } end
if token ~= '' then
  if st[1] ~= 'waiting' or st[4] ~= token then return { 0, st[1] } end
elseif st[1] ~= 'running' then
  return { 0, st[1] }
end

local newEpoch = epoch + 1
redis.call('HSET', KEYS[3], 'owner', workerId, 'epoch', newEpoch)
local head = '{"workerId":' .. cjson.encode(workerId) .. ',"fromWorker":' .. cjson.encode(owner) ..
  ',"epoch":' .. newEpoch .. ',"reason":' .. cjson.encode(ARGV[6]) .. '}'
append_event(KEYS, { type = 'run.recovered', runId = runId, epoch = newEpoch, head = head, raws = {}, facts = {} })
return { 1, newEpoch }
