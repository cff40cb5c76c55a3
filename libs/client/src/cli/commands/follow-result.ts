import type { CodeModeResult } from '@codemode/contracts';
import { ExitCode, exitCodeForResult, type ExitCodeValue } from '../exit-codes';
import type { CommandContext } from '../context';
import { renderJson, renderResult } from '../output';
import { Spinner } from '../spinner';
import { awaitsPlatformAnswers, renderPlatformAnswersNeeded } from './platform-answers';

/**
 * Prints a result and, while it is `waiting` and `follow` is set, calls `wait` and prints each
 * answer, until the run completes or fails. A `wait` that times out on the server answers
 * `waiting` again, so the loop is also how a long park is sat out; the same waiting note is
 * printed once, not once per budget. A run only the platform's answers can move (its pending calls
 * are platform calls nobody answered) is not waited on: the calls and how to answer them are
 * printed and the CLI exits 3 (ExitCode.awaitsPlatform). The spinner runs during every call, the first included
 * (an exec can itself take up to its budget), and counts from the first call.
 */
export async function followResult(
  ctx: CommandContext,
  sessionId: string,
  first: { label: string; call: (signal: AbortSignal) => Promise<CodeModeResult> },
  follow: boolean,
): Promise<ExitCodeValue> {
  const { client, io } = ctx;
  const spinner = new Spinner(io.stderr);
  const since = Date.now();
  spinner.start(first.label, since);
  let result: CodeModeResult;
  try {
    result = await first.call(io.signal);
  } finally {
    spinner.stop();
  }
  let lastNote = '';
  for (;;) {
    if (ctx.json) {
      io.stdout.write(renderJson(result));
    } else {
      const rendered = renderResult(result);
      io.stdout.write(rendered.stdout);
      const repeated = result.status === 'waiting' && rendered.stderr === lastNote;
      if (!repeated) io.stderr.write(rendered.stderr);
      lastNote = result.status === 'waiting' ? rendered.stderr : '';
    }
    if (result.status !== 'waiting') return exitCodeForResult(result);
    const runId = result.runId;
    if (!follow) {
      // --no-wait: the runId on stdout is what a script needs to resume with `codemode wait`.
      if (!ctx.json) io.stdout.write(`${runId}\n`);
      return ExitCode.ok;
    }
    // SPEC §18: only the platform can move such a run; a wait would answer the same, so say what to do instead.
    if (await awaitsPlatformAnswers(client, sessionId, result)) {
      io.stderr.write(renderPlatformAnswersNeeded(sessionId, result));
      return ExitCode.awaitsPlatform;
    }
    spinner.start(`waiting for ${runId} (${result.reason})`, since);
    try {
      result = await client.wait(sessionId, runId, { signal: io.signal });
    } catch (error) {
      if (!io.signal.aborted) throw error;
      io.stderr.write(`interrupted; run ${runId} is left as it was. Resume it with: codemode wait ${runId} -s ${sessionId}\n`);
      return ExitCode.interrupted;
    } finally {
      spinner.stop();
    }
  }
}
