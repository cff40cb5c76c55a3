import { join } from 'node:path';
import { ScriptLoader } from '@codemode/events';

/** Every script of this library; the file is `lua/<name>.lua`. */
export const STORE_SCRIPT_NAMES = ['save-result', 'delete-result'] as const;
export type StoreScriptName = (typeof STORE_SCRIPT_NAMES)[number];

let shared: ScriptLoader<StoreScriptName> | undefined;

/** One loader per process for this library's `lua/` (the events loader class, another directory). */
export function storeScripts(): ScriptLoader<StoreScriptName> {
  return (shared ??= new ScriptLoader(join(__dirname, 'lua'), STORE_SCRIPT_NAMES));
}
