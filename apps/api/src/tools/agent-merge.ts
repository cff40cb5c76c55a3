import type { ClientTool, RegisteredClientTool, ToolsView } from '@codemode/contracts';
import { mergeRegistration, OperatorToolLockedError, TooManyClientToolsError } from '@codemode/tools';
import { toolsView, type ToolsViewContext } from './tools-body';

/**
 * An agent key's registration merged onto the session's stored list (SPEC §11), or why the merge
 * rule refuses it. The stored list reaches 16 MiB (an operator's), so past a small size the merge
 * runs on a body thread (`Encoded` is `Uint8Array`): the event loop gets the merged list's names,
 * its JSON to store and the view to answer, as bytes, and never walks the lists themselves.
 */
export type AgentMerge<Encoded = never> =
  | { ok: false; refusal: 'operator_locked' | 'too_many'; error: string }
  | { ok: true; names: string[]; toolsJson: string | Encoded; view: ToolsView | Encoded };

/** `storedJson` as the ledger keeps it (null when none), `submittedJson` the agent's checked tools. */
export function mergeAgentTools(storedJson: string | null, submittedJson: string, context: ToolsViewContext): AgentMerge {
  const current = storedJson === null ? [] : (JSON.parse(storedJson) as RegisteredClientTool[]);
  let merged: RegisteredClientTool[];
  try {
    const tenantToolNames = new Set(context.tenantTools.tools.map((tool) => tool.name));
    merged = mergeRegistration(current, JSON.parse(submittedJson) as ClientTool[], 'agent', tenantToolNames);
  } catch (error) {
    // As data, not thrown: an error crossing from a body thread keeps its message only.
    if (error instanceof OperatorToolLockedError) return { ok: false, refusal: 'operator_locked', error: error.message };
    if (error instanceof TooManyClientToolsError) return { ok: false, refusal: 'too_many', error: error.message };
    throw error;
  }
  return { ok: true, names: merged.map((tool) => tool.name), toolsJson: JSON.stringify(merged), view: toolsView(merged, context) };
}
