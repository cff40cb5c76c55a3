--[[
  Reads one page of a session's events after a cursor, bounded by count and by bytes
  (EventLog.page): a reader holds at most one page of a log however large its events are
  (SPEC §10 "Event streams"). The events are the log's entries and those of the finished runs
  folded into records (includes/run-record.lua), merged by id: a folded run's events keep their
  ids and their order, so a cursor reads the same page before and after its run is folded. One
  call reads both, so a run folded meanwhile is read in one place or the other, never lost.

  Entries are taken one XRANGE at a time, so the script never holds more than the page plus the
  one entry that would overflow it. Records are found through the runs index: every event of a
  run has an id at or after its request, whose millisecond is the run's score, and a run whose
  events are in its record ended at most SPAN_MS after its request; so the runs requested from
  SPAN_MS before the cursor on are walked in score order, as far as the page needs: an event is
  taken only once every run requested up to its millisecond has been looked at.

    Input:
      KEYS[1] the session's event stream (KeySpace.events), KEYS[2] its runs index,
      KEYS[3] its finished runs' records (KeySpace.pastRuns), KEYS[4] those retention cut through
      (KeySpace.pastRunsCut, includes/retention.lua), KEYS[5] the session hash

      ARGV[1] cursor: events after this stream id (exclusive)
      ARGV[2] at most this many entries
      ARGV[3] at most this many bytes of field values; the first entry is taken whatever its size

    Output:
      {more, entries}: more is 1 when the log holds entries after the page, else 0; entries as
      XRANGE returns them, oldest first

    Events:
      none
]]
--- @include "includes/run-record"
--- @no-writes

local maxCount, maxBytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local RUNS_BATCH = 64
-- Past this a cursor's millisecond is no time any event has (and no longer an exact number here).
local MAX_MS = 9007199254740991 - SPAN_MS

-- {ms, seq} of a stream id, or of a cursor (`<ms>` is `<ms>-0`).
local function id_key(id)
  local ms, seq = string.match(id, '^(%d+)%-?(%d*)$')
  return tonumber(ms), tonumber(seq ~= '' and seq or '0')
end

local function before(ams, aseq, bms, bseq)
  return ams < bms or (ams == bms and aseq < bseq)
end

-- The next log entry after `after` as {ms, seq, entry}, or nil (the first read also checks the
-- cursor, as XRANGE does).
local function next_logged(after)
  local entry = redis.call('XRANGE', KEYS[1], '(' .. after, '+', 'COUNT', 1)[1]
  if not entry then return nil end
  local ms, seq = id_key(entry[1])
  return { ms, seq, entry }
end

local cursor = ARGV[1]
local cursorMs, cursorSeq = id_key(cursor)
local logged = next_logged(cursor)

-- Folded events after the cursor not taken yet, {ms, seq, entry}, newest first (the next on top).
local folded = {}
local function add_folded(record, runId, from)
  for _, entry in ipairs(record_entries(record, runId)) do
    local ms, seq = id_key(entry[1])
    if ms >= from and before(cursorMs, cursorSeq, ms, seq) then folded[#folded + 1] = { ms, seq, entry } end
  end
end
local function sort_folded()
  table.sort(folded, function(a, b) return before(b[1], b[2], a[1], a[2]) end)
end

-- The runs walked in score order: every run requested up to `done` (ms) was looked at.
local walk = nil
if redis.call('EXISTS', KEYS[3]) == 1 and cursorMs < MAX_MS then
  walk = { from = math.max(0, cursorMs - SPAN_MS), done = -1, offset = 0, ended = false }
  -- Runs retention cut through (requested before its point, ended after it): their events from
  -- the point on, as the log keeps them.
  local trimmedTo = tonumber(redis.call('HGET', KEYS[5], 'trimmedTo') or '0')
  for _, runId in ipairs(redis.call('ZRANGE', KEYS[4], int(walk.from), '+inf', 'BYSCORE')) do
    local record = redis.call('HGET', KEYS[3], past_field(runId))
    if record then add_folded(record, runId, trimmedTo) end
  end
  sort_folded()
end

-- Walks the next runs requested up to `upTo` (ms): their folded events after the cursor join
-- `folded`. A run that ended before the cursor has none.
local function walk_batch(upTo)
  local runs = redis.call('ZRANGE', KEYS[2], int(walk.from), upTo and int(upTo) or '+inf', 'BYSCORE', 'LIMIT', walk.offset,
    RUNS_BATCH, 'WITHSCORES')
  for i = 1, #runs, 2 do
    -- Read as the log is: until retention trims it, not hidden at its run's retention (record_of).
    local record = redis.call('HGET', KEYS[3], past_field(runs[i]))
    if record and record_end_ms(record) >= cursorMs then add_folded(record, runs[i], 0) end
  end
  walk.offset = walk.offset + #runs / 2
  if #runs < 2 * RUNS_BATCH then
    -- Every run up to `upTo` was looked at; the walk goes on from there when a later event needs it.
    if not upTo then walk.ended = true else walk.done, walk.from, walk.offset = upTo, upTo + 1, 0 end
  else
    -- Runs of the batch's last score may go on in the next batch: only the scores before it are done.
    walk.done = math.max(walk.done, tonumber(runs[#runs]) - 1)
  end
  sort_folded()
end

-- The first event not taken yet, from the log or a record, once no unwalked run can hold an
-- earlier one; and whether it came from a record.
local function peek()
  while walk and not walk.ended do
    local top, from_record = folded[#folded], true
    if logged and (not top or before(logged[1], logged[2], top[1], top[2])) then top, from_record = logged, false end
    if top and top[1] <= walk.done then return top, from_record end
    walk_batch(top and top[1])
  end
  local top = folded[#folded]
  if logged and (not top or before(logged[1], logged[2], top[1], top[2])) then return logged, false end
  return top, true
end

local entries, bytes = {}, 0
while true do
  local top, from_record = peek()
  if top == nil then return { 0, entries } end
  if #entries == maxCount then return { 1, entries } end
  local entry = top[3]
  local size = 0
  for _, value in ipairs(entry[2]) do size = size + #value end
  if #entries > 0 and bytes + size > maxBytes then return { 1, entries } end
  entries[#entries + 1] = entry
  bytes = bytes + size
  cursorMs, cursorSeq = top[1], top[2]
  -- A run's last entry stays in the log until the session's next fold (fold-run.lua) and is in its
  -- record too: taken once.
  if from_record then
    folded[#folded] = nil
    if logged and logged[3][1] == entry[1] then logged = next_logged(entry[1]) end
  else
    logged = next_logged(entry[1])
    local next_folded = folded[#folded]
    if next_folded and next_folded[3][1] == entry[1] then folded[#folded] = nil end
  end
end
