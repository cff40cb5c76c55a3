import { surfaceAnsweredBy } from '@codemode/catalog';
import type { ExternalSettlement } from '@codemode/sandbox';
import { CANCELED_MESSAGE, ToolCallError } from '../tool-call-error';
import type { KindCall, ResolvedTool, ToolKind } from './tool-kind';

/**
 * The calls only the platform answers (SPEC §15, §12): the surfaces the catalog's table says the
 * platform answers (`agents.run`), and in a run that parks, a client tool without endpoint. The
 * platform records the answer (POST …/tool-results → `tool.settled`); here the call waits for it:
 *
 * - in a run that parks, the sandbox's bridge holds it (`parksOnBridge`: the run may park on it,
 *   and `SandboxPool.settle` answers it); a call the policy did not simply allow is handed there
 *   once admitted;
 * - in an `awaitResults` run it stays in flight here until `settle` (from this worker's held-run
 *   jobs; the cell waits up to snapshotTtlSeconds, as for any host work).
 *
 * One per run: it keeps the run's awaited calls.
 */
export class PlatformAnsweredKind implements ToolKind {
  readonly answeredBy = 'platform';
  /** The awaited calls of an `awaitResults` run, by call id. */
  private readonly awaited = new Map<string, (outcome: ExternalSettlement) => void>();

  handles({ entry, run, catalog }: ResolvedTool): boolean {
    if (surfaceAnsweredBy(entry) === 'platform') return true;
    return !run.awaitResults && entry.source === 'client' && !catalog.clientTools.get(entry.toolName)?.endpoint;
  }

  parksOnBridge({ run }: ResolvedTool): boolean {
    return !run.awaitResults;
  }

  /** Before `tool.called` is written: the answer may come as soon as it is. */
  call({ run, call, signal, gate, handedOver }: KindCall): Promise<unknown> {
    if (run.awaitResults) return this.await(call.id, signal);
    // Approved: from here on only the platform answers it, as if it had been allowed.
    if (!handedOver) gate?.handToPlatform();
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new ToolCallError(CANCELED_MESSAGE)), { once: true }));
  }

  withdraw(callId: string): void {
    this.awaited.delete(callId);
  }

  awaits(callId: string): boolean {
    return this.awaited.has(callId);
  }

  settle(callId: string, outcome: ExternalSettlement): boolean {
    const settle = this.awaited.get(callId);
    settle?.(outcome);
    return settle !== undefined;
  }

  private await(callId: string, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const cancel = (): void => {
        this.awaited.delete(callId);
        reject(new ToolCallError(CANCELED_MESSAGE));
      };
      signal.addEventListener('abort', cancel, { once: true });
      this.awaited.set(callId, (outcome) => {
        this.awaited.delete(callId);
        signal.removeEventListener('abort', cancel);
        if (outcome.ok) resolve(outcome.value);
        else reject(Object.assign(new Error(outcome.error.message), { name: outcome.error.name ?? 'Error' }));
      });
    });
  }
}
