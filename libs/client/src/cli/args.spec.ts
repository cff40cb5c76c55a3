import { DEFAULT_URL, parseCli } from './args';
import { UsageError } from './errors';

const parse = (argv: string[], env = {}) => parseCli(argv, env);

describe('parseCli', () => {
  it('parses exec with defaults from the environment and the file name', () => {
    expect(parse(['exec', 'cells/demo.js'], { CODEMODE_URL: 'http://api:8080/', CODEMODE_API_KEY: 'k1' })).toEqual({
      kind: 'exec',
      source: 'cells/demo.js',
      sessionId: 'cli',
      title: 'demo.js',
      follow: true,
      url: 'http://api:8080',
      apiKey: 'k1',
      json: false,
    });
  });

  it('lets flags override the environment, anywhere on the line', () => {
    const cmd = parse(['--url', 'http://x:1', 'exec', '-', '-s', 's1', '--no-wait', '--key', 'k2', '--title', 'T', '--json'], {
      CODEMODE_URL: 'http://ignored',
    });
    expect(cmd).toMatchObject({
      kind: 'exec',
      source: '-',
      sessionId: 's1',
      follow: false,
      url: 'http://x:1',
      apiKey: 'k2',
      title: 'T',
      json: true,
    });
    expect(parse(['exec', '-'])).toMatchObject({ title: 'stdin', url: DEFAULT_URL, apiKey: undefined });
  });

  it('parses wait, events, tools and help', () => {
    expect(parse(['wait', 'cm_1', '--session', 's2'])).toMatchObject({ kind: 'wait', runId: 'cm_1', sessionId: 's2', follow: true });
    expect(parse(['events', 's1', '-f', '--after', '1-0', '--until', 'run.completed'])).toMatchObject({
      kind: 'events',
      sessionId: 's1',
      follow: true,
      after: '1-0',
      until: 'run.completed',
    });
    expect(parse(['events', 's1'])).toMatchObject({ follow: false, after: undefined, until: undefined });
    expect(parse(['tools', 'put', 's1', 'tools.json'])).toMatchObject({ kind: 'tools-put', sessionId: 's1', file: 'tools.json' });
    expect(parse(['tools', 'get', 's1'])).toMatchObject({ kind: 'tools-get', sessionId: 's1' });
    expect(parse(['exec', 'x.js', '-h'])).toMatchObject({ kind: 'help' });
  });

  it('takes everything after -- as the shell command, flags included', () => {
    expect(parse(['shell', 's1', '--background', '--yield-ms', '500', '--', 'ls', '-la', '--', 'x'])).toMatchObject({
      kind: 'shell',
      sessionId: 's1',
      command: 'ls -la -- x',
      background: true,
      yieldMs: 500,
      workdir: undefined,
    });
  });

  it.each([
    [[], 'missing command.'],
    [['frob'], 'unknown command "frob".'],
    [['exec'], 'exec needs <file|->.'],
    [['exec', 'a.js', 'b.js'], 'exec takes <file|->; unexpected "b.js".'],
    [['exec', 'a.js', '--follow'], 'option --follow does not apply to "exec".'],
    [['events', 's1', '-s', 'x'], 'option -s does not apply to "events".'],
    [['events', 's1', '--until', 'run.done'], /^--until must be an event type: session\.configured/],
    [['events', 's1', '--bogus'], /Unknown option '--bogus'/],
    [['events', 's1', '--after'], /argument missing/],
    [['shell', 's1'], /needs a command after --/],
    [['shell', 's1', '--yield-ms', 'soon', '--', 'ls'], '--yield-ms must be a whole number of milliseconds.'],
    [['tools', 'list', 's1'], 'unknown tools action "list"; use put or get.'],
    [['tools', 'put', 's1'], 'tools put needs <tools.json>.'],
    [['wait', 'cm_1', '--', 'x'], '"wait" takes no arguments after --.'],
    [['exec', 'a.js', '--title', '  '], '--title must not be blank.'],
    [['node'], 'node needs --name <name>.'],
    [['node', '--name', 'lab', '--allow', 'rm'], '--allow takes fs.listDir or system.run; got "rm".'],
    [['node', '--name', 'lab', '--command', 'noexe='], '--command takes <name>=<executable>; got "noexe=".'],
    [['exec', 'a.js', '--name', 'lab'], 'option --name does not apply to "exec".'],
  ])('refuses %j as a usage error', (argv, message) => {
    const attempt = () => parse(argv);
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(message);
  });

  it('cuts a long default title to the 120 characters the API accepts', () => {
    const cmd = parse(['exec', `${'a'.repeat(200)}.js`]);
    expect(cmd.kind === 'exec' && cmd.title.length).toBe(120);
  });

  it('parses codemode node: repeated --allow and --command, --root alone serving fs.listDir', () => {
    const cmd = parse([
      'node',
      '--name',
      'lab',
      '--allow',
      'system.run',
      '--command',
      'a=/bin/a',
      '--command',
      'b=/bin/b',
      '--root',
      '/srv',
    ]);
    expect(cmd).toMatchObject({
      kind: 'node',
      name: 'lab',
      allow: ['system.run', 'fs.listDir'],
      root: '/srv',
      commands: new Map([
        ['a', '/bin/a'],
        ['b', '/bin/b'],
      ]),
    });
    expect(parse(['node', '--name', 'lab'])).toMatchObject({ allow: [], root: '.' });
  });
});
