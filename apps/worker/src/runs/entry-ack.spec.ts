import { EntryAck } from './entry-ack';

/** A send whose tries are counted; `fails` of them reject (a lost reply). */
function counted(fails = 0): { send: () => Promise<void>; tries: () => number } {
  let tries = 0;
  return {
    send: () => {
      tries += 1;
      return tries <= fails ? Promise.reject(new Error('connection lost')) : Promise.resolve();
    },
    tries: () => tries,
  };
}

describe('EntryAck', () => {
  it('sent beside a write and answered: the reader does not acknowledge again', async () => {
    const send = counted();
    const ack = new EntryAck(send.send);
    ack.beside();
    const reader = jest.fn(() => Promise.resolve());
    await ack.settle(reader);
    expect(send.tries()).toBe(1);
    expect(reader).not.toHaveBeenCalled();
  });

  it('sent once while on its way or answered, however many writes it rides beside', async () => {
    const send = counted();
    const ack = new EntryAck(send.send);
    ack.beside();
    ack.beside();
    await ack.settle(() => Promise.resolve());
    ack.beside();
    expect(send.tries()).toBe(1);
  });

  it('a send whose reply failed is sent again beside the next write', async () => {
    const send = counted(1);
    const ack = new EntryAck(send.send);
    ack.beside();
    await Promise.resolve();
    await Promise.resolve();
    ack.beside();
    const reader = jest.fn(() => Promise.resolve());
    await ack.settle(reader);
    expect(send.tries()).toBe(2);
    expect(reader).not.toHaveBeenCalled();
  });

  it('the last send failed: the reader acknowledges once the work ended, after that send was answered', async () => {
    const send = counted(1);
    const ack = new EntryAck(send.send);
    ack.beside();
    const reader = jest.fn(() => Promise.resolve());
    await ack.settle(reader);
    expect(reader).toHaveBeenCalledTimes(1);
    expect(send.tries()).toBe(1);
  });

  it('never sent beside a write (the run was not started here): the reader acknowledges, and nothing is sent after', async () => {
    const send = counted();
    const ack = new EntryAck(send.send);
    const reader = jest.fn(() => Promise.resolve());
    await ack.settle(reader);
    ack.beside();
    expect(reader).toHaveBeenCalledTimes(1);
    expect(send.tries()).toBe(0);
  });
});
