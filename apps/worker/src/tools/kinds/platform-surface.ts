import { surfaceAnsweredBy } from '@codemode/catalog';
import { ToolCallError } from '../tool-call-error';
import type { SurfaceHandler } from './surface-handlers';
import type { CalledDetail, KindCall, ResolvedTool, ToolKind } from './tool-kind';

/** SPEC §15's platform surfaces the worker answers (`nodes.*`, `skills.*`), each by its handler. */
export class PlatformSurfaceKind implements ToolKind {
  readonly answeredBy = 'worker';

  /** `handlers`: by dotted name, one per surface the catalog's table says the worker answers (`surfaceHandlers`). */
  constructor(private readonly handlers: Readonly<Record<string, SurfaceHandler>>) {}

  handles({ entry }: ResolvedTool): boolean {
    return surfaceAnsweredBy(entry) === 'worker';
  }

  called({ entry }: ResolvedTool, input: unknown): CalledDetail {
    return this.handlerOf(entry.toolName)?.called?.(input) ?? {};
  }

  async call({ entry, run, input, signal }: KindCall): Promise<unknown> {
    const handler = this.handlerOf(entry.toolName);
    if (!handler) throw new ToolCallError(`tool ${entry.callableName} has no implementation on this worker.`);
    return handler.answer({ ref: run.ref, input, signal });
  }

  private handlerOf(name: string): SurfaceHandler | undefined {
    return Object.hasOwn(this.handlers, name) ? this.handlers[name] : undefined;
  }
}
