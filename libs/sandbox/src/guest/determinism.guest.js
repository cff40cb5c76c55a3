/**
 * Guest source for restartSafe cells (SPEC §6: replay sees the clock and random values the run
 * recorded): an expression evaluating to `install(clock, a, b, c, d)`, which replaces `Date` by a
 * constructor reading the host's recorded clock for "now" (`Date.now()`, `new Date()`, `Date()`)
 * and `Math.random` by sfc32 seeded with the four recorded words. Everything else about `Date`
 * (parsing, explicit times, the prototype) is the engine's own.
 */
(function () {
  'use strict';
  return function install(clock, a, b, c, d) {
    const RealDate = Date;
    const construct = Reflect.construct;
    const defineProperty = Object.defineProperty;
    const toText = Function.prototype.call.bind(RealDate.prototype.toString);
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- seven parameters: Date.length is 7, as the engine's Date
    const Clocked = function Date(year, month, day, hours, minutes, seconds, ms) {
      if (new.target === undefined) return toText(construct(RealDate, [clock()]));
      const args = arguments.length === 0 ? [clock()] : Array.prototype.slice.call(arguments);
      return construct(RealDate, args, new.target);
    };
    defineProperty(Clocked, 'prototype', { value: RealDate.prototype, writable: false, enumerable: false, configurable: false });
    defineProperty(RealDate.prototype, 'constructor', { value: Clocked, writable: true, enumerable: false, configurable: true });
    const method = (value) => ({ value, writable: true, enumerable: false, configurable: true });
    defineProperty(
      Clocked,
      'now',
      method(function now() {
        return clock();
      }),
    );
    defineProperty(Clocked, 'parse', method(RealDate.parse));
    defineProperty(Clocked, 'UTC', method(RealDate.UTC));
    defineProperty(globalThis, 'Date', method(Clocked));

    let s0 = a | 0,
      s1 = b | 0,
      s2 = c | 0,
      s3 = d | 0;
    defineProperty(
      Math,
      'random',
      method(function random() {
        const t = (((s0 + s1) | 0) + s3) | 0;
        s3 = (s3 + 1) | 0;
        s0 = s1 ^ (s1 >>> 9);
        s1 = (s2 + (s2 << 3)) | 0;
        s2 = (s2 << 21) | (s2 >>> 11);
        s2 = (s2 + t) | 0;
        return (t >>> 0) / 4294967296;
      }),
    );
  };
})();
