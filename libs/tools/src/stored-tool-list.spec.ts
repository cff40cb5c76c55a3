import { EventLoopSlices } from './core/event-loop-slices';
import { readStoredToolList, StoredToolListError } from './stored-tool-list';

const slices = new EventLoopSlices();

/** Tools whose descriptions and schemas hold every character the scan must step over. */
function tricky(count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `tool_${i}`,
    description: `braces { [ ] } , quotes " and \\" escapes \\\\ \u00e9 ${'x'.repeat(2000)}`,
    inputSchema: {
      type: 'object',
      properties: { [`p"${i}`]: { type: 'string', enum: ['}', ']', '\\', '"'] }, nested: { items: [[], {}] } },
    },
    endpoint: 'https://tools.example.invalid/hook',
    registeredBy: i % 2 ? 'agent' : 'operator',
  }));
}

test('a large list is read tool by tool and equals JSON.parse of it', async () => {
  const list = tricky(200);
  const bytes = Buffer.from(JSON.stringify(list));
  expect(bytes.length).toBeGreaterThan(64 * 1024);
  expect(await readStoredToolList(bytes, slices)).toEqual(list);
});

test('a small list and an empty one are parsed whole', async () => {
  expect(await readStoredToolList(Buffer.from(JSON.stringify(tricky(2))), slices)).toEqual(tricky(2));
  expect(await readStoredToolList(Buffer.from('[]'), slices)).toEqual([]);
});

test('bytes that are not an array of tools are refused, never half-read', async () => {
  const notArray = Buffer.from(JSON.stringify({ tools: tricky(200) }));
  await expect(readStoredToolList(notArray, slices)).rejects.toThrow(StoredToolListError);
  const cut = Buffer.from(JSON.stringify(tricky(200))).subarray(0, 100_000);
  await expect(readStoredToolList(cut, slices)).rejects.toThrow(
    'the stored client tool list is not a JSON array; register the tools again',
  );
});

test('reading 11 MB of many-property schemas yields to the event loop while it works', async () => {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 1000; i += 1) properties[`p${i}`] = { type: 'string', description: 'x'.repeat(20) };
  const list = Array.from({ length: 170 }, (_, i) => ({
    name: `t${i}`,
    description: 'd'.repeat(8000),
    inputSchema: { type: 'object', properties },
  }));
  const bytes = Buffer.from(JSON.stringify(list));
  // One JSON.parse of it takes ~240 ms: read in 8 ms slices, other work gets turns all along.
  let turns = 0;
  let reading = true;
  const tick = (): void => {
    turns += 1;
    if (reading) setImmediate(tick);
  };
  setImmediate(tick);
  const tools = await readStoredToolList(bytes, slices);
  reading = false;
  expect(tools).toHaveLength(170);
  expect(tools[169]).toEqual(list[169]);
  expect(turns).toBeGreaterThanOrEqual(5);
});
