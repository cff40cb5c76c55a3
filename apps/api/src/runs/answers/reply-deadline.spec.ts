import { ReplyDeadline } from './reply-deadline';

/** A deadline whose handlers count their calls; the start budget is short. */
function deadline(): { deadline: ReplyDeadline; overdue: jest.Mock } {
  const overdue = jest.fn(() => Promise.resolve(null));
  const noAnswer = jest.fn(() => Promise.reject(new Error('not expected')));
  return { deadline: new ReplyDeadline(20, 20, 0, { onStartOverdue: overdue, onNoAnswer: noAnswer }), overdue };
}

describe('ReplyDeadline.drop (a leg never set going: its request created no run)', () => {
  it('stops listening and timing: no handler runs, its signal aborts, a late answer or failure settles nothing', async () => {
    const { deadline: d, overdue } = deadline();
    let settled = false;
    void d.outcome.then(
      () => (settled = true),
      () => (settled = true),
    );
    d.drop();
    expect(d.signal.aborted).toBe(true);
    d.resolve({ status: 'completed' } as never);
    d.reject(new Error('late'));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(overdue).not.toHaveBeenCalled();
    expect(settled).toBe(false);
  });
});
