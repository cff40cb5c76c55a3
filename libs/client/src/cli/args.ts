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
  );

type CommandName = 'exec' | 'wait' | 'events' | 'shell' | 'tools' | 'mcp';

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
} as const satisfies Record<string, { type: 'string' | 'boolean'; short?: string; for?: readonly CommandName[] }>;

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
  --until <type>       events: stop after the first event of this type (e.g. run.completed)
  --workdir <dir>      shell: working directory inside the workspace
  --background         shell: start in the background and print the process session id
  --yield-ms <ms>      shell: background the command if still running after this long
  -h, --help           show this help

Exit codes: 0 completed (or left waiting with --no-wait, or backgrounded), 1 failed (the cell or
command failed, an HTTP error, or the API is unreachable), 2 usage error, 130 interrupted.
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
  }
}

function parseWith(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
}

function isCommand(name: string | undefined): name is CommandName {
  return name === 'exec' || name === 'wait' || name === 'events' || name === 'shell' || name === 'tools' || name === 'mcp';
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
