--[[
  The ids of a run's own log entries, listed on its live hash (`entries`) so that its fold
  (fold-run.lua) reads exactly those entries by id. Without the list a fold reads the log from the
  run's request to its end; in a session with many runs at once most entries there are other
  runs' (64 cells in flight in one session put ~60 there), all read, and past FOLD_SCAN_MAX the
  fold gives up and the run's entries stay in the log.

    note_entry(K, ev, id): at each event of a run but its terminal one, stages (set_run) the list
      with `id` added; the terminal event stages its deletion (del_run): the fold reads the list
      from the hash as it was stored before.
    listed_ids(listed): the ids a stored list names, oldest first; nil when it names none to rely
      on: no list (a run requested by an earlier release), one that grew past ENTRIES_MAX_BYTES,
      or one it cannot read (left as it is by note_entry).

  The list: the request's id, then each later entry as `<ms>[-<seq>]`, its millisecond in base 36
  after the request's and its sequence in base 36 when not 0, separated by spaces. Once longer
  than ENTRIES_MAX_BYTES it is OVERFLOWED for good: a hash keeps Redis's small encoding only while
  each of its values is at most 64 bytes; such a run is read from the log as before.
]]
--- @include "settings"
--- @include "session-keys"
--- @include "run-hash"

local ENTRIES_MAX_BYTES = 64
local OVERFLOWED = '+'

local function note_entry(K, ev, id)
  if COMPACT_RUNS ~= 1 then return end
  if TERMINAL[ev.type] then
    del_run('entries')
    return
  end
  if ev.type == 'run.requested' then
    set_run('entries', id)
    return
  end
  local read = read_of(ev.runId)
  local listed
  if read then listed = read.entries else listed = redis.call('HGET', K[3], 'entries') end
  local firstMs = listed and tonumber(string.match(listed, '^(%d+)%-%d+'))
  if not firstMs then return end
  local ms, seq = string.match(id, '^(%d+)%-(%d+)$')
  seq = tonumber(seq)
  local value = listed .. ' ' .. base36(tonumber(ms) - firstMs) .. (seq == 0 and '' or '-' .. base36(seq))
  if #value > ENTRIES_MAX_BYTES then value = OVERFLOWED end
  set_run('entries', value)
  -- A batch's next event reads it here (hold_run).
  if read then read.entries = value end
end

local function listed_ids(listed)
  if not listed or listed == OVERFLOWED then return nil end
  local ids, firstMs = {}, nil
  for token in string.gmatch(listed, '%S+') do
    if not firstMs then
      firstMs = tonumber(string.match(token, '^(%d+)%-%d+$'))
      if not firstMs then return nil end
      ids[1] = token
    else
      local after, seq = string.match(token, '^(%w+)%-?(%w*)$')
      after, seq = tonumber(after or '', 36), seq == '' and 0 or tonumber(seq or '', 36)
      if not (after and seq) then return nil end
      ids[#ids + 1] = int(firstMs + after) .. '-' .. int(seq)
    end
  end
  if #ids == 0 then return nil end
  return ids
end
