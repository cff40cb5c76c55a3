/** Thrown at boot when an environment variable is malformed; names the variable. */
export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}
