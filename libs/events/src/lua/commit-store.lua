--[[
  Commit a completed cell's buffered store writes: one `store.committed` event and the store hash
  in the same step, fenced by the run's epoch. Capacity is re-checked here, in commit order: a
  concurrent cell may have filled the store since this cell read its snapshot. A run commits once
  (only its completion commits): a retry whose first attempt landed with its reply lost, or a
  rebuilt run completing again, finds `storeCommitted` on the run hash and writes nothing.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (the committing run),
      KEYS[4] transcript list, KEYS[5] runs index, KEYS[6] store hash

      ARGV[1] runId
      ARGV[2] writer's epoch
      ARGV[3] event data: JSON object text {runId, set, deleted} built by the caller (verbatim)
      ARGV[4] capacity: most bytes of value JSON the store may hold
      ARGV[5] n, then n (field, valueJson) pairs, then the deleted fields;
              a field is the store key as JSON string text; every field appears once

    Output:
      {1, eventId, totalBytes}  committed (or committed before: the first commit's eventId)
      {0, totalBytes, wouldBe}  declined: over capacity; nothing written
      {-1, ''}      run not found
      {-2, status}  run already ended
      {-3, epoch}   stale epoch (the run's epoch)

    Events:
      store.committed
]]
--- @include "includes/append"

local runId, epoch, data, capacity = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])

local refused = check_run_write(KEYS, runId, epoch)
if refused then return refused end
local before = redis.call('HGET', KEYS[3], 'storeCommitted')
if before then return { 1, before, redis.call('HGET', KEYS[2], 'storeBytes') or '0' } end

local n = tonumber(ARGV[5])
local sets, dels = {}, {}
-- Byte lengths of JSON text (Lua # counts bytes), so the total needs no decoding.
local delta = 0
local i = 6
for _ = 1, n do
  sets[#sets + 1] = { ARGV[i], ARGV[i + 1] }
  delta = delta + #ARGV[i + 1] - redis.call('HSTRLEN', KEYS[6], ARGV[i])
  i = i + 2
end
while i <= #ARGV do
  dels[#dels + 1] = ARGV[i]
  delta = delta - redis.call('HSTRLEN', KEYS[6], ARGV[i])
  i = i + 1
end

local total = tonumber(redis.call('HGET', KEYS[2], 'storeBytes') or '0')
-- A commit that only shrinks the store always goes through, so a full store can be emptied.
if delta > 0 and total + delta > capacity then return { 0, tostring(total), tostring(total + delta) } end

local id = append_event(KEYS, { type = 'store.committed', runId = runId, epoch = epoch, head = data, raws = {},
  facts = {}, store = { sets = sets, dels = dels, delta = delta } })
redis.call('HSET', KEYS[3], 'storeCommitted', id)
return { 1, id, tostring(total + delta) }
