import type { CodeModeOutput } from '@codemode/contracts';

/** Run-wide console cap in UTF-16 units (SPEC §3 Output). */
export const CONSOLE_CAP_UNITS = 16384;
export const CONSOLE_TRUNCATED_TEXT = '[console output truncated]';

/**
 * Run-wide console cap. Each entry costs the UTF-16 length of `JSON.stringify({type:'text',text})`;
 * an entry that would take the total over 16384 units is replaced by exactly one
 * `[console output truncated]` entry, and every later console call is ignored. The cap counts UTF-16
 * units (not bytes) because the guest enforces it cheaply before anything crosses to the host;
 * `text()`/`json()` are not console calls and do not draw on it. Keep one instance per run (it must
 * survive parks and waits).
 */
export class ConsoleBudget {
  private usedUnits = 0;
  private cut = false;

  /** A budget that goes on from what a parked run had spent (its image). */
  static resume(used: number, truncated: boolean): ConsoleBudget {
    const budget = new ConsoleBudget();
    budget.usedUnits = used;
    budget.cut = truncated;
    return budget;
  }

  /** True once the cap was hit; later `accept` calls return nothing. */
  get truncated(): boolean {
    return this.cut;
  }

  /** Units already spent on accepted entries (the marker is not counted). */
  get used(): number {
    return this.usedUnits;
  }

  /** The output entries one console message turns into: itself, the marker once, or nothing. */
  accept(text: string): CodeModeOutput[] {
    if (this.cut) return [];
    const entry: CodeModeOutput = { type: 'text', text };
    const cost = JSON.stringify(entry).length;
    if (this.usedUnits + cost > CONSOLE_CAP_UNITS) {
      this.cut = true;
      return [{ type: 'text', text: CONSOLE_TRUNCATED_TEXT }];
    }
    this.usedUnits += cost;
    return [entry];
  }
}
