import { Injectable } from '@nestjs/common';
import type { TenantTool } from '@codemode/contracts';
import { TenantToolsLedger } from '@codemode/events';
import { readTenantToolList, SHARED_SLICES } from '@codemode/tools';
import { DerivedCatalogs } from './derived-catalogs';

/** The tenant's tools (SPEC §18) at a version: what every session's catalog view is built with. */
export interface TenantToolList {
  /** '' when the tenant never stored one. */
  version: string;
  tools: TenantTool[];
}

interface Parsed {
  tools: TenantTool[];
  bytes: number;
}

/**
 * The tenant's tools as the API's catalog views need them, read and parsed once per version
 * (SPEC §10 "Fate isolation"): a call costs one HGET of the version, never a read of the tools
 * (256 of ~136 KB). Kept in a `DerivedCatalogs`, bounded per tenant and in all.
 */
@Injectable()
export class TenantToolLists {
  private readonly lists = new DerivedCatalogs<Parsed>((parsed) => parsed.bytes);

  constructor(private readonly ledger: TenantToolsLedger) {}

  async current(tenant: string): Promise<TenantToolList> {
    const version = await this.ledger.version(tenant);
    if (version === '') return { version, tools: [] };
    const parsed = await this.lists.get(tenant, version, async () => {
      const read = await this.ledger.read(tenant);
      const bytes = read.tools.reduce((sum, [name, json]) => sum + name.length * 2 + json.length, 0);
      return { tools: await readTenantToolList(read.tools, SHARED_SLICES), bytes };
    });
    return { version, tools: parsed.tools };
  }
}
