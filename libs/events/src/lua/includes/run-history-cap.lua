--[[
  Run history cap (SPEC §6). The run hash counts the run's events (`historyEvents`) and bytes of
  event data (`historyBytes`), and keeps the stream ms of its last event (`lastEventMs`). A write
  that passed check_run_write and is not terminal is refused when it would take the run past
  RUN_HISTORY_MAX_EVENTS or RUN_HISTORY_MAX_BYTES: append_event raises the error reply
  `RUN_HISTORY_LIMIT <runId> <events> <bytes>` (lua-errors.ts: RunHistoryLimitError) before it
  writes anything, so a script must write nothing between check_run_write and append_event.
  Terminal events always pass, so the run can then be failed. Lifecycle scripts that do not call
  check_run_write (request, start, resume, take-over, release) are not held to the cap: they
  write before appending, and their events are few and small; the run's next tool, output, park
  or store write is refused instead.

    capped_run: the run whose write check_run_write let through.
    check_history(K, ev, bytes): raises RUN_HISTORY_LIMIT when the event would pass the cap.
    count_history(K, ev, bytes, ms): counts the appended event on the run hash (set_run: as
      absolute values when the append read the counts, run-hash.lua); a terminal one drops the
      counts (nothing is appended to an ended run).
]]
--- @include "settings"
--- @include "session-keys"
--- @include "run-hash"

-- The run whose write check_run_write let through: append_event holds it to the history cap.
local capped_run = nil

-- Raises RUN_HISTORY_LIMIT when this write would take its run past the cap.
local function check_history(K, ev, bytes)
  if capped_run ~= ev.runId or TERMINAL[ev.type] then return end
  local read = read_of(ev.runId)
  local events, used = read.historyEvents, read.historyBytes
  if events + 1 > RUN_HISTORY_MAX_EVENTS or used + bytes > RUN_HISTORY_MAX_BYTES then
    error({ err = 'RUN_HISTORY_LIMIT ' .. ev.runId .. ' ' .. int(events) .. ' ' .. int(used) })
  end
end

local function count_history(K, ev, bytes, ms)
  -- An ended run takes no more events: its counts go with its terminal one.
  if TERMINAL[ev.type] then
    del_run('historyEvents')
    del_run('historyBytes')
    del_run('lastEventMs')
    return
  end
  local read = read_of(ev.runId)
  if read or ev.type == 'run.requested' then
    local events, used = 0, 0
    if read then events, used = read.historyEvents, read.historyBytes end
    set_run('historyEvents', int(events + 1))
    set_run('historyBytes', int(used + bytes))
    -- A batch's next event reads them here (hold_run).
    if read then read.historyEvents, read.historyBytes = events + 1, used + bytes end
  else
    redis.call('HINCRBY', K[3], 'historyEvents', 1)
    redis.call('HINCRBY', K[3], 'historyBytes', bytes)
  end
  set_run('lastEventMs', int(ms))
end
