import type { CodeModeOutput } from '@codemode/contracts';
import { ConsoleBudget } from '@codemode/cells';
import { OUT_CONSOLE, OUT_JSON, OUT_TEXT } from '../guest/prelude';

/** What a parked run's output budget had spent (its image); entries were handed out already. */
export interface LegOutputState {
  bytes: number;
  consoleUsed: number;
  consoleTruncated: boolean;
}

/** What a run's legs print, held until the leg's outcome hands it out. */
export class LegOutput {
  private entries: CodeModeOutput[] = [];
  private consoleBudget = new ConsoleBudget();
  private bytes = 0;

  constructor(private readonly maxOutputBytes: number) {}

  state(): LegOutputState {
    return { bytes: this.bytes, consoleUsed: this.consoleBudget.used, consoleTruncated: this.consoleBudget.truncated };
  }

  /** Goes on from a parked run's image. */
  load(state: LegOutputState): void {
    this.bytes = state.bytes;
    this.consoleBudget = ConsoleBudget.resume(state.consoleUsed, state.consoleTruncated);
  }

  /** Console entries hit the per-run cap (SPEC §3 Output). */
  get consoleTruncated(): boolean {
    return this.consoleBudget.truncated;
  }

  add(kind: number, text: string): void {
    if (kind === OUT_CONSOLE) {
      this.entries.push(...this.consoleBudget.accept(text));
      return;
    }
    // Bound what the thread holds: past maxOutputBytes (shared by all legs) the result builder cuts anyway.
    if (this.bytes > this.maxOutputBytes) return;
    this.bytes += Buffer.byteLength(text, 'utf8') + 24;
    if (kind === OUT_TEXT) this.entries.push({ type: 'text', text });
    else if (kind === OUT_JSON) this.entries.push({ type: 'json', value: JSON.parse(text) as unknown });
  }

  /** This leg's entries so far, kept (a rescue image carries them). */
  peek(): CodeModeOutput[] {
    return [...this.entries];
  }

  /** A rescued leg's entries, handed out with this leg's. */
  carry(entries: CodeModeOutput[]): void {
    this.entries = [...entries, ...this.entries];
  }

  /** This leg's entries, handed out once. */
  take(): CodeModeOutput[] {
    const entries = this.entries;
    this.entries = [];
    return entries;
  }
}
