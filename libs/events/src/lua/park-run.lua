--[[
  Record a park in one step: the run's image (SPEC §12) and its `run.parked` event, through the
  shared append path (as append-event.lua), in the session's slot. A crash, a failover or a
  refused write can no longer leave a parked run without its image or an image of a park that
  was never recorded: the image is written only when the run accepts the event, and before it,
  since the append counts the image's bytes into the session's (count_image). The image key
  expires at the instant `run.parked` records as the run's expiry (PEXPIREAT), never at a TTL
  of its own. A `run.parked` for a run already parked is the retry of one whose reply was lost:
  its image is written again (the same bytes) and the first park's event id answered.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index, KEYS[6] the run's image hash

      ARGV[1] runId
      ARGV[2] writer's epoch (fenced against the run's epoch; the image is bound to it)
      ARGV[3] data head: JSON object text without the raw fields
      ARGV[4] reply channel ('' for none)
      ARGV[5] reply message, published verbatim after the append
      ARGV[6] the run's expiry (epoch ms): the image key expires then
      ARGV[7] image bytes, ARGV[8] wasm hash, ARGV[9] prelude version, ARGV[10] host record (JSON)
      ARGV[11] n, then n pairs (name, JSON) spliced into the data, then (name, value) fact pairs

    Output:
      {1, eventId}
      {-1, ''}      run not found
      {-2, status}  run already ended
      {-3, epoch}   stale epoch (the run's epoch)

    Events:
      run.parked
]]
--- @include "includes/append"

local refused = check_run_write(KEYS, ARGV[1], tonumber(ARGV[2]))
if refused then return refused end
redis.call('DEL', KEYS[6])
redis.call('HSET', KEYS[6], 'image', ARGV[7], 'wasmHash', ARGV[8], 'preludeVersion', ARGV[9], 'epoch', ARGV[2], 'host', ARGV[10])
redis.call('PEXPIREAT', KEYS[6], ARGV[6])
local raws, facts = read_raws_and_facts(11)
return append_generic(KEYS, { type = 'run.parked', runId = ARGV[1], epoch = tonumber(ARGV[2]), head = ARGV[3],
  raws = raws, facts = facts }, ARGV[4], ARGV[5])
