/** Thrown when the command line is wrong (unknown command or flag, missing argument): exit 2 with the usage. */
export class UsageError extends Error {
  readonly code = 'usage';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Thrown when a local input of the CLI (a cell file, a tools file) cannot be read or parsed: exit 1. */
export class CliInputError extends Error {
  readonly code = 'invalid_cli_input';
  constructor(message: string) {
    super(message);
    this.name = 'CliInputError';
  }
}
