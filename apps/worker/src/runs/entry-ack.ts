/**
 * The acknowledgement of the stream entry that brought a run's new cell (SPEC §13,
 * `CODEMODE_CELL_DISPATCH=stream`), the one owner of sending it. It rides with the run's first
 * recorded outcome (its end, or the park of its first leg): the writer calls `beside` in the same
 * tick as its own write, after it, so auto-pipelining sends both in one socket write and the end
 * lands first. Until a send is answered, a later write may carry it again. Once the entry's work
 * ended its reader `settle`s it: acknowledged already, or acknowledged then (retried), since an
 * entry left pending under a live consumer is never reclaimed.
 */
export class EntryAck {
  private state: 'unsent' | 'sending' | 'acknowledged' | 'settled' = 'unsent';
  private sending: Promise<void> = Promise.resolve();

  /** `send`: XACK + XDEL of the entry (CellStream.ack), one try. */
  constructor(private readonly send: () => Promise<void>) {}

  /** Sends the acknowledgement beside the caller's write, unless one was answered or is on its way. */
  beside(): void {
    if (this.state !== 'unsent') return;
    this.state = 'sending';
    this.sending = this.send().then(
      () => {
        this.state = 'acknowledged';
      },
      () => {
        // A lost reply: sent again beside the next write, or by the reader once the work ended.
        if (this.state === 'sending') this.state = 'unsent';
      },
    );
  }

  /**
   * The entry's work ended: once any send on its way is answered, `acknowledge` (the reader's,
   * with retries) runs unless a send beside a write was acknowledged. Nothing is sent after.
   */
  async settle(acknowledge: () => Promise<void>): Promise<void> {
    await this.sending;
    const acknowledged = this.state === 'acknowledged';
    this.state = 'settled';
    if (!acknowledged) await acknowledge();
  }
}
