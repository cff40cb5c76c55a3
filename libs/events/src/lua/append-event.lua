--[[
  Append one event to a session's log through the shared append path, updating projections,
  and optionally publish a message once the event is in the log. A `run.parked` for a run that is
  already parked is the retry of one whose reply was lost (only a resume makes a parked run run
  again): it answers the first park's event id and writes nothing.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (run:'' for session events),
      KEYS[4] transcript list, KEYS[5] runs index

      ARGV[1] event type
      ARGV[2] runId ('' for session-level events)
      ARGV[3] writer's epoch (fenced against the run's epoch for run-scoped events)
      ARGV[4] data head: JSON object text without the raw fields
      ARGV[5] reply channel ('' for none)
      ARGV[6] reply message, published verbatim after the append
      ARGV[7] n, then n pairs (name, JSON) spliced into the data, then (name, value) fact pairs

    Output:
      {1, eventId}
      {-1, ''}      run not found
      {-2, status}  run already ended
      {-3, epoch}   stale epoch (the run's epoch)
      {-5, type}    type needs its dedicated script (run.requested, run.started, session.configured,
                    store.committed, tools.registered)

    Events:
      ARGV[1]
]]
--- @include "includes/append"

local raws, facts = read_raws_and_facts(7)
return append_generic(KEYS, { type = ARGV[1], runId = ARGV[2], epoch = tonumber(ARGV[3]), head = ARGV[4],
  raws = raws, facts = facts }, ARGV[5], ARGV[6])
