/** SPEC §3: what a pending call of an expired, aborted or lost run rejects with. */
export const CANCELED_MESSAGE = 'Code Mode tool canceled, expired, or owner lost; start a new run.';

/** A tool call the host refuses or cannot complete; its message reaches the guest as an Error. */
export class ToolCallError extends Error {
  readonly code = 'tool_call_failed';
  constructor(message: string) {
    super(message);
    this.name = 'Error';
  }
}
