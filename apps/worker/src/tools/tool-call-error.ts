/** A tool call the host refuses or cannot complete; its message reaches the guest as an Error. */
export class ToolCallError extends Error {
  readonly code = 'tool_call_failed';
  constructor(message: string) {
    super(message);
    this.name = 'Error';
  }
}
