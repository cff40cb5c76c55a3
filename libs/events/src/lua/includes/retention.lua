--[[
  Retention. A terminal event gives the run hash a TTL of RETENTION_MS. The session's log is
  trimmed on any event at most once per min(60 s, RETENTION_MS) (`trimmedAt` in the session
  hash): stream entries older than RETENTION_MS go (XTRIM MINID;
  stream ids carry the millisecond of the event's `at`), runs index entries with them, and
  the transcript's marks of the events cut (and entries of earlier releases older than the
  oldest event left). Never past a live run: the trim point stops at the request time of the
  oldest run that has not ended, because a replay-safe run is rebuilt from its whole log, and a
  run may live far longer than RETENTION_MS (each park gives it up to snapshotTtlSeconds again,
  so no fixed age is safe). A run with no event for
  LIVE_RUN_MAX_IDLE_MS (longer than any park may last) is dead, ended or not, and holds nothing
  back. Session-level facts (store, tools, configuration) keep their projections; only their old
  events go, so a rebuild from a trimmed log sees the recent part only. Every key touched,
  including other runs' hashes read while trimming, lives in the session's hash-tag slot.

  Finished runs folded into records (run-record.lua) go with their runs index entries: the record
  of a run requested before the point goes too, unless the run ended at or after it (a run the
  point falls in, whose later events the log keeps, and whose view is kept RETENTION_MS after its
  end): that record moves to `<base>:past-cut`
  (runId → its request's ms), where the feed still finds it and reads only its events from the
  point on (`trimmedTo` in the session hash), until a later trim passes its end. `pastEvents`
  goes down by the events that leave.

    trim_session(K, nowMs): trims the session's log, runs index and transcript now, giving back
      their stored bytes (count_stored: the caller flushes them).
    maybe_trim(K, nowMs): trims at most once per TRIM_EVERY_MS, and looks at most once per script call.
]]
--- @include "settings"
--- @include "session-keys"
--- @include "now-iso"
--- @include "stored-bytes"
--- @include "run-record"

-- Bounded work per trim: runs index entries looked at, transcript elements popped.
local TRIM_BATCH = 100
local TRANSCRIPT_POP_MAX = 1000
local TRIM_EVERY_MS = math.min(60000, RETENTION_MS)

-- The stream id from which the log may be trimmed: `cutoff`, or the request time of the oldest
-- live run if that is earlier. Runs index entries before the returned point are all of runs that
-- ended, vanished (their hash expired) or died, and may go.
local function trim_point(K, runKeyBase, cutoff, nowMs)
  local entries = redis.call('ZRANGE', K[5], '-inf', '(' .. int(cutoff), 'BYSCORE', 'LIMIT', 0, TRIM_BATCH, 'WITHSCORES')
  for i = 1, #entries, 2 do
    local st = redis.call('HMGET', runKeyBase .. entries[i], 'status', 'lastEventMs')
    local idle = st[2] and nowMs - tonumber(st[2]) > LIVE_RUN_MAX_IDLE_MS
    if st[1] and not ENDED[st[1]] and not idle then return tonumber(entries[i + 1]) end
  end
  -- A full batch: runs after it are unseen, so stop at the last one seen.
  if #entries == 2 * TRIM_BATCH then return tonumber(entries[#entries]) end
  return cutoff
end

-- The `at` of the oldest event left (an entry kept compact has it in its id), false when none is left.
local function oldest_at(K)
  local oldest = redis.call('XRANGE', K[1], '-', '+', 'COUNT', 1)[1]
  if not oldest then return false end
  for i = 1, #oldest[2], 2 do
    if oldest[2][i] == 'at' then return oldest[2][i + 1] end
  end
  return ms_iso(tonumber(string.match(oldest[1], '^(%d+)')))
end

-- Transcript elements are in log order (transcript.lua). A mark goes with the event it names: when
-- its id's millisecond is before `point`, where the stream was cut. An earlier release's entry
-- goes when older than the oldest event left, or than `point` (ms) when no event is left; it
-- starts {"kind":..,"call":..,"runId":..,"at":"<iso>", so its first "at" is its own.
local function trim_transcript(K, point)
  local keep
  for _ = 1, TRANSCRIPT_POP_MAX do
    local element = redis.call('LINDEX', K[4], 0)
    if not element then return end
    if string.sub(element, 1, 1) == '{' then
      local at = string.match(element, '"at":"([^"]*)"')
      if keep == nil then keep = oldest_at(K) end
      if not at then return end
      if keep then
        if at >= keep then return end
      elseif iso_ms(at) >= point then
        return
      end
    elseif tonumber(string.match(element, '^..(%d+)')) >= point then
      return
    end
    redis.call('LPOP', K[4])
    count_stored(-(#element + LIST_OVERHEAD))
  end
end

-- The records of runs requested before `point` go, or move to the cut ones when the run ended at
-- or after it; cut ones whose run ended before it go. `pastEvents` goes down by their events that
-- leave the log: before the point, or all once the record goes (the end's entry a fold kept in
-- the stream, `foldedEnd`, counts in the stream, which the trim cuts).
local function trim_records(K, point)
  local base = session_base(K)
  local past, cut = base .. ':past', base .. ':past-cut'
  if redis.call('EXISTS', past) == 0 then return end
  local state = redis.call('HMGET', K[2], 'trimmedTo', 'foldedEnd')
  local before = tonumber(state[1] or '0')
  -- The point never moves back (a trim by Redis's clock after it stepped back, measure-session.lua):
  -- what was cut stays cut, and counted once.
  if point <= before then return end
  local kept = string.match(state[2] or '', '^(%S+) ')
  local gone, left = {}, 0
  local function counted(record, runId, from, to)
    local n = 0
    for _, entry in ipairs(record_entries(record, runId)) do
      local ms = tonumber(string.match(entry[1], '^(%d+)'))
      if ms >= from and ms < to and entry[1] ~= kept then n = n + 1 end
    end
    return n
  end
  for _, runId in ipairs(redis.call('ZRANGE', cut, 0, -1)) do
    local record = redis.call('HGET', past, past_field(runId))
    if not record then
      redis.call('ZREM', cut, runId)
    elseif record_end_ms(record) < point then
      gone[#gone + 1] = past_field(runId)
      left = left + counted(record, runId, before, math.huge)
      redis.call('ZREM', cut, runId)
    else
      left = left + counted(record, runId, before, point)
    end
  end
  local runs = redis.call('ZRANGE', K[5], '-inf', '(' .. int(point), 'BYSCORE', 'WITHSCORES')
  for i = 1, #runs, 2 do
    local record = redis.call('HGET', past, past_field(runs[i]))
    if record then
      if record_end_ms(record) >= point then
        redis.call('ZADD', cut, runs[i + 1], runs[i])
        left = left + counted(record, runs[i], 0, point)
      else
        gone[#gone + 1] = past_field(runs[i])
        left = left + counted(record, runs[i], 0, math.huge)
      end
    end
  end
  for i = 1, #gone, 500 do redis.call('HDEL', past, unpack(gone, i, math.min(i + 499, #gone))) end
  if left > 0 then redis.call('HINCRBY', K[2], 'pastEvents', -left) end
  redis.call('HSET', K[2], 'trimmedTo', int(point))
  if kept and tonumber(string.match(kept, '^(%d+)')) < point then redis.call('HDEL', K[2], 'foldedEnd') end
  if redis.call('EXISTS', cut) == 1 then redis.call('PEXPIRE', cut, redis.call('PTTL', K[2])) end
end

-- Trims the session's log, runs index and transcript now.
local function trim_session(K, nowMs)
  redis.call('HSET', K[2], 'trimmedAt', int(nowMs))
  local runKeyBase = session_base(K) .. ':run:'
  local point = trim_point(K, runKeyBase, nowMs - RETENTION_MS, nowMs)
  trim_records(K, point)
  redis.call('ZREMRANGEBYSCORE', K[5], '-inf', '(' .. int(point))
  -- Exact, not `~`: whole stream nodes below the point are dropped without reading their entries,
  -- so the cost is one step per node plus the one node the point falls in, and the cut lies
  -- exactly between two milliseconds, where the transcript is cut too.
  redis.call('XTRIM', K[1], 'MINID', int(point))
  give_back_log(K, point)
  trim_transcript(K, point)
end

-- At most once per TRIM_EVERY_MS, terminal events included: a trim at every run's end was most of
-- what an exec's end cost Redis beyond its append, and retention is kept within TRIM_EVERY_MS anyway.
local trim_looked = false

local function maybe_trim(K, nowMs)
  -- Once per script call: its appends share one instant (now_iso), so a second look would decide the same.
  if trim_looked then return end
  trim_looked = true
  local last = redis.call('HGET', K[2], 'trimmedAt')
  if last and nowMs - tonumber(last) < TRIM_EVERY_MS then return end
  trim_session(K, nowMs)
end
