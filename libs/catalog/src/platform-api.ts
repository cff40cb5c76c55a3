/**
 * The declaration files of SPEC §15's platform surfaces (`API.read`): `nodes.d.ts` and
 * `skills.d.ts` in every session, `agents.d.ts` where the session has `agents: true`.
 */
export const NODES_API_PATH = 'nodes.d.ts';
export const SKILLS_API_PATH = 'skills.d.ts';
export const AGENTS_API_PATH = 'agents.d.ts';

const NODES_API = `/** A paired node of this tenant, as nodes.list() reports it. */
type NodeInfo = {
  id: string;
  name: string;
  platform: string;
  connected: boolean;
  /** The commands the node advertises (e.g. "device.status", "fs.listDir"). */
  commands: string[];
};

/** A node resolved by nodes.get(idOrName). There is no exec on a node: shell commands stay with the shell tool (host: "node"). */
type NodeHandle = {
  id: string;
  name: string;
  /**
   * Invokes one of the node's commands; a nested tool call named nodes.invoke (policy, approvals,
   * events, telemetry, timeouts). Rejects with "node <name> is not connected." or
   * "node <name> does not advertise command <command>.".
   */
  invoke(command: string, params?: unknown): Promise<unknown>;
  /** Present when the node advertises fs.listDir: the entries under the node's root at path. */
  listDir?(path: string): Promise<unknown>;
};

/** Paired nodes of this tenant: processes (\`codemode node\`) connected to the service. */
declare const nodes: {
  list(): Promise<NodeInfo[]>;
  /** Resolves an exact id first, then a display name; rejects with "unknown node: <idOrName>". */
  get(idOrName: string): Promise<NodeHandle>;
};
`;

const SKILLS_API = `/** A skill as skills.list() reports it. */
type SkillSummary = { name: string; description: string };
/** A skill: a Markdown document with a description. */
type Skill = { name: string; description: string; content: string };

/**
 * Skills of this session and of its tenant; a session's skill shadows the tenant's of the same
 * name. Each call is a nested tool call (skills.list, skills.read) under the session's tool
 * policy. Both are replay-safe, so restartSafe cells may call them.
 */
declare const skills: {
  /** Every skill's name and description, sorted by name. */
  list(): Promise<SkillSummary[]>;
  /** One skill with its content; rejects with "unknown skill: <name>" when there is none. */
  read(name: string): Promise<Skill>;
};
`;

const AGENTS_API = `/**
 * Sub-agents run by the platform (this session has agents: true).
 */
declare const agents: {
  /**
   * Runs a sub-agent with input and resolves with what the platform answers. A call named
   * agents.run that the platform answers (POST …/tool-results): the exec returns "waiting" with it
   * in pendingToolCalls, and a later wait goes on with the answer; in an awaitResults cell the
   * call stays in flight until it is answered. Not replay-safe.
   */
  run(input: unknown): Promise<unknown>;
};
`;

export interface PlatformApiFile {
  readonly path: string;
  readonly description: string;
  readonly content: string;
}

/** The platform surfaces' declaration files of a session. */
export function platformApiFiles(options: { agents: boolean }): PlatformApiFile[] {
  const files: PlatformApiFile[] = [
    { path: NODES_API_PATH, description: 'The nodes surface: paired nodes of the tenant and their commands.', content: NODES_API },
    { path: SKILLS_API_PATH, description: "The skills surface: the tenant's and the session's Markdown skills.", content: SKILLS_API },
  ];
  if (options.agents) {
    files.push({ path: AGENTS_API_PATH, description: 'The agents surface: sub-agents run by the platform.', content: AGENTS_API });
  }
  return files;
}
