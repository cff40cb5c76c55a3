--[[
  Append several events of one run, in order, in one call: each as append-event.lua appends one
  (the same checks, projections and publish), so the call does what that many append-event calls
  in a row would. Lets a worker write the events of tool calls that start or settle together with
  one script call instead of one each. Tool calls' events in a row are a batch (append.lua): the
  run hash is read and written, and the stored bytes, trim look and TTLs dealt with, once for
  them all.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index

      ARGV[1] m, the number of events; then per event, in order:
        type, runId (the run of KEYS[3]), writer's epoch, data head, reply channel ('' for none),
        reply message, r, f, then r pairs (name, JSON) spliced into the data, then f fact pairs;
      then, optionally, a trail mark: left on the run hash (`trailMark`) once every event is
        written, so that an end sent right behind these events can tell they all landed
        (finish-run.lua, RunEventWriter.sendMarkedTrail)

    Output:
      m replies, one per event, in order:
      {1, eventId}
      {-1, ''}      run not found
      {-2, status}  run already ended
      {-3, epoch}   stale epoch (the run's epoch)
      {-5, type}    type needs its dedicated script
      {-6, error}   the append raised `error` (RUN_HISTORY_LIMIT ...) before writing this event;
                    the events after it are not tried and answer the same

    Events:
      each event's type
]]
--- @include "includes/append"

local replies = {}
local i = 2
local raised = nil
for n = 1, tonumber(ARGV[1]) do
  local nraws, nfacts = tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7])
  if raised then
    replies[n] = { -6, raised }
  else
    local ev = { type = ARGV[i], runId = ARGV[i + 1], epoch = tonumber(ARGV[i + 2]), head = ARGV[i + 3], raws = {}, facts = {} }
    local j = i + 8
    for _ = 1, nraws do
      ev.raws[#ev.raws + 1] = { ARGV[j], ARGV[j + 1] }
      j = j + 2
    end
    for _ = 1, nfacts do
      ev.facts[ARGV[j]] = ARGV[j + 1]
      j = j + 2
    end
    if BATCHED[ev.type] and not batch then open_batch() end
    if batch and not BATCHED[ev.type] then close_batch(KEYS) end
    local ok, reply = pcall(append_generic, KEYS, ev, ARGV[i + 4], ARGV[i + 5])
    if ok then
      replies[n] = reply
    else
      raised = type(reply) == 'table' and reply.err or tostring(reply)
      replies[n] = { -6, raised }
    end
  end
  i = i + 8 + 2 * (nraws + nfacts)
end
if batch then close_batch(KEYS) end
local mark = ARGV[i]
if mark and mark ~= '' and not raised then
  local all = true
  for _, reply in ipairs(replies) do
    if reply[1] ~= 1 then all = false end
  end
  -- A batch that ended its run left no hash to mark (fold-run.lua): an end sent behind it finds the run ended.
  if all and not run_folded then redis.call('HSET', KEYS[3], 'trailMark', mark) end
end
return replies
