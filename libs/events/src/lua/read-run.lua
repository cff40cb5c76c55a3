--[[
  Read a run as its readers see it: its hash, and the data of the event that carries its last
  result (`resultEvent`, its parked or terminal event). The hash keeps that event's id, not a copy
  of the result (projections.lua); a hash an earlier release wrote keeps the copy, `lastResult`,
  and then the event is not read. A finished run's hash kept compact keeps `resultEvent` in its
  `ended` field (includes/ended-run.lua), which views.ts reads as the other fields. A folded run
  (includes/run-record.lua) is read from its record: its hash's fields, and its result event among
  its entries (or in the log, where a long run's entries stay).

    Input:
      KEYS[1] run hash, KEYS[2] stream

    Output:
      {hash as HGETALL answers it, the result event's `data` | ''}
      ('' also when the log no longer holds the event)
]]
--- @include "includes/ended-run"
--- @no-writes

local hash = redis.call('HGETALL', KEYS[1])
local record = false
if #hash == 0 then
  record = record_of(KEYS[1])
  if record then hash = record_fields(record) end
end
local resultEvent, ended, copied
for i = 1, #hash, 2 do
  if hash[i] == 'resultEvent' then resultEvent = hash[i + 1]
  elseif hash[i] == 'ended' then ended = hash[i + 1]
  elseif hash[i] == 'lastResult' then copied = true end
end
-- A field of its own is read before `ended`, as everywhere (views.ts, reserve-resume.lua).
if not resultEvent and ended then resultEvent = unpack_ended(ended).resultEvent end
if not resultEvent or copied then return { hash, '' } end

local entry
if record and string.sub(record, 1, 1) == 'A' then
  local _, runId = past_key_of(KEYS[1])
  for _, e in ipairs(record_entries(record, runId)) do
    if e[1] == resultEvent then entry = e end
  end
else
  entry = redis.call('XRANGE', KEYS[2], resultEvent, resultEvent)[1]
end
if entry then
  for i = 1, #entry[2], 2 do
    if entry[2][i] == 'data' then return { hash, entry[2][i + 1] } end
  end
end
return { hash, '' }
