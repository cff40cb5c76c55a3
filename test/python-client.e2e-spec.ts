import { PythonVenv } from './utils/python-venv';
import { TestStack } from './utils/test-stack';

// Creating the venv (ensurepip) and installing take most of it; both are slower on a busy machine.
jest.setTimeout(180_000);

const API_KEY = 'py-client-key';

describe('Python client (clients/python, SPEC §18)', () => {
  let stack: TestStack;
  let venv: PythonVenv;

  beforeAll(async () => {
    // Side by side; allSettled so that afterAll finds whatever did start when the other failed.
    const [started, created] = await Promise.allSettled([
      TestStack.start({ apiKeys: `${API_KEY}:pyclient` }).then((s) => (stack = s)),
      PythonVenv.create().then((v) => (venv = v)),
    ]);
    for (const outcome of [started, created]) if (outcome.status === 'rejected') throw outcome.reason;
  });
  afterAll(async () => {
    venv?.remove();
    await stack?.stop();
  });

  it('installs into a venv outside the repository and passes its pytest suite against the live service', async () => {
    const run = await venv.pytest({ CODEMODE_URL: stack.baseUrl, CODEMODE_API_KEY: API_KEY });
    if (run.code !== 0) throw new Error(`pytest exited ${run.code}:\n${run.output}`);
    // Every test ran: pytest's summary counts only passes (and warnings), nothing skipped or
    // deselected, so a suite that silently did nothing fails here.
    const summary = /^(\d+ passed.*) in [\d.]+s/m.exec(run.output)?.[1];
    expect(summary).toMatch(/^\d+ passed(, \d+ warnings?)?$/);
  });
});
