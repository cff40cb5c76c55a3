import { StoreCommandError, StoreFullError, StoreUnavailableError } from './errors';
import { caughtReplyError, isStoreFull, isStoreUnavailable, mayHaveRun, toStoreError } from './redis';

/** A server reply as ioredis raises it. */
function reply(message: string): Error {
  const error = new Error(message);
  error.name = 'ReplyError';
  return error;
}

/** A MULTI Redis discarded, with the errors its queued commands met (ioredis's `previousErrors`). */
function discarded(...previous: Error[]): Error {
  return Object.assign(reply('EXECABORT Transaction discarded because of previous errors.'), { previousErrors: previous });
}

const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

describe('toStoreError: the one mapping of Redis failures', () => {
  it.each([
    ['a write refused for memory', reply(OOM), StoreFullError],
    ['a script write refused for memory', reply(`${OOM} script: 5dda67, on @user_script:57.`), StoreFullError],
    ['a MULTI discarded because Redis is full', discarded(reply(OOM)), StoreFullError],
    ['a replica after a failover', reply("READONLY You can't write against a read only replica."), StoreUnavailableError],
    ['Redis loading its data', reply('LOADING Redis is loading the dataset in memory'), StoreUnavailableError],
    ['a busy script', reply('BUSY Redis is busy running a script.'), StoreUnavailableError],
    ['a cluster that is down', reply('CLUSTERDOWN The cluster is down'), StoreUnavailableError],
    ['a MULTI discarded on a replica', discarded(reply('READONLY no writes here')), StoreUnavailableError],
    ['a command timeout', new Error('Command timed out'), StoreUnavailableError],
    ['a lost connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), StoreUnavailableError],
    // ioredis's own plain Error for a batch its slot map, changed by a MOVED, puts on two nodes (a failover).
    [
      'a cluster slot map changing',
      new Error('All keys in the pipeline should belong to the same slots allocation group'),
      StoreUnavailableError,
    ],
    [
      'a command whose keys are in two slots (a bug)',
      new Error('All the keys in a pipeline command should belong to the same slot'),
      StoreCommandError,
    ],
    ['a wrong command (a bug)', reply('ERR wrong number of arguments'), StoreCommandError],
    ['a MULTI discarded for a bug', discarded(reply('ERR unknown command')), StoreCommandError],
  ])('%s', (_name, error, type) => {
    const mapped = toStoreError(error);
    expect(mapped).toBeInstanceOf(type);
    expect(isStoreUnavailable(error)).toBe(type !== StoreCommandError);
    expect(isStoreFull(error)).toBe(type === StoreFullError);
  });
});

describe('isStoreUnavailable and isStoreFull: typed errors and no failure', () => {
  it.each([
    ['nothing failed', undefined, false, false],
    ['a typed outage', new StoreUnavailableError(new Error('Command timed out')), true, false],
    ['a typed full Redis', new StoreFullError(reply(OOM)), true, true],
    ['a typed bug', new StoreCommandError(reply('ERR wrong number of arguments')), false, false],
    // A typed error is what it says, whatever its cause reads like.
    ['a bug typed around a timeout', new StoreCommandError(new Error('Command timed out')), false, false],
  ])('%s', (_name, error, unavailable, full) => {
    expect(isStoreUnavailable(error)).toBe(unavailable);
    expect(isStoreFull(error)).toBe(full);
  });
});

describe('mayHaveRun: whether a failed command may have reached Redis', () => {
  it.each([
    ['no connection to send it on', new Error("Stream isn't writeable and enableOfflineQueue options is false"), false],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }), false],
    ['a command timeout (its reply lost)', new Error('Command timed out'), true],
    ['a connection reset after the write', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), true],
    ['a script refused for memory at a later write', reply(`${OOM} script: 5dda67, on @user_script:466.`), true],
  ])('%s', (_name, error, may) => {
    expect(mayHaveRun(error)).toBe(may);
    // Also once mapped to the typed error callers see.
    expect(mayHaveRun(toStoreError(error))).toBe(may);
  });
});

describe('caughtReplyError: an error reply a script caught and handed back as text', () => {
  it.each([
    ['a write refused for memory inside the append', `${OOM} script: 5dda67, on @user_script:57.`, StoreFullError],
    ['a command a script got wrong (a bug)', 'WRONGTYPE Operation against a key holding the wrong kind of value', StoreCommandError],
  ])('%s', (_what, message, type) => {
    expect(caughtReplyError(message)).toBeInstanceOf(type);
  });
});
