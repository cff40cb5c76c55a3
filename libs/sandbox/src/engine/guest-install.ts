import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { CONSOLE_INSPECT_SOURCE } from '../guest/console-inspect';
import { DETERMINISM_SOURCE } from '../guest/determinism';
import { PRELUDE_FILE, PRELUDE_SOURCE } from '../guest/prelude';
import { TEXT_CODEC_SOURCE } from '../guest/text-codec';
import { clockFunction, HOST_FUNCTION_NAMES, hostFunctions, type SinkOwner } from './vm-host-functions';

/** The prelude's functions the host keeps, in this order (a restored VM re-wraps them in it). */
export const KEPT_PRELUDE_FUNCTIONS = ['settle', 'serialize', 'describe', 'unhandled', 'defineCatalog'] as const;

/**
 * Evaluates the guest sources in a fresh context (text codec, console formatting, prelude + tool
 * API) and hands the prelude its host functions as arguments, so they never appear on the global
 * object. With `preparedCatalogJson` (the deployment's GuestCatalog, `SandboxPoolOptions`), its
 * tool handles are prepared, nothing defined: a run whose catalog has the same globals takes them
 * (tool-api.guest.js). Returns the handles of `KEPT_PRELUDE_FUNCTIONS`, owned by the caller.
 */
export function installPrelude(ctx: QuickJSContext, owner: () => SinkOwner | undefined, preparedCatalogJson?: string): QuickJSHandle[] {
  ctx.unwrapResult(ctx.evalCode(TEXT_CODEC_SOURCE, 'codemode:text-codec.js')).dispose();
  const inspect = ctx.unwrapResult(ctx.evalCode(CONSOLE_INSPECT_SOURCE, 'codemode:console.js'));
  const install = ctx.unwrapResult(ctx.evalCode(PRELUDE_SOURCE, PRELUDE_FILE));
  // Registered in this order; a restored VM registers them again in the same order (same HostRef ids).
  const [out, request, cancel] = hostFunctions(ctx, owner).map((fn, index) => ctx.newFunction(HOST_FUNCTION_NAMES[index], fn));
  const api = ctx.unwrapResult(ctx.callFunction(install, ctx.undefined, out, request, cancel, inspect));
  for (const handle of [inspect, install, out, request, cancel]) handle.dispose();
  const kept = KEPT_PRELUDE_FUNCTIONS.map((name) => ctx.getProp(api, name));
  api.dispose();
  if (preparedCatalogJson !== undefined) {
    const json = ctx.newString(preparedCatalogJson);
    const defineCatalog = kept[KEPT_PRELUDE_FUNCTIONS.indexOf('defineCatalog')];
    ctx.unwrapResult(ctx.callFunction(defineCatalog, ctx.undefined, json, ctx.true)).dispose();
    json.dispose();
  }
  return kept;
}

/** SPEC §6: a restartSafe cell's `Math.random` becomes sfc32 from `seed`, and `Date` reads the host `clock`. */
export function installDeterminism(ctx: QuickJSContext, owner: () => SinkOwner | undefined, seed: number[]): void {
  const install = ctx.unwrapResult(ctx.evalCode(DETERMINISM_SOURCE, 'codemode:determinism.js'));
  // Registered after out/request/cancel; a restored parked VM registers it again fourth (same HostRef id).
  const clock = ctx.newFunction('clock', clockFunction(ctx, owner));
  const words = seed.map((word) => ctx.newNumber(word));
  ctx.unwrapResult(ctx.callFunction(install, ctx.undefined, clock, ...words)).dispose();
  for (const handle of [install, clock, ...words]) handle.dispose();
}
