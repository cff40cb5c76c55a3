import type { TenantTool } from '@codemode/contracts';
import type { TenantToolsLedger } from '@codemode/events';
import type { HeaderVault } from '@codemode/tools';

/** What `npm run secrets:rotate` did. */
export interface RotationReport {
  /** Values sealed again under the current key. */
  resealed: number;
  /** Values under the current key already. */
  current: number;
  /** Tools changed by a PUT while they were rotated: that PUT sealed them under the current key. */
  raced: number;
  /** Values no configured key opens, as `tenant/tool` (never a value): their headers must be registered again. */
  unreadable: string[];
}

/**
 * SPEC §18 rotation: every tenant tool's sealed headers opened (under `CODEMODE_SECRETS_KEY` or
 * `_PREVIOUS`) and sealed again under the current key, each written only over the JSON it was
 * read as (`TenantToolsLedger.replace`), so a PUT meanwhile is never undone. Values are opened
 * in this process's memory only; nothing is logged but counts and names.
 */
export async function rotateTenantToolHeaders(ledger: TenantToolsLedger, vault: HeaderVault): Promise<RotationReport> {
  const report: RotationReport = { resealed: 0, current: 0, raced: 0, unreadable: [] };
  for await (const tenant of ledger.tenants()) {
    const { tools } = await ledger.read(tenant);
    for (const [name, bytes] of tools) {
      const read = bytes.toString('utf8');
      const tool = JSON.parse(read) as TenantTool;
      if (tool.sealedHeaders === undefined) continue;
      if (vault.isCurrent(tool.sealedHeaders)) {
        report.current += 1;
        continue;
      }
      const binding = { tenant, tool: name, endpoint: tool.endpoint };
      let headers: Record<string, string>;
      try {
        headers = vault.open(tool.sealedHeaders, binding);
      } catch {
        report.unreadable.push(`${tenant}/${name}`);
        continue;
      }
      const resealed = JSON.stringify({ ...tool, sealedHeaders: vault.seal(headers, binding) });
      if (await ledger.replace(tenant, name, resealed, read)) report.resealed += 1;
      else report.raced += 1;
    }
  }
  return report;
}
