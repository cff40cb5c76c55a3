--[[
  Reads events of a session's log by id, wherever the log keeps them: its stream, or the record
  of a finished run folded into one (includes/run-record.lua), which holds an event at most
  SPAN_MS after its run's request. EventLog.loggedAt (transcripts, results by their event).

    Input:
      KEYS[1] the session's event stream, KEYS[2] its runs index, KEYS[3] its finished runs'
      records, KEYS[4] those retention cut through, KEYS[5] the session hash

      ARGV[1..n] stream ids

    Output:
      the entries found, as XRANGE returns them, in the order asked; an id the log no longer
      holds is left out

    Events:
      none
]]
--- @include "includes/run-record"
--- @no-writes

-- runId → its record's entries by id, decoded once per call.
local decoded = {}
local function entries_of(runId, record)
  if not decoded[runId] then
    local by_id = {}
    for _, entry in ipairs(record_entries(record, runId)) do by_id[entry[1]] = entry end
    decoded[runId] = by_id
  end
  return decoded[runId]
end

local trimmedTo = nil
local found = {}
for _, id in ipairs(ARGV) do
  local entry = redis.call('XRANGE', KEYS[1], id, id)[1]
  local ms = tonumber(string.match(id, '^(%d+)'))
  if not entry and ms then
    local runs = redis.call('ZRANGE', KEYS[2], int(math.max(0, ms - SPAN_MS)), int(ms), 'BYSCORE')
    if not trimmedTo then trimmedTo = tonumber(redis.call('HGET', KEYS[5], 'trimmedTo') or '0') end
    -- A run retention cut through keeps only its events from the trim point on.
    if ms >= trimmedTo then
      for _, runId in ipairs(redis.call('ZRANGE', KEYS[4], int(math.max(0, ms - SPAN_MS)), int(ms), 'BYSCORE')) do
        runs[#runs + 1] = runId
      end
    end
    for _, runId in ipairs(runs) do
      local record = decoded[runId] and '' or redis.call('HGET', KEYS[3], past_field(runId))
      if record and (record == '' or record_end_ms(record) >= ms) then
        entry = entries_of(runId, record)[id]
        if entry then break end
      end
    end
  end
  if entry then found[#found + 1] = entry end
end
return found
