import { BODY_NOT_OBJECT_ERROR, RUN_ID_ERROR } from './messages';
import { checkWaitInput } from './wait-input';

const RUN_ID = 'cm_123e4567-e89b-42d3-a456-426614174000';

describe('checkWaitInput', () => {
  it('spells the error exactly as SPEC §3 does', () => {
    expect(RUN_ID_ERROR).toBe('runId must be a non-empty string.');
  });

  it.each<[string, Record<string, unknown>]>([
    ['runId', { runId: RUN_ID }],
    ['run_id', { run_id: RUN_ID }],
    ['runId over run_id', { runId: RUN_ID, run_id: 'cm_other' }],
    ['run_id when runId is null', { runId: null, run_id: RUN_ID }],
    ['a padded runId, trimmed', { runId: `  ${RUN_ID}\n` }],
  ])('accepts %s', (_name, body) => {
    expect(checkWaitInput(body)).toEqual({ ok: true, runId: RUN_ID });
  });

  it.each<[string, unknown, string]>([
    ['null body', null, BODY_NOT_OBJECT_ERROR],
    ['array body', [RUN_ID], BODY_NOT_OBJECT_ERROR],
    ['string body', RUN_ID, BODY_NOT_OBJECT_ERROR],
    ['no runId', {}, RUN_ID_ERROR],
    ['empty runId', { runId: '' }, RUN_ID_ERROR],
    ['blank runId', { runId: '  ' }, RUN_ID_ERROR],
    ['number runId', { runId: 7 }, RUN_ID_ERROR],
    ['a non-string runId hides run_id', { runId: 7, run_id: RUN_ID }, RUN_ID_ERROR],
    ['blank run_id', { run_id: '\t' }, RUN_ID_ERROR],
    ['object run_id', { run_id: { id: RUN_ID } }, RUN_ID_ERROR],
  ])('refuses %s', (_name, body, error) => {
    expect(checkWaitInput(body)).toEqual({ ok: false, error });
  });
});
