--[[
  The run hash (K[3]) as one append reads and writes it: every field the append's checks and
  projections need is read by one HMGET (check_run_write, start-run), and what the projections,
  the history cap and the stored bytes change on it is written by one HSET and at most one HDEL
  once the event is in the log (write_run, called by append_event). A script appending several
  events reads again before each: what was read is forgotten when the event's writes are made;
  except in a batch of tool calls' events (hold_run), which reads once and writes once.

    read_run(K, runId): reads the fields into `run_read` and returns it (from the run's record
      once it is folded: run-record.lua): status and epoch (false when absent), claimToken, historyEvents and historyBytes (numbers), imageBytes (a number),
      call, toolCalled (a boolean), entries (the list of its log entries' ids, run-entries.lua).
    read_of(runId): `run_read` when it was read for this run since the last write, else nil.
    set_run(field, value), del_run(field): what the event changes on the run hash (a field set
      again keeps its last value).
    write_run(K): makes those changes (no field is both set and deleted by one event, or by one
      batch).
    pack_ended(K): at a run's terminal event, kept compact: stages the fields ended-run.lua packs
      as its one `ended` field instead (what is staged for them and what the hash holds), when
      they are in the shapes it packs.
    staged_hash(stored): the hash's fields and values as write_run would leave them, from
      `stored` (what HGETALL read of it): fold-run.lua writes them into the run's record instead,
      and drop_staged() forgets them.
    hold_run(on): while on (a batch of tool calls' events, append-events.lua), write_run waits:
      what was read stays known for the batch's next event (count_history keeps its counts
      current), and the changes of every event are made by the write_run after hold_run(false).
]]

--- @include "ended-run"

local RUN_READ_FIELDS = { 'status', 'epoch', 'claimToken', 'historyEvents', 'historyBytes', 'imageBytes', 'call',
  'toolCalled', 'entries' }

local run_read = nil
local run_sets, run_set_at, run_dels = {}, {}, {}
local run_held = false

local function read_run(K, runId)
  local v = run_fields(K[3], RUN_READ_FIELDS)
  run_read = { runId = runId, status = v[1], epoch = v[2], claimToken = v[3],
    historyEvents = tonumber(v[4] or '0'), historyBytes = tonumber(v[5] or '0'), imageBytes = tonumber(v[6] or '0'),
    call = v[7], toolCalled = v[8] and true or false, entries = v[9] }
  return run_read
end

local function read_of(runId)
  if run_read and run_read.runId == runId then return run_read end
  return nil
end

local function set_run(field, value)
  local at = run_set_at[field]
  if at then
    run_sets[at] = value
    return
  end
  run_sets[#run_sets + 1] = field
  run_sets[#run_sets + 1] = value
  run_set_at[field] = #run_sets
end

local function del_run(field)
  run_dels[#run_dels + 1] = field
end

local function write_run(K)
  if run_held then return end
  if #run_sets > 0 then redis.call('HSET', K[3], unpack(run_sets)) end
  if #run_dels > 0 then redis.call('HDEL', K[3], unpack(run_dels)) end
  run_sets, run_set_at, run_dels, run_read = {}, {}, {}, nil
end

local function pack_ended(K)
  local stored = redis.call('HMGET', K[3], unpack(ENDED_FIELDS))
  local v, dropped = {}, {}
  for i, field in ipairs(ENDED_FIELDS) do
    local at = run_set_at[field]
    if at then v[field] = run_sets[at] else v[field] = stored[i] or nil end
  end
  for _, field in ipairs(run_dels) do v[field] = nil end
  local packed, withOwner = packed_ended(v)
  if not packed then return end
  for i, field in ipairs(ENDED_FIELDS) do
    if field ~= 'owner' or withOwner then
      dropped[field] = true
      if stored[i] then del_run(field) end
    end
  end
  local sets, set_at = {}, {}
  for i = 1, #run_sets, 2 do
    if not dropped[run_sets[i]] then
      sets[#sets + 1] = run_sets[i]
      sets[#sets + 1] = run_sets[i + 1]
      set_at[run_sets[i]] = #sets
    end
  end
  run_sets, run_set_at = sets, set_at
  set_run('ended', packed)
end

local function staged_hash(stored)
  local deleted, fields = {}, {}
  for _, field in ipairs(run_dels) do deleted[field] = true end
  local at = {}
  for i = 1, #stored, 2 do
    local field = stored[i]
    if not deleted[field] then
      fields[#fields + 1] = field
      fields[#fields + 1] = stored[i + 1]
      at[field] = #fields
    end
  end
  for i = 1, #run_sets, 2 do
    local field = run_sets[i]
    if at[field] then
      fields[at[field]] = run_sets[i + 1]
    else
      fields[#fields + 1] = field
      fields[#fields + 1] = run_sets[i + 1]
      at[field] = #fields
    end
  end
  return fields
end

local function drop_staged()
  run_sets, run_set_at, run_dels, run_read = {}, {}, {}, nil
end

local function hold_run(on)
  run_held = on
end
