import type { RescueImage, RescueState } from '../engine/rescue-image';
import type { CellRunRequest } from '../engine/types';
import type { Leg, LiveRun } from './live-run';
import { MIN_RESCUED_LEG_MS, rescuable, rescueMessage } from './rescue-message';
import { MAX_UNACKED_BYTES, RescueTrail } from './rescue-trail';
import type { RunBridge } from './run-bridge';

const image = { vm: {}, run: {} } as unknown as RescueImage;

function state(received: number, extra: Partial<RescueState> = {}): RescueState {
  return { output: [], inbox: [], remainingMs: 5000, capturedAt: Date.now(), received, ...extra };
}

const settlement = (id: string, payload = 'null') => ({ id, ok: true, payload });

const request = { runId: 'r1', code: '1', limits: { timeoutMs: 30_000 } } as unknown as CellRunRequest;

function liveRun(trail: RescueTrail, starting = false): LiveRun {
  return { runId: 'r1', slot: 1, request, bridge: {} as RunBridge, rescue: trail, discarded: false, starting };
}

function leg(start: Leg['start'], extra: Partial<Leg> = {}): Leg {
  return {
    resolve: () => undefined,
    start,
    timeoutMs: 30_000,
    awaitResults: false,
    beforeHostCall: false,
    watchdog: undefined as never,
    ...extra,
  };
}

describe('RescueTrail', () => {
  it('keeps the settlements no image reflects, and drops those an image says arrived', () => {
    const trail = new RescueTrail();
    trail.posted(settlement('a'), true);
    trail.posted(settlement('b'), false);
    trail.posted(settlement('c'), true);
    expect(trail.kept().map((s) => s.id)).toEqual(['a', 'c']);
    trail.imaged(image, state(1));
    expect(trail.kept().map((s) => s.id)).toEqual(['c']);
    expect(trail.image()?.later.map((s) => s.id)).toEqual(['c']);
    expect(trail.current).toBe(true);
  });

  it('past the byte bound keeps nothing and is not current until an image reflects what it dropped', () => {
    const trail = new RescueTrail();
    trail.imaged(image, state(0));
    trail.posted(settlement('a', 'x'.repeat(MAX_UNACKED_BYTES)), true);
    expect(trail.current).toBe(true);
    trail.posted(settlement('b', 'xx'), true);
    expect(trail.kept()).toEqual([]);
    expect(trail.current).toBe(false);
    trail.imaged(image, state(1));
    expect(trail.current).toBe(false);
    trail.imaged(image, state(2));
    expect(trail.current).toBe(true);
  });

  it('a stale image no longer holds', () => {
    const trail = new RescueTrail();
    trail.imaged(image, state(0));
    trail.stale();
    expect(trail.current).toBe(false);
    expect(trail.image()).toBeUndefined();
  });
});

describe('rescuable and rescueMessage', () => {
  it('a new cell the thread never began starts again as it was sent', () => {
    const start = { type: 'run' as const, request, slot: 1 };
    const run = liveRun(new RescueTrail(), true);
    expect(rescuable(run, leg(start))).toBe(true);
    expect(rescueMessage({ run, leg: leg(start), begun: false })).toBe(start);
  });

  it('a resume never begun needs a current image and gets its whole budget', () => {
    const start = { type: 'resume' as const, runId: 'r1', timeoutMs: 30_000, awaitResults: false };
    const trail = new RescueTrail();
    const run = liveRun(trail, true);
    expect(rescuable(run, leg(start))).toBe(false);
    trail.imaged(image, state(0, { remainingMs: 0 }));
    expect(rescuable(run, leg(start))).toBe(true);
    const message = rescueMessage({ run, leg: leg(start), begun: false });
    expect(message.type).toBe('rescue');
    expect(message.request.limits.timeoutMs).toBe(30_000);
    expect(message.type === 'rescue' && message.plan.leg).toBeUndefined();
  });

  it('a begun leg goes on with what was left of its budget (at least MIN_RESCUED_LEG_MS), its output, and the settlements queued then and since', () => {
    const trail = new RescueTrail();
    trail.posted(settlement('a'), true);
    trail.imaged(image, state(1, { remainingMs: 1, inbox: [settlement('q')], output: [{ kind: 'log', text: 'hi' }] as never }));
    trail.posted(settlement('b'), true);
    const run = liveRun(trail);
    const message = rescueMessage({ run, leg: leg({ type: 'run', request, slot: 1 }), begun: true });
    if (message.type !== 'rescue') throw new Error(`expected a rescue, got ${message.type}`);
    expect(message.request.limits.timeoutMs).toBe(MIN_RESCUED_LEG_MS);
    expect(message.plan.answers.map((s) => s.id)).toEqual(['q', 'b']);
    expect(message.plan.leg?.output).toEqual([{ kind: 'log', text: 'hi' }]);
  });

  it('a restore never begun starts again with the settlements posted behind it', () => {
    const start = {
      type: 'restore' as const,
      request,
      slot: 1,
      image: new Uint8Array(),
      plan: { answers: [settlement('x')], redo: [], platform: [] },
    };
    const trail = new RescueTrail();
    trail.posted(settlement('y'), true);
    const message = rescueMessage({ run: liveRun(trail, true), leg: leg(start), begun: false });
    if (message.type !== 'restore') throw new Error(`expected a restore, got ${message.type}`);
    expect(message.plan.answers.map((s) => s.id)).toEqual(['x', 'y']);
  });
});
