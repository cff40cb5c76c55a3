import { parseArgs } from 'node:util';
import { EVENT_TYPES, type EventType } from '@codemode/contracts';
import { UsageError } from './errors';

export const DEFAULT_URL = 'http://127.0.0.1:3000';
export const DEFAULT_SESSION = 'cli';
/** The API refuses longer titles (SPEC §3); a long file name is cut rather than refused. */
const MAX_TITLE_CHARS = 120;

/** The environment variables the CLI reads; passed in so parsing stays a pure function. */
export interface CliEnv {
  CODEMODE_URL?: string;
  CODEMODE_API_KEY?: string;
}

export interface GlobalOptions {
  url: string;
  apiKey: string | undefined;
  json: boolean;
}

export type CliCommand = GlobalOptions &
  (
    | { kind: 'help' }
    | { kind: 'exec'; source: string; sessionId: string; title: string; follow: boolean }
    | { kind: 'wait'; runId: string; sessionId: string; follow: boolean }
    | { kind: 'events'; sessionId: string; follow: boolean; after: string | undefined; until: EventType | undefined }
    | { kind: 'shell'; sessionId: string; command: string; workdir: string | undefined; background: boolean; yieldMs: number | undefined }
    | { kind: 'tools-put'; sessionId: string; file: string }
    | { kind: 'tools-get'; sessionId: string }
    | { kind: 'mcp'; sessionId: string }
    | { kind: 'node'; name: string; allow: string[]; root: string; commands: Map<string, string> }
  );

type CommandName = 'exec' | 'wait' | 'events' | 'shell' | 'tools' | 'mcp' | 'node';

/** Every flag, with the commands it applies to (undefined: all). */
const OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  session: { type: 'string', short: 's', for: ['exec', 'wait', 'mcp'] },
  title: { type: 'string', for: ['exec'] },
  'no-wait': { type: 'boolean', for: ['exec', 'wait'] },
  follow: { type: 'boolean', short: 'f', for: ['events'] },
  after: { type: 'string', for: ['events'] },
  until: { type: 'string', for: ['events'] },
  workdir: { type: 'string', for: ['shell'] },
  background: { type: 'boolean', for: ['shell'] },
  'yield-ms': { type: 'string', for: ['shell'] },
  name: { type: 'string', for: ['node'] },
  allow: { type: 'string', multiple: true, for: ['node'] },
  root: { type: 'string', for: ['node'] },
  command: { type: 'string', multiple: true, for: ['node'] },
} as const satisfies Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean; for?: readonly CommandName[] }>;

/** What `codemode node --allow` may name: the built-ins beyond device.status. */
const NODE_ALLOWABLE = ['fs.listDir', 'system.run'];

export const USAGE = `Usage: codemode <command> [options]

Commands:
  exec <file|->                  run a cell (JavaScript from a file, or stdin with -); follows
                                 "waiting" with wait until the run ends
  wait <runId>                   resume a parked run and follow it until it ends
  events <sid> [--follow]        list a session's events, one per line; --follow tails them live
  shell <sid> -- <command...>    run a shell command in the session's workspace
  tools put <sid> <tools.json>   replace the session's client tools ({"tools":[...]} or [...])
  tools get <sid>                show the session's tool catalog
  mcp                            serve exec and wait as an MCP server on stdio (for desktop MCP
                                 clients), forwarding to the API; its messages go to stderr
  node --name <name>             pair this machine as a node of the key's tenant and serve its
                                 commands to cells (device.status; see --allow, --command)

Options:
  --url <url>          API base URL (env CODEMODE_URL, default ${DEFAULT_URL})
  --key <key>          API key (env CODEMODE_API_KEY)
  --json               print raw JSON answers (one line each) instead of text
  -s, --session <sid>  exec/wait/mcp: the session (default "${DEFAULT_SESSION}")
  --title <title>      exec: the cell's title (default the file name)
  --no-wait            exec/wait: do not follow a "waiting" result; print it (with its runId)
                       and exit 0, so "codemode wait <runId>" can resume later
  -f, --follow         events: keep streaming new events (Ctrl-C ends it)
  --after <eventId>    events: start after this event id
  --until <type>       events: stop after the first new event of this type (e.g. run.completed);
                       with --follow and no --after, events already in the log do not count
  --workdir <dir>      shell: working directory inside the workspace
  --background         shell: start in the background and print the process session id
  --yield-ms <ms>      shell: background the command if still running after this long
  --allow <command>    node: also serve fs.listDir (under --root) or system.run (commands
                       under this user); repeat for both
  --root <dir>         node: the directory fs.listDir serves (default: the current one)
  --command <n>=<exe>  node: serve command n by running exe (params as JSON on stdin, a JSON
                       result on stdout); repeat for more
  -h, --help           show this help

Exit codes: 0 completed (or left waiting with --no-wait, or backgrounded), 1 failed (the cell or
command failed, an HTTP error, or the API is unreachable), 2 usage error, 3 the run waits for
the platform's answers to its pending tool calls (post them to …/runs/<runId>/tool-results, then
codemode wait <runId>), 130 interrupted.
`;

/** Parses argv (without node and the script); throws UsageError for anything malformed. */
export function parseCli(argv: string[], env: CliEnv): CliCommand {
  let parsed: ReturnType<typeof parseWith>;
  try {
    parsed = parseWith(argv);
  } catch (error) {
    // parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes and readable messages.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals, tokens } = parsed;
  const global: GlobalOptions = {
    url: (values.url ?? env.CODEMODE_URL ?? DEFAULT_URL).replace(/\/+$/, ''),
    apiKey: values.key ?? (env.CODEMODE_API_KEY || undefined),
    json: values.json ?? false,
  };
  if (values.help) return { ...global, kind: 'help' };
  if (positionals.length === 0) throw new UsageError('missing command.');

  const terminator = tokens.find((t) => t.kind === 'option-terminator')?.index;
  // Positionals after `--` are the shell command; they are never command names or arguments.
  const before = tokens
    .filter((t) => t.kind === 'positional' && (terminator === undefined || t.index < terminator))
    .map((t) => (t as { value: string }).value);
  const after = tokens
    .filter((t) => t.kind === 'positional' && terminator !== undefined && t.index > terminator)
    .map((t) => (t as { value: string }).value);
  const [name, ...args] = before;
  if (!isCommand(name)) throw new UsageError(`unknown command "${name}".`);
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const spec = OPTIONS[token.name] as { for?: readonly CommandName[] };
    if (spec.for && !spec.for.includes(name)) throw new UsageError(`option ${token.rawName} does not apply to "${name}".`);
  }
  if (name !== 'shell' && after.length > 0) throw new UsageError(`"${name}" takes no arguments after --.`);

  const sessionId = values.session ?? DEFAULT_SESSION;
  const follow = !values['no-wait'];
  switch (name) {
    case 'exec': {
      const [source] = exactly(args, ['file|-'], name);
      const title = values.title ?? (source === '-' ? 'stdin' : baseName(source));
      if (title.trim() === '') throw new UsageError('--title must not be blank.');
      return { ...global, kind: 'exec', source, sessionId, title: title.slice(0, MAX_TITLE_CHARS), follow };
    }
    case 'wait': {
      const [runId] = exactly(args, ['runId'], name);
      return { ...global, kind: 'wait', runId, sessionId, follow };
    }
    case 'events': {
      const [sid] = exactly(args, ['sid'], name);
      return {
        ...global,
        kind: 'events',
        sessionId: sid,
        follow: values.follow ?? false,
        after: values.after,
        until: eventType(values.until),
      };
    }
    case 'shell': {
      const [sid] = exactly(args, ['sid'], name);
      if (after.length === 0) throw new UsageError('shell needs a command after --, e.g. codemode shell s1 -- ls -la');
      return {
        ...global,
        kind: 'shell',
        sessionId: sid,
        command: after.join(' '),
        workdir: values.workdir,
        background: values.background ?? false,
        yieldMs: milliseconds(values['yield-ms']),
      };
    }
    case 'tools': {
      const [action, ...rest] = args;
      if (action === 'put') {
        const [sid, file] = exactly(rest, ['sid', 'tools.json'], 'tools put');
        return { ...global, kind: 'tools-put', sessionId: sid, file };
      }
      if (action === 'get') {
        const [sid] = exactly(rest, ['sid'], 'tools get');
        return { ...global, kind: 'tools-get', sessionId: sid };
      }
      throw new UsageError(
        action === undefined ? 'tools needs an action: put or get.' : `unknown tools action "${action}"; use put or get.`,
      );
    }
    case 'mcp':
      exactly(args, [], name);
      return { ...global, kind: 'mcp', sessionId };
    case 'node':
      exactly(args, [], name);
      return { ...global, kind: 'node', ...nodeOptions(values) };
  }
}

function parseWith(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
}

function isCommand(name: string | undefined): name is CommandName {
  return (
    name === 'exec' || name === 'wait' || name === 'events' || name === 'shell' || name === 'tools' || name === 'mcp' || name === 'node'
  );
}

function nodeOptions(values: { name?: string; allow?: string[]; root?: string; command?: string[] }) {
  if (values.name === undefined || values.name.trim() === '') throw new UsageError('node needs --name <name>.');
  const allow = values.allow ?? [];
  for (const command of allow) {
    if (!NODE_ALLOWABLE.includes(command)) throw new UsageError(`--allow takes ${NODE_ALLOWABLE.join(' or ')}; got "${command}".`);
  }
  const commands = new Map<string, string>();
  for (const spec of values.command ?? []) {
    const at = spec.indexOf('=');
    if (at <= 0 || at === spec.length - 1) throw new UsageError(`--command takes <name>=<executable>; got "${spec}".`);
    commands.set(spec.slice(0, at), spec.slice(at + 1));
  }
  // --root alone offers fs.listDir too: a root given is a root to serve.
  if (values.root !== undefined && !allow.includes('fs.listDir')) allow.push('fs.listDir');
  return { name: values.name, allow, root: values.root ?? '.', commands };
}

function exactly(args: string[], names: string[], command: string): string[] {
  if (args.length < names.length) throw new UsageError(`${command} needs <${names[args.length]}>.`);
  if (args.length > names.length)
    throw new UsageError(`${command} takes ${names.map((n) => `<${n}>`).join(' ')}; unexpected "${args[names.length]}".`);
  return args;
}

function eventType(value: string | undefined): EventType | undefined {
  if (value === undefined) return undefined;
  if (!(EVENT_TYPES as readonly string[]).includes(value))
    throw new UsageError(`--until must be an event type: ${EVENT_TYPES.join(', ')}.`);
  return value as EventType;
}

function milliseconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError('--yield-ms must be a whole number of milliseconds.');
  return Number(value);
}

function baseName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).pop() ?? path;
}
