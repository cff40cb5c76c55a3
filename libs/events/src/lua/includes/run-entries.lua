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
      on: no list (a run requested by an earlier release), one OVERFLOWED, or one not as this file
      writes it (note_entry leaves a list whose first id it cannot read as it is).

  The list: the request's id, then each later entry as `<ms>[-<seq>]`, its millisecond in base 36
  after the request's and its sequence in base 36 when not 0 (id_offset, ended-run.lua), separated
  by spaces. It becomes OVERFLOWED for good once longer than ENTRIES_MAX_BYTES (a hash keeps Redis's small encoding only
  while each of its values is at most 64 bytes; such a run is read from the log as before) or once
  the run has lived past SPAN_MS (its record cannot hold its entries then: they stay in the log,
  run-record.lua).
]]
--- @include "settings"
--- @include "session-keys"
--- @include "run-hash"
--- @include "run-record"

local ENTRIES_MAX_BYTES = 64
local OVERFLOWED = '+'
-- Digits a token's parts may have: a millisecond since 1970 has 13 (15 leaves room), and an offset
-- or a sequence in base 36 at most 8 (36^8 ms is ~89 years).
local MS_DIGITS, BASE36_DIGITS_MAX = 15, 8

local function note_entry(K, ev, id)
  if TERMINAL[ev.type] then
    del_run('entries')
    return
  end
  if COMPACT_RUNS ~= 1 then return end
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
  ms, seq = tonumber(ms) - firstMs, tonumber(seq)
  local value = OVERFLOWED
  if ms >= 0 and ms <= SPAN_MS then
    value = listed .. ' ' .. id_offset(ms, seq)
    if #value > ENTRIES_MAX_BYTES then value = OVERFLOWED end
  end
  set_run('entries', value)
  -- A batch's next event reads it here (hold_run).
  if read then read.entries = value end
end

-- Each id after the one before it: a list out of order is not one this file wrote.
local function listed_ids(listed)
  if not listed or listed == OVERFLOWED then return nil end
  local ids, firstMs, lastMs, lastSeq = {}, nil, -1, -1
  for token in string.gmatch(listed, '%S+') do
    local ms, seq
    if not firstMs then
      ms, seq = string.match(token, '^(%d+)%-(%d+)$')
      if not ms or #ms > MS_DIGITS or #seq > MS_DIGITS then return nil end
      ms, seq = tonumber(ms), tonumber(seq)
      firstMs = ms
    else
      local after, s = string.match(token, '^(%w+)%-?(%w*)$')
      if not after or #after > BASE36_DIGITS_MAX or #s > BASE36_DIGITS_MAX then return nil end
      ms, seq = tonumber(after, 36), s == '' and 0 or tonumber(s, 36)
      if not (ms and seq) then return nil end
      ms = firstMs + ms
    end
    if ms < lastMs or (ms == lastMs and seq <= lastSeq) then return nil end
    lastMs, lastSeq = ms, seq
    ids[#ids + 1] = int(ms) .. '-' .. int(seq)
  end
  if #ids == 0 then return nil end
  return ids
end
