import { join } from 'node:path';
import { ScriptLoader } from '@codemode/events';

/** Every script of this library; the file is `lua/<name>.lua`. */
export const FLEET_SCRIPT_NAMES = [
  'take-lease-slot',
  'renew-lease-slots',
  'admit-parked-run',
  'recount-parked-run',
  'admit-call',
  'connect-node',
  'beat-node',
  'drop-node',
] as const;
export type FleetScriptName = (typeof FLEET_SCRIPT_NAMES)[number];

let shared: ScriptLoader<FleetScriptName> | undefined;

/** One loader per process for this library's `lua/` (the events loader class, another directory). */
export function fleetScripts(): ScriptLoader<FleetScriptName> {
  return (shared ??= new ScriptLoader(join(__dirname, 'lua'), FLEET_SCRIPT_NAMES));
}
