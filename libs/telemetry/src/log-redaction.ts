/** What a redacted field's value becomes in the line. */
export const REDACTED = '[redacted]';

/** Field names that can carry secrets: censored at the top of a line's fields and one level down. */
const SECRET_FIELDS = ['authorization', 'apiKey', 'env', 'secret'] as const;
const SECRET_FIELD_SET: ReadonlySet<string> = new Set(SECRET_FIELDS);

/**
 * The fields of a log line (or a child logger's bindings) with every secret-named field censored:
 * a top-level `authorization`, `apiKey`, `env` or `secret`, and the same names inside any
 * top-level object (`{ headers: { authorization } }`). The same rule as pino's `redact` paths
 * `name` and `*.name`, which re-parsed those paths and cloned every top-level value on each line
 * (issue 41: ~12 KiB of garbage per request line); this copies only when something is censored
 * and returns `fields` itself otherwise.
 */
export function redactSecrets<T extends object>(fields: T): T {
  let copy: Record<string, unknown> | undefined;
  for (const key in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) continue;
    const value: unknown = fields[key];
    const redacted = SECRET_FIELD_SET.has(key) ? censored(value) : typeof value === 'object' && value !== null ? redactInner(value) : value;
    if (redacted === value) continue;
    copy ??= { ...fields } as Record<string, unknown>;
    copy[key] = redacted;
  }
  return (copy as T | undefined) ?? fields;
}

/** A value pino would print, censored; one it skips (undefined, a function) stays as it is. */
function censored(value: unknown): unknown {
  return value === undefined || typeof value === 'function' ? value : REDACTED;
}

/**
 * `value`, or a copy of it (same prototype, same own properties, so an Error keeps its message,
 * stack and cause for the `err` serializer) with its own secret-named fields censored. An
 * inherited one is never printed, so it needs nothing. An own accessor is copied as the value it
 * gives on `value`: on Node 24 an Error's `stack` is such an accessor, which reads the stack its
 * own receiver captured and gives a copy nothing.
 */
function redactInner(value: object): object {
  if (!holdsSecret(value)) return value;
  const properties: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(value);
  for (const [name, descriptor] of Object.entries(properties)) {
    if (descriptor.get)
      properties[name] = {
        value: Reflect.get(value, name) as unknown,
        enumerable: descriptor.enumerable,
        writable: true,
        configurable: true,
      };
  }
  for (const name of SECRET_FIELDS) {
    if (Object.prototype.hasOwnProperty.call(value, name))
      properties[name] = { value: REDACTED, enumerable: true, writable: true, configurable: true };
  }
  return Object.create(Object.getPrototypeOf(value) as object | null, properties) as object;
}

function holdsSecret(value: object): boolean {
  for (const name of SECRET_FIELDS) if (Object.prototype.hasOwnProperty.call(value, name)) return true;
  return false;
}

/**
 * pino's `hooks.logMethod`: an object interpolated into the message (`log.info('%j', fields)`) is
 * redacted like the line's own fields, as pino's redaction did for the message's arguments.
 */
export function redactMessageArguments<A extends unknown[]>(this: unknown, args: A, method: (...args: A) => void): void {
  // `log.info(fields, message, ...arguments)` or `log.info(message, ...arguments)`.
  for (let i = typeof args[0] === 'object' ? 2 : 1; i < args.length; i += 1) {
    const argument = args[i];
    if (typeof argument === 'object' && argument !== null) args[i] = redactSecrets(argument);
  }
  method.apply(this, args);
}
