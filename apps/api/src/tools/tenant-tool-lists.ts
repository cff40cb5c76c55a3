import { Injectable } from '@nestjs/common';
import { tenantToolView, type TenantTool } from '@codemode/contracts';
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
  /** `GET /v1/tools`'s answer as JSON bytes (header names only), serialized once per version. */
  view: Uint8Array;
}

interface Parsed {
  tools: TenantTool[];
  json: Uint8Array;
  view: Uint8Array;
  bytes: number;
}

const NONE = new Uint8Array(new SharedArrayBuffer(2)).fill(0x5d).fill(0x5b, 0, 1);
const NO_VIEW = Buffer.from('{"tools":[]}');

/**
 * The tenant's tools as the API's catalog views need them, read and parsed once per version
 * (SPEC §10 "Fate isolation"): a call costs one HGET of the version, never a read of the tools
 * (256 of ~136 KB) nor a serialization of them. Kept in a `DerivedCatalogs`, bounded per tenant and in all.
 */
@Injectable()
export class TenantToolLists {
  private readonly lists = new DerivedCatalogs<Parsed>((parsed) => parsed.bytes);

  constructor(private readonly ledger: TenantToolsLedger) {}

  async current(tenant: string): Promise<TenantToolList> {
    const version = await this.ledger.version(tenant);
    if (version === '') return { version, tools: [], json: NONE, view: NO_VIEW };
    const parsed = await this.lists.get(tenant, version, async () => {
      const read = await this.ledger.read(tenant);
      const tools = await readTenantToolList(read.tools, SHARED_SLICES);
      const json = sharedJsonArray(read.tools.map(([, value]) => value));
      const view = await viewJson(tools);
      return { tools, json, view, bytes: json.byteLength + view.byteLength + tools.length * 1024 };
    });
    return { version, tools: parsed.tools, json: parsed.json, view: parsed.view };
  }
}

/** `{"tools":[…]}` without the sealed values, serialized a tool at a time in slices of the event loop (256 tools of ~136 KB). */
async function viewJson(tools: readonly TenantTool[]): Promise<Uint8Array> {
  const parts: Buffer[] = [Buffer.from('{"tools":[')];
  for (const [i, tool] of tools.entries()) {
    await SHARED_SLICES.pause();
    parts.push(Buffer.from(`${i > 0 ? ',' : ''}${JSON.stringify(tenantToolView(tool))}`));
  }
  parts.push(Buffer.from(']}'));
  return Buffer.concat(parts);
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
