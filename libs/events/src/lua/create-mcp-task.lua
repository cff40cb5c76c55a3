--[[
  Records an MCP task once (McpTaskStore.create, SPEC §14 Tasks): a task already recorded — an
  exec repeated with its Idempotency-Key names the first run's task, maybe at once, maybe after
  it settled — is kept as it is, its creation time, terms, answer and life untouched. One script,
  so that two creates of one task never both write, and a reader never sees half a task.

    Input:
      KEYS[1] the task's hash    <p>:{<tenant>:<sid>}:mcp-task:<taskId>
      KEYS[2] the session's index of task ids

      ARGV[1] task id
      ARGV[2] ms of its creation (its score in the index)
      ARGV[3] the task's life in ms
      ARGV[4] the index's life in ms
      ARGV[5..] the task's fields, as name, value pairs

    Output:
      1 recorded, 0 already recorded (nothing written)

    Events:
      none
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
