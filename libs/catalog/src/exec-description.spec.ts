import { buildCatalog } from './catalog';
import { buildExecDescription, execBudgetSentence, SHELL_FOR_HEAVY_WORK_SENTENCE } from './exec-description';
import { QUICK_INDEX_HEADING } from './quick-index';
import { client, coreTool, fixtureCatalog } from './testing/fixtures';

describe('buildExecDescription: budget and shell guidance (SPEC §5)', () => {
  it('states the session budget in the SPEC sentence, before the quick index', () => {
    const text = buildExecDescription(fixtureCatalog().entries, { timeoutMs: 2500 });
    expect(execBudgetSentence(2500)).toBe('Each exec or wait call has a 2500 ms wall-clock budget.');
    expect(text).toContain('Each exec or wait call has a 2500 ms wall-clock budget.');
    expect(text.indexOf(execBudgetSentence(2500))).toBeLessThan(text.indexOf(QUICK_INDEX_HEADING));
  });

  it('defaults the budget to 10000 ms', () => {
    expect(buildExecDescription(fixtureCatalog().entries)).toContain('Each exec or wait call has a 10000 ms wall-clock budget.');
  });

  it('points heavier computation at the shell tool while it is callable as exec', () => {
    expect(SHELL_FOR_HEAVY_WORK_SENTENCE).toBe('Use the shell tool exec for heavier computation.');
    const text = buildExecDescription(fixtureCatalog().entries);
    expect(text).toContain(SHELL_FOR_HEAVY_WORK_SENTENCE);
    expect(text.indexOf(SHELL_FOR_HEAVY_WORK_SENTENCE)).toBeLessThan(text.indexOf(QUICK_INDEX_HEADING));
  });

  it('says nothing of the shell tool when a client tool shadows exec or there is no shell tool', () => {
    const shadowed = buildCatalog([coreTool('exec'), client('exec')]).entries;
    expect(shadowed.find((entry) => entry.source === 'openclaw')?.callableName).not.toBe('exec');
    expect(buildExecDescription(shadowed)).not.toContain(SHELL_FOR_HEAVY_WORK_SENTENCE);
    expect(buildExecDescription(buildCatalog([client('x')]).entries)).not.toContain(SHELL_FOR_HEAVY_WORK_SENTENCE);
  });
});
