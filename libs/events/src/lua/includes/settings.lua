--[[
  The deployment's settings the append path is built with, compiled in: the loader
  (script-loader.ts, `eventsDefines`) turns each `--- @define NAME` line below into
  `local NAME = <value>` from the configuration, so a script built with other settings is
  another script (another SHA) and no script needs an ARGV slot for them.

    RETENTION_MS            how long the log keeps events (retention.lua)
    RUN_HISTORY_MAX_EVENTS  a run's events at most (run-history-cap.lua)
    RUN_HISTORY_MAX_BYTES   a run's bytes of event data at most (run-history-cap.lua)
    LIVE_RUN_MAX_IDLE_MS    a run with no event for this long is dead (retention.lua, session-expiry.lua)
    SESSION_TTL_MS          a session expires this long after its last write (session-expiry.lua)
    COMPACT_RUNS            1: a run's hash keeps createdAt, startedAt and endedAt in milliseconds
                            and no `restartSafe` when false, a finished run's hash no field a view
                            derives (projections.lua) and what only a view reads as one field
                            (ended-run.lua), a stream entry no `at` its id carries
                            (append.lua), its type as a code and the data every run repeats as
                            its variable parts (entry-codes.lua)
]]
--- @define RETENTION_MS
--- @define RUN_HISTORY_MAX_EVENTS
--- @define RUN_HISTORY_MAX_BYTES
--- @define LIVE_RUN_MAX_IDLE_MS
--- @define SESSION_TTL_MS
--- @define COMPACT_RUNS
