import { InvalidKeyError } from './errors';
import { KeySpace } from './keys';

const hashTag = (key: string) => key.slice(key.indexOf('{') + 1, key.indexOf('}'));

describe('KeySpace', () => {
  const keys = new KeySpace();
  const ref = { tenant: 'acme_co-1', sessionId: 'a:b.c-d_e' };

  test('every session key shares the hash tag {tenant:sid}', () => {
    const all = [
      keys.events(ref),
      keys.session(ref),
      keys.run(ref, 'cm_1'),
      keys.transcript(ref),
      keys.runs(ref),
      keys.idempotency(ref, 'k}{x'),
      keys.store(ref),
      keys.clientTools(ref),
      keys.resultsIndex(ref),
      keys.resultsSizes(ref),
      keys.resultItem(ref, 'result_1'),
      // A task id is the client's to send (tasks/get): braces in it leave the session's tag first.
      keys.mcpTask(ref, 'cm_1:w1}{x'),
      keys.mcpTasks(ref),
      keys.mcpTaskWaits(ref),
      ...keys.scriptKeys(ref, 'cm_1'),
    ];
    expect(new Set(all.map(hashTag))).toEqual(new Set(['acme_co-1:a:b.c-d_e']));
    expect(keys.events(ref)).toBe('cm:{acme_co-1:a:b.c-d_e}:events');
    expect(keys.run(ref, 'cm_1')).toBe('cm:{acme_co-1:a:b.c-d_e}:run:cm_1');
    expect(keys.idempotency(ref, 'k')).toBe('cm:{acme_co-1:a:b.c-d_e}:idem:k');
    expect(new KeySpace('t-x').reply('api-1')).toBe('t-x:reply:api-1');
    expect(keys.store(ref)).toBe('cm:{acme_co-1:a:b.c-d_e}:store');
    expect(keys.clientTools(ref)).toBe('cm:{acme_co-1:a:b.c-d_e}:tools');
    expect(keys.resultItem(ref, 'result_1')).toBe('cm:{acme_co-1:a:b.c-d_e}:results:item:result_1');
  });

  test('tenant and sid cannot be confused: a tenant has no ":"', () => {
    // tenant "a" + sid "b:c" vs tenant "a:b" + sid "c" would collide; the second is refused.
    expect(keys.events({ tenant: 'a', sessionId: 'b:c' })).toBe('cm:{a:b:c}:events');
    expect(() => keys.events({ tenant: 'a:b', sessionId: 'c' })).toThrow(InvalidKeyError);
  });

  test('refuses ids and prefixes that would break the hash tag', () => {
    for (const sessionId of ['', 'a}b', 'a{b', 'a b', 'x'.repeat(129), 'a*']) {
      expect(() => keys.events({ tenant: 't', sessionId })).toThrow(InvalidKeyError);
    }
    for (const tenant of ['', 't.1', 't}', 'é']) expect(() => keys.events({ tenant, sessionId: 's' })).toThrow(InvalidKeyError);
    expect(() => new KeySpace('p{x}')).toThrow(InvalidKeyError);
    expect(keys.events({ tenant: 't', sessionId: 'x'.repeat(128) })).toContain('x'.repeat(128));
  });
});
