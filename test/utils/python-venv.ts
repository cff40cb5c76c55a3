import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The Python client's sources (SPEC §18). */
export const PYTHON_CLIENT_DIR = join(__dirname, '../../clients/python');

export interface ProcessRun {
  code: number | null;
  output: string;
}

/**
 * Runs a command to its end, stdout and stderr interleaved as they came. It inherits the machine's
 * pip settings (PIP_*, XDG_* where pip finds its configuration), never CODEMODE_*.
 */
export function runProcess(command: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: {
        ...pipSettings(),
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        PIP_DISABLE_PIP_VERSION_CHECK: '1',
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error(`${command} is not installed (not found on PATH); the Python client's tests need python3 and python3-venv.`)
          : error,
      ),
    );
    child.on('close', (code) => resolve({ code, output }));
  });
}

function pipSettings(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => /^(PIP|XDG)_/.test(entry[0]) && entry[1] !== undefined),
  );
}

/**
 * A virtual environment in a temporary folder (outside the repository) with `codemode-client`
 * installed from a copy of clients/python, its dependencies and pytest pinned by its
 * constraints.txt, from the package index pip is configured with.
 */
export class PythonVenv {
  private constructor(
    readonly dir: string,
    /** The copy of clients/python the package was installed from; its tests run from here. */
    readonly sourceDir: string,
  ) {}

  get python(): string {
    return join(this.dir, 'venv/bin/python');
  }

  static async create(): Promise<PythonVenv> {
    const dir = mkdtempSync(join(tmpdir(), 'codemode-python-'));
    const venv = new PythonVenv(dir, join(dir, 'codemode-client'));
    try {
      const made = await runProcess('python3', ['-m', 'venv', join(dir, 'venv')], { cwd: dir });
      if (made.code !== 0) {
        throw new Error(
          `python3 -m venv failed (exit ${made.code}); the Python client's tests need it: on Debian/Ubuntu install ` +
            `the python3-venv package (apt-get install -y python3-venv).\n${made.output}`,
        );
      }
      // A copy, so the build writes nothing into the repository and the tests import the install.
      cpSync(PYTHON_CLIENT_DIR, venv.sourceDir, {
        recursive: true,
        filter: (src) => !/(^|\/)(build|__pycache__|\.pytest_cache|[^/]*\.egg-info)$/.test(src),
      });
      const env = { ...(await pipIndexEnv()), PIP_CONSTRAINT: join(venv.sourceDir, 'constraints.txt') };
      const installed = await runProcess(venv.python, ['-m', 'pip', 'install', '--quiet', `${venv.sourceDir}[test]`], { cwd: dir, env });
      if (installed.code !== 0) throw new Error(`pip install of clients/python failed (exit ${installed.code}):\n${installed.output}`);
      return venv;
    } catch (error) {
      venv.remove();
      throw error;
    }
  }

  /** pytest over the copied tests against `env`'s service; `-p no:cacheprovider` writes nothing beside them. */
  pytest(env: Record<string, string>): Promise<ProcessRun> {
    return runProcess(this.python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], { cwd: this.sourceDir, env });
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Where pip looks for packages. A machine whose pip configuration names its (local) indexes only
 * as extra indexes would still ask PyPI first for every package, and wait out its retries when
 * PyPI is unreachable; there the first configured extra index becomes the index. A configured
 * index, or no configuration, is left to pip.
 */
async function pipIndexEnv(): Promise<Record<string, string>> {
  const listed = await runProcess('python3', ['-m', 'pip', 'config', 'list'], { cwd: tmpdir() });
  const value = (key: string): string | undefined =>
    listed.output
      .split('\n')
      .map((line) => /^[^=]*\.([a-z-]+)='(.*)'$/.exec(line.trim()))
      .find((match) => match?.[1] === key)?.[2];
  if (value('index-url') !== undefined) return {};
  const extra = value('extra-index-url')?.split(/\s+/)[0];
  return extra ? { PIP_INDEX_URL: extra } : {};
}
