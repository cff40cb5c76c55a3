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
  /**
   * The same tools as one JSON array, in shared memory: what a body thread is sent instead of the
   * objects, which postMessage would clone on the event loop (~0.5 s for 256 tools at the caps).
   */
  json: Uint8Array;
}

interface Parsed {
  tools: TenantTool[];
  json: Uint8Array;
  bytes: number;
}

const NONE = new Uint8Array(new SharedArrayBuffer(2)).fill(0x5d).fill(0x5b, 0, 1);

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
    if (version === '') return { version, tools: [], json: NONE };
    const parsed = await this.lists.get(tenant, version, async () => {
      const read = await this.ledger.read(tenant);
      const tools = await readTenantToolList(read.tools, SHARED_SLICES);
      const json = sharedJsonArray(read.tools.map(([, value]) => value));
      return { tools, json, bytes: json.byteLength * 2 + read.tools.reduce((sum, [name]) => sum + name.length * 2, 0) };
    });
    return { version, tools: parsed.tools, json: parsed.json };
  }
}

/** `[a,b,…]` of stored JSON values, copied once into shared memory (a memcpy per tool, never re-encoded). */
function sharedJsonArray(values: readonly Buffer[]): Uint8Array {
  const length = values.reduce((sum, value) => sum + value.length, 0) + Math.max(values.length - 1, 0) + 2;
  const out = Buffer.from(new SharedArrayBuffer(length));
  let at = out.write('[');
  values.forEach((value, i) => {
    if (i > 0) at += out.write(',', at);
    at += value.copy(out, at);
  });
  out.write(']', at);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
