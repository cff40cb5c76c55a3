--[[
  Stored bytes (SPEC §10 "Redis storage"). The session hash keeps `storedBytes`: what the
  session's keys hold, counted as they are written and freed, in the same step. A stream entry
  counts its field values plus ENTRY_OVERHEAD (RUN_OVERHEAD more for `run.requested`, for the
  run hash and its runs index entry; the hash expires about when the entry is trimmed); a
  transcript mark (transcript.lua) its length plus LIST_OVERHEAD; the store its value bytes
  (`storeBytes`'s delta); the client tools their JSON; the skills the bytes their registration
  names (`skillsBytes`); a parked run's image (`<p>:{t:sid}:image:<runId>`, written by the worker
  before `run.parked`) its bytes at `run.parked`, kept on the run hash as `imageBytes` and given
  back by the run's terminal event. Trimming gives back what it removes without reading
  the entries it cuts: the log's bytes are also kept per bucket of BUCKET_MS (min(60 s,
  RETENTION_MS)) of their stream ids (`<p>:{t:sid}:stored-log`, hash bucket → bytes, and
  `<p>:{t:sid}:stored-minutes`, zset of those buckets), and a trim to a point gives back the
  buckets wholly before it; so the count is high by at most the session's log bytes of one bucket,
  until a later trim passes it (a new bucket refreshes the session's TTLs, once a bucket). A
  transcript element is given back as it is popped. Results (libs/store) keep their own sizes hash;
  `measure-session.lua` adds them. The tenant's total lives in its own slot (`tenant-stored-bytes.lua`).

    count_stored(delta): what a part of the append changed the count by; flush_stored(K) writes
      it once, at the end of the append (or of a trim made outside one).
    entry_bytes, count_log(K, id, bytes): a new stream entry, in its bucket.
    hold_log(), write_log(K): between the two (a batch of tool calls' events), count_log adds
      up the entries' bytes per bucket, and write_log counts each bucket once.
    give_back_log(K, point): the buckets wholly before a trim point.
    move_log_bytes(K, deltas): what a folded run's entries and record (fold-run.lua) change, by
      stream id → bytes, in the buckets the entries were counted in (a bucket grown anew is listed,
      as count_log lists it).
    count_image(K, ev): a parked run's image, from its park to the run's end (on the run hash
      through set_run and del_run).
]]
--- @include "settings"
--- @include "session-keys"
--- @include "session-expiry"
--- @include "run-hash"

-- Per stream entry and per transcript element beyond their values.
local ENTRY_OVERHEAD = 64
local LIST_OVERHEAD = 16
local IMAGE_OVERHEAD = 64
-- A run's hash (a few short fields once it ended, Redis's small encoding: ~0.2 KB, ~0.5 KB when
-- finished runs are not kept compact) and runs index entry, counted with its run.requested
-- entry: the hash expires RETENTION_MS after the run's end, about when retention trims that entry.
local RUN_OVERHEAD = COMPACT_RUNS == 1 and 288 or 512
-- Once the run is folded with its entries into its record (fold-run.lua), what is left beyond the
-- record's value: its field in the hash of past runs (~0.1 KB) and the runs index entry.
local FOLDED_RUN_OVERHEAD = 160
-- The log's stored bytes are kept per BUCKET_MS of stream ids; at most BUCKETS_PER_TRIM given back per trim.
local BUCKET_MS = math.min(60000, RETENTION_MS)
local BUCKETS_PER_TRIM = 1000

-- What one stream entry counts: the values it keeps (its type as entry-codes.lua keeps it).
local function entry_bytes(ev_type, stored_type, runId, at, data)
  local n = ENTRY_OVERHEAD + #stored_type + #runId + #at + #data
  if ev_type == 'run.requested' then n = n + RUN_OVERHEAD end
  return n
end

-- What this script changed the session's storedBytes by, written once by flush_stored.
local stored_delta = 0

local function count_stored(delta)
  stored_delta = stored_delta + delta
end

local function flush_stored(K)
  if stored_delta ~= 0 then redis.call('HINCRBY', K[2], 'storedBytes', stored_delta) end
  stored_delta = 0
end

-- A parked run's image counts from its park to the run's end.
local function count_image(K, ev)
  local read = read_of(ev.runId)
  local held = read and read.imageBytes or tonumber(redis.call('HGET', K[3], 'imageBytes') or '0')
  local now = 0
  if ev.type == 'run.parked' then
    local image = session_base(K) .. ':image:' .. ev.runId
    local size = redis.call('HSTRLEN', image, 'image') + redis.call('HSTRLEN', image, 'host')
    if size > 0 then now = size + IMAGE_OVERHEAD end
  end
  if now == held then return end
  if now > 0 then set_run('imageBytes', now) else del_run('imageBytes') end
  count_stored(now - held)
end

-- Stored bytes of the log are kept per BUCKET_MS of their entries' ids: the buckets wholly before
-- `point` (ms) are given back once the stream is cut there, at most BUCKETS_PER_TRIM per trim
-- (the next trim goes on).
local function give_back_log(K, point)
  local base = session_base(K)
  local minutes = redis.call('ZRANGE', base .. ':stored-minutes', '-inf', '(' .. int(math.floor(point / BUCKET_MS)),
    'BYSCORE', 'LIMIT', 0, BUCKETS_PER_TRIM)
  if #minutes == 0 then return end
  local freed = 0
  for _, minute in ipairs(minutes) do
    freed = freed + tonumber(redis.call('HGET', base .. ':stored-log', minute) or '0')
    redis.call('HDEL', base .. ':stored-log', minute)
  end
  redis.call('ZREM', base .. ':stored-minutes', unpack(minutes))
  count_stored(-freed)
end

-- A bucket's new bytes; a new bucket may have made the two keys: they need their TTL. A bucket is
-- new when its count is these bytes alone (an entry counts at least ENTRY_OVERHEAD, and a bucket
-- leaves both keys together, give_back_log): only then is it listed.
local function log_bucket(K, minute, bytes)
  local base = session_base(K)
  if redis.call('HINCRBY', base .. ':stored-log', minute, bytes) == bytes then
    redis.call('ZADD', base .. ':stored-minutes', 'NX', minute, minute)
    created_key = true
  end
end

-- While a batch holds its writes: its buckets in order, and their new bytes.
local held_minutes, held_bytes = nil, nil

local function count_log(K, id, bytes)
  local minute = int(math.floor(tonumber(string.match(id, '^(%d+)')) / BUCKET_MS))
  count_stored(bytes)
  if not held_minutes then
    log_bucket(K, minute, bytes)
    return
  end
  if not held_bytes[minute] then
    held_minutes[#held_minutes + 1] = minute
    held_bytes[minute] = 0
  end
  held_bytes[minute] = held_bytes[minute] + bytes
end


local function move_log_bytes(K, deltas)
  local buckets, total = {}, 0
  for id, bytes in pairs(deltas) do
    local minute = int(math.floor(tonumber(string.match(id, '^(%d+)')) / BUCKET_MS))
    buckets[minute] = (buckets[minute] or 0) + bytes
    total = total + bytes
  end
  for minute, bytes in pairs(buckets) do
    if bytes > 0 then log_bucket(K, minute, bytes)
    elseif bytes < 0 then redis.call('HINCRBY', session_base(K) .. ':stored-log', minute, bytes) end
  end
  count_stored(total)
end

local function hold_log()
  held_minutes, held_bytes = {}, {}
end

local function write_log(K)
  local minutes, bytes = held_minutes, held_bytes
  held_minutes, held_bytes = nil, nil
  for _, minute in ipairs(minutes) do log_bucket(K, minute, bytes[minute]) end
end
