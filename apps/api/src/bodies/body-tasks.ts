import { parseJsonBytes, type ParsedJson } from '../http/json-bytes';
import { checkExecBody, type ExecBody } from '../runs/exec-body';
import { checkToolResults, type ToolResultsCheck } from '../runs/tool-results-body';
import { checkSessionSkillsPut, checkTenantSkillPut, type SessionSkillsCheck, type TenantSkillCheck } from '../skills/skills-body';
import { mergeAgentTools, type AgentMerge } from '../tools/agent-merge';
import { checkTenantToolPut, type TenantToolCheck } from '../tools/tenant-tools-body';
import { checkToolsPut, contextOnThread, toolsViewOfJson, type ThreadToolsViewContext, type ToolsPutCheck } from '../tools/tools-body';

/** A body that did not parse (or nests too deep): the route answers it as it answers any such body. */
export type Unreadable = Exclude<ParsedJson, { kind: 'json' }>;

/** Work whose cost grows with what a tenant sends, done on a body thread (SPEC §10 "Event loops"). */
export type BodyTask =
  | { kind: 'json'; bytes: Uint8Array }
  | { kind: 'exec'; bytes: Uint8Array }
  /** An exec body already parsed (an MCP `tools/call` of a large POST): its code is checked here. */
  | { kind: 'exec-value'; value: unknown }
  | { kind: 'tools'; bytes: Uint8Array; context: ThreadToolsViewContext }
  | { kind: 'tools-view'; bytes: Uint8Array; context: ThreadToolsViewContext }
  | { kind: 'exec-description'; bytes: Uint8Array; context: ThreadToolsViewContext }
  /** An agent key's checked tools merged onto the stored list (`stored`, null when none). */
  | { kind: 'tools-merge'; stored: Uint8Array | null; submitted: Uint8Array; context: ThreadToolsViewContext }
  | { kind: 'tool-results'; bytes: Uint8Array }
  | { kind: 'tenant-skill'; bytes: Uint8Array; name: string }
  | { kind: 'tenant-tool'; bytes: Uint8Array; name: string }
  | { kind: 'session-skills'; bytes: Uint8Array };

/**
 * What each task answers; only small or flat values (strings, bytes) cross back to the event loop.
 * A catalog view (as large as the registration) comes back serialized, as its JSON's bytes.
 */
export interface BodyTaskResults {
  json: ParsedJson;
  exec: Unreadable | ({ kind: 'checked' } & ExecBody);
  'exec-value': { kind: 'checked' } & ExecBody;
  tools: Unreadable | { kind: 'checked'; check: ToolsPutCheck<Uint8Array> };
  'tools-view': Uint8Array;
  'exec-description': string;
  'tools-merge': AgentMerge<Uint8Array>;
  'tool-results': Unreadable | { kind: 'checked'; check: ToolResultsCheck };
  'tenant-skill': Unreadable | { kind: 'checked'; check: TenantSkillCheck };
  'tenant-tool': Unreadable | { kind: 'checked'; check: TenantToolCheck };
  'session-skills': Unreadable | { kind: 'checked'; check: SessionSkillsCheck<Uint8Array> };
}

export function runBodyTask(task: BodyTask): BodyTaskResults[BodyTask['kind']] {
  switch (task.kind) {
    case 'json':
      return parseJsonBytes(task.bytes);
    case 'tools-view':
      return jsonBytes(toolsViewOfJson(Buffer.from(task.bytes).toString('utf8'), contextOnThread(task.context)));
    case 'exec-description':
      return toolsViewOfJson(Buffer.from(task.bytes).toString('utf8'), contextOnThread(task.context)).execDescription;
    case 'exec-value':
      return { kind: 'checked', ...checkExecBody(task.value) };
    case 'tools-merge': {
      const stored = task.stored === null ? null : Buffer.from(task.stored).toString('utf8');
      const merge = mergeAgentTools(stored, Buffer.from(task.submitted).toString('utf8'), contextOnThread(task.context));
      // Encoded here: the event loop hands the list to Redis, and the view to the client, as they are.
      return merge.ok ? { ...merge, toolsJson: Buffer.from(merge.toolsJson), view: jsonBytes(merge.view) } : merge;
    }
  }
  const body = parseJsonBytes(task.bytes);
  if (body.kind !== 'json') return body;
  switch (task.kind) {
    case 'exec':
      return { kind: 'checked', ...checkExecBody(body.value) };
    case 'tools': {
      const check = checkToolsPut(body.value, contextOnThread(task.context));
      // Encoded here: the event loop hands the bytes to Redis, and the view to the client, as they are.
      return {
        kind: 'checked',
        check: check.ok ? { ...check, toolsJson: Buffer.from(check.toolsJson), view: jsonBytes(check.view) } : check,
      };
    }
    case 'tool-results':
      return { kind: 'checked', check: checkToolResults(body.value) };
    case 'tenant-skill':
      return { kind: 'checked', check: checkTenantSkillPut(task.name, body.value) };
    case 'tenant-tool':
      return { kind: 'checked', check: checkTenantToolPut(task.name, body.value) };
    case 'session-skills': {
      const check = checkSessionSkillsPut(body.value);
      // Encoded here: the event loop hands the contents to Redis as they are.
      return { kind: 'checked', check: check.ok ? { ...check, contents: check.contents.map((content) => Buffer.from(content)) } : check };
    }
  }
}

function jsonBytes(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value));
}
